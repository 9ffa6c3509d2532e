/**
 * Links from a test instance to its CI service's web pages (API.md 5.4). Instances hold the
 * service's API base URL and the resource as the crate named them; the pages link to the web
 * side. Only http(s) URLs ever become links: crates and CI replies are not trusted to be.
 */

export function safeHref(url: string | null | undefined): string | undefined {
  if (!url) {
    return undefined;
  }
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.toString() : undefined;
  } catch {
    return undefined;
  }
}

/** The web page of the instance's resource on its CI service, or undefined when it cannot be told. */
export function ciResourcePage(type: string, apiUrl: string, resource: string): string | undefined {
  const base = safeHref(apiUrl);
  if (!base) {
    return undefined;
  }
  const api = new URL(base);
  switch (type) {
    case 'github': {
      const web =
        api.hostname === 'api.github.com'
          ? 'https://github.com'
          : `${api.protocol}//${api.host}${api.pathname.replace(/\/api(\/v3)?\/?$/, '')}`.replace(/\/$/, '');
      const match = /repos\/([^/]+)\/([^/]+)\/actions\/workflows\/([^/?#]+)/.exec(resource);
      return safeHref(match ? `${web}/${match[1]}/${match[2]}/actions/workflows/${match[3]}` : web);
    }
    case 'travis': {
      const web = api.hostname.startsWith('api.') ? `${api.protocol}//app.${api.hostname.slice(4)}` : base;
      const slug = decodeURIComponent(/^repo\/(.+)$/.exec(resource)?.[1] ?? '');
      return safeHref(slug.includes('/') ? `${web}/github/${slug}` : web);
    }
    case 'jenkins':
      return safeHref(`${base.replace(/\/$/, '')}/${resource.replace(/^\//, '')}`);
    default:
      return base;
  }
}

/**
 * A URL that may become a link in a page: only http(s). Crates, CI services' answers and the
 * classes that read them are not trusted to give nothing else (`javascript:`, `data:`).
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

/**
 * A build's link as a page shows it: a path of this service (a managed run's log, stored without
 * the service's address) stays a same-site link; any other link as `safeHref` takes it. A path
 * starting `//` or `/\` would leave the site, so it is not one.
 */
export function safeBuildHref(url: string): string | undefined {
  return /^\/(?![/\\])/.test(url) ? url : safeHref(url);
}

/** How many redirect URIs one client may register, and how long each may be (the grant's column). */
export const REDIRECT_URIS = { max: 10, length: 2048 };

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Why a redirect URI cannot be registered, or undefined when it can. An absolute `https` URL, or
 * `http` to the loopback interface (an application on the user's own machine, RFC 8252 7.3); no
 * fragment (RFC 6749 3.1.2) and no user name or password. It is kept exactly as written: requests
 * must name it with the same string, never a prefix, another case or another spelling of it.
 */
export function redirectUriProblem(uri: string): string | undefined {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'is not an absolute URL';
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname))) {
    return 'must be https (or http to localhost, 127.0.0.1 or [::1])';
  }
  if (uri.includes('#')) {
    return 'must not have a fragment';
  }
  if (url.username !== '' || url.password !== '') {
    return 'must not carry a user name or password';
  }
  if (/\s/.test(uri)) {
    return 'must not contain white space';
  }
  return undefined;
}

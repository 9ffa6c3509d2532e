import type { Response } from 'express';

const ALLOW_ORIGIN = 'Access-Control-Allow-Origin';

/**
 * A reply whose content is public (an anonymous read, API.md 5.1, or a badge anybody with its
 * URL may see): a script of any origin may read it (`fetch()` from another site). Always `*`,
 * never with `Access-Control-Allow-Credentials`, and never on a reply that a credential produced:
 * a read with a token, a key or the session cookie (a private workflow's) stays closed.
 */
export function openToAllOrigins(response: Response): void {
  response.setHeader(ALLOW_ORIGIN, '*');
}

/** An error reply: only a read that succeeded is opened to other origins. */
export function closeToOtherOrigins(response: Response): void {
  response.removeHeader(ALLOW_ORIGIN);
}

/**
 * A resource made to be embedded in other sites' pages (a badge as `<img>`): helmet's default
 * `Cross-Origin-Resource-Policy: same-origin` would make browsers refuse it there.
 */
export function embeddableAnywhere(response: Response): void {
  response.setHeader('Cross-Origin-Resource-Policy', 'cross-origin');
}

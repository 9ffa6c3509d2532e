/**
 * True when an `If-None-Match` header matches an entity tag (RFC 9110 13.1.2: `*`, or any
 * listed tag equal under the weak comparison). Unlike Express's `req.fresh`, a request's
 * `Cache-Control: no-cache` does not turn the match off: that directive is for caches, and
 * fetch() adds it to every request that carries its own If-None-Match.
 */
export function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (header === undefined) {
    return false;
  }
  if (header.trim() === '*') {
    return true;
  }
  const opaque = (tag: string): string => tag.trim().replace(/^W\//, '');
  return header.split(',').some((tag) => opaque(tag) === opaque(etag));
}

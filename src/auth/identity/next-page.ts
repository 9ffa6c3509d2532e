/** Where a sign-in goes when `next` is absent or not a path of this service. */
export const DEFAULT_NEXT = '/status';

const MAX_NEXT = 512;

/**
 * `next` when it is a path on this service, else `/status` (API.md 15): a single leading slash,
 * then no second slash or backslash at its start (`//evil`, `/\evil` are other hosts to a browser),
 * no backslash, control character or space anywhere (browsers drop or turn them into slashes),
 * and, parsed against any origin, still on that origin with exactly this path and query. The
 * string kept is the one given, never a prefix of it or a decoded form.
 */
export function nextPath(next: string | null | undefined): string {
  if (typeof next !== 'string' || next.length === 0 || next.length > MAX_NEXT) {
    return DEFAULT_NEXT;
  }
  if (!next.startsWith('/') || next.startsWith('//') || /[\\\s\p{Cc}]/u.test(next)) {
    return DEFAULT_NEXT;
  }
  let parsed: URL;
  try {
    parsed = new URL(next, 'http://service.invalid');
  } catch {
    return DEFAULT_NEXT;
  }
  if (
    parsed.origin !== 'http://service.invalid' ||
    `${parsed.pathname}${parsed.search}${parsed.hash}` !== next
  ) {
    return DEFAULT_NEXT;
  }
  return next;
}

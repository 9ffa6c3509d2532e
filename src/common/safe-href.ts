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

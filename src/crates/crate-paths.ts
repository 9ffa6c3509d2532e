/**
 * `relative` taken from `folder` (a folder of the crate, `''` for its root), as a normalised
 * path in the crate: `.` and empty segments dropped, `..` climbing. Undefined when it leaves the
 * crate, or is absolute, or holds a backslash or a NUL (the crate's own names use `/` only:
 * CrateReader normalises them), or names a folder.
 */
export function resolveInCrate(folder: string, relative: string): string | undefined {
  if (relative.startsWith('/') || relative.includes('\\') || relative.includes('\0')) {
    return undefined;
  }
  const segments: string[] = [];
  for (const segment of `${folder}/${relative}`.split('/')) {
    if (segment === '..') {
      if (segments.pop() === undefined) {
        return undefined;
      }
    } else if (segment !== '.' && segment !== '') {
      segments.push(segment);
    }
  }
  return segments.length === 0 || relative.endsWith('/') ? undefined : segments.join('/');
}

/**
 * The path in the crate of an entity whose @id names one of its files: RO-Crate @ids of data
 * entities are URI references relative to the crate's root (`workflow/main.cwl`, `./main.cwl`,
 * `my%20workflow.cwl`). Undefined for an @id that names no file of the crate: an absolute URI (a
 * remote file), a local identifier (`#cwl`), the root itself, or one that climbs out of it.
 */
export function pathInCrate(id: string): string | undefined {
  if (/^[A-Za-z][A-Za-z0-9+.-]*:/.test(id) || id.startsWith('#')) {
    return undefined;
  }
  try {
    return resolveInCrate('', decodeURIComponent(id.replace(/[?#].*$/, '')));
  } catch {
    // Not valid percent-encoding: no file has that name.
    return undefined;
  }
}

/** The folder of a path in the crate (`''` at its root). */
export function folderOf(path: string): string {
  return path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '';
}

import { isRecord } from '../../../common/is-record.js';

/**
 * The files a CWL run's outputs name, as the comparison may look at them. The runner confines it
 * to the run's working folder: an output object is written by the workflow, and a path it names
 * elsewhere (`/etc/shadow`) must read as missing, never as the runner's file.
 */
export interface OutputFiles {
  isFile(path: string): Promise<boolean>;
  isDirectory(path: string): Promise<boolean>;
  /** The file's text, or undefined when it is too large to compare as text. */
  text(path: string): Promise<string | undefined>;
  size(path: string): Promise<number>;
  /** `sha1$<hex>`, as CWL writes checksums. */
  sha1(path: string): Promise<string>;
}

/** Why an output differs from the expected one: one paragraph a person can read. */
export class CompareFail extends Error {
  static of(expected: unknown, actual: unknown, cause?: string): CompareFail {
    const message = `expected: ${JSON.stringify(expected, null, 2)}\ngot: ${JSON.stringify(actual, null, 2)}`;
    return new CompareFail(cause ? `${message}\ncaused by: ${cause}` : message);
  }
}

/**
 * Compares a CWL tool's output object with a test's expected `output`, by the rules of cwltest,
 * the CWL conformance-test runner (common-workflow-language/cwltest, src/cwltest/compare.py,
 * Apache-2.0; read at commit 14c59dea3d9ad597bf0aaea158fdfa41a469bdcc, this is our own code):
 * - `"Any"` matches anything; an expected value against a missing one fails;
 * - objects: every expected key compares, an actual key not expected fails unless it is null;
 * - lists: same length, item by item; other values: equal;
 * - `File` / `Directory`: `location` or `path` matches when the actual one ends with `/<expected>`
 *   (or equals it without a `/`), `Any` matching any; the actual file or folder must exist;
 *   `contents` is compared with the file's text; a File's `checksum` (sha1) and `size` are taken
 *   from the file on disk and must equal the expected ones, and the actual object's own claims;
 *   a Directory's expected `listing` entries must each match one of the actual listing's;
 *   any other expected key (`basename`, `nameroot`, `secondaryFiles`…) compares as above.
 * Rejects with CompareFail; never reads a file outside what `files` serves.
 */
export async function compareCwl(expected: unknown, actual: unknown, files: OutputFiles): Promise<void> {
  if (expected === 'Any') {
    return;
  }
  if (expected !== null && expected !== undefined && (actual === null || actual === undefined)) {
    throw CompareFail.of(expected, actual);
  }
  if (isRecord(expected)) {
    if (!isRecord(actual)) {
      throw CompareFail.of(expected, actual);
    }
    if (expected.class === 'File') {
      return compareFile(expected, { ...actual }, files);
    }
    if (expected.class === 'Directory') {
      return compareDirectory(expected, { ...actual }, files);
    }
    return compareObject(expected, actual, files);
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) {
      throw CompareFail.of(expected, actual);
    }
    if (expected.length !== actual.length) {
      throw CompareFail.of(expected, actual, "lengths don't match");
    }
    for (let i = 0; i < expected.length; i++) {
      await nested(expected, actual, `item ${i}`, () => compareCwl(expected[i], actual[i], files));
    }
    return;
  }
  if (!sameValue(expected, actual)) {
    throw CompareFail.of(expected, actual);
  }
}

async function compareObject(
  expected: Record<string, unknown>,
  actual: Record<string, unknown>,
  files: OutputFiles,
): Promise<void> {
  for (const key of Object.keys(expected)) {
    await nested(expected, actual, `key '${key}'`, () => compareCwl(expected[key], actual[key], files));
  }
  for (const key of Object.keys(actual)) {
    if (!(key in expected) && actual[key] !== null && actual[key] !== undefined) {
      throw CompareFail.of(expected, actual, `unexpected key '${key}'`);
    }
  }
}

async function compareDirectory(
  expected: Record<string, unknown>,
  actual: Record<string, unknown>,
  files: OutputFiles,
): Promise<void> {
  if (actual.class !== 'Directory') {
    throw CompareFail.of(expected, actual, "expected object with a class 'Directory'");
  }
  if (!Array.isArray(actual.listing)) {
    throw CompareFail.of(expected, actual, "'listing' is mandatory field in Directory object");
  }
  const listing: unknown[] = actual.listing;
  for (const wanted of Array.isArray(expected.listing) ? expected.listing : []) {
    let found = false;
    for (const candidate of listing) {
      try {
        await compareCwl(wanted, candidate, files);
        found = true;
        break;
      } catch (error) {
        if (!(error instanceof CompareFail)) {
          throw error;
        }
      }
    }
    if (!found) {
      throw CompareFail.of(expected, actual, `${JSON.stringify(wanted)} not found`);
    }
  }
  await compareFile(expected, actual, files);
}

const FILE_KEYS = new Set(['path', 'location', 'listing', 'contents', 'checksum', 'size']);

async function compareFile(
  expected: Record<string, unknown>,
  actual: Record<string, unknown>,
  files: OutputFiles,
): Promise<void> {
  await compareLocation(expected, actual, files);
  const path = pathOf(actual);
  if ('contents' in expected) {
    const text = path === undefined ? undefined : await files.text(path);
    if (text !== expected.contents) {
      throw CompareFail.of(expected, actual, 'Output file contents do not match');
    }
  }
  if (actual.class === 'File' && path !== undefined) {
    const checksum = await files.sha1(path);
    if ('checksum' in actual && actual.checksum !== checksum) {
      throw CompareFail.of(expected, actual, `checksum on disk ${checksum} is not the output object's`);
    }
    if ('checksum' in expected && expected.checksum !== checksum) {
      throw CompareFail.of(expected, actual, `checksum ${checksum} is not the expected one`);
    }
    const size = await files.size(path);
    if ('size' in actual && actual.size !== size) {
      throw CompareFail.of(expected, actual, `size on disk ${size} is not the output object's`);
    }
    if ('size' in expected && expected.size !== size) {
      throw CompareFail.of(expected, actual, `size ${size} is not the expected one`);
    }
  }
  for (const key of Object.keys(expected)) {
    if (!FILE_KEYS.has(key)) {
      await nested(expected, actual, `field '${key}'`, () => compareCwl(expected[key], actual[key], files));
    }
  }
}

async function compareLocation(
  expected: Record<string, unknown>,
  actual: Record<string, unknown>,
  files: OutputFiles,
): Promise<void> {
  const key = 'path' in expected ? 'path' : 'location' in expected ? 'location' : undefined;
  if (key === undefined) {
    return;
  }
  const wanted = expected[key];
  const named = typeof actual.path === 'string' ? actual.path : actual.location;
  if (typeof named !== 'string') {
    throw CompareFail.of(expected, actual, 'the output has no location');
  }
  let got = named;
  if (actual.class === 'Directory') {
    got = got.replace(/\/+$/, '');
  }
  const path = localPath(got);
  const exists =
    path !== undefined &&
    (actual.class === 'Directory' ? await files.isDirectory(path) : await files.isFile(path));
  if (!exists) {
    throw CompareFail.of(expected, actual, `${got} does not exist`);
  }
  if (
    wanted !== 'Any' &&
    !(typeof wanted === 'string' && (got.endsWith(`/${wanted}`) || (!got.includes('/') && got === wanted)))
  ) {
    throw CompareFail.of(expected, actual, `${got} does not end with ${String(wanted)}`);
  }
}

function pathOf(actual: Record<string, unknown>): string | undefined {
  const value = typeof actual.path === 'string' ? actual.path : actual.location;
  return typeof value === 'string' ? localPath(value) : undefined;
}

/** A `file://` URI or a plain path as a path on this machine; undefined for other URIs. */
function localPath(location: string): string | undefined {
  if (location.startsWith('file://')) {
    try {
      return decodeURIComponent(new URL(location).pathname);
    } catch {
      return undefined;
    }
  }
  return /^[A-Za-z][A-Za-z0-9+.-]*:/.test(location) ? undefined : location;
}

async function nested(
  expected: unknown,
  actual: unknown,
  where: string,
  compare: () => Promise<void>,
): Promise<void> {
  try {
    await compare();
  } catch (error) {
    if (error instanceof CompareFail) {
      throw CompareFail.of(expected, actual, `failed comparison for ${where}: ${error.message}`);
    }
    throw error;
  }
}

/** Python's `==` on JSON values: numbers by value (1 == 1.0), the rest by identity. */
function sameValue(expected: unknown, actual: unknown): boolean {
  return expected === actual || (expected === null && actual === undefined);
}

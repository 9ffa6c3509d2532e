import { createReadStream, type ReadStream } from 'node:fs';
import { open, stat, type FileHandle } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { pipeline, Readable, Transform } from 'node:stream';
import { crc32 } from 'node:zlib';
import { Injectable } from '@nestjs/common';
import unzipper, { type File as ZipEntry } from 'unzipper';
import { DomainError } from '../common/errors/domain-error.js';
import { formatBytes } from './byte-size.js';

export const METADATA_FILE = 'ro-crate-metadata.json';

/**
 * unzipper walks an archive's directory through Bluebird promises, one record after another, and
 * Bluebird on Node runs each step from setImmediate: a turn of the event loop per step, behind
 * every other request's I/O (10 readers alongside made each turn tens of milliseconds,
 * `npm run bench -- register-concurrent`). Its documented alternative, process.nextTick, runs them
 * as native promises run. The instance is the one unzipper itself requires; Bluebird is used by
 * nothing else here (`npm ls bluebird`).
 */
const requireFromUnzipper = createRequire(createRequire(import.meta.url).resolve('unzipper'));
const unzippersBluebird = requireFromUnzipper('bluebird') as {
  setScheduler(schedule: (work: () => void) => void): unknown;
};
unzippersBluebird.setScheduler((work) => process.nextTick(work));

/** The metadata of real crates is a few KiB; this only stops a hostile one from filling memory. */
export const DEFAULT_MAX_METADATA_BYTES = 16 * 1024 * 1024;

export interface CrateContents {
  /** The parsed JSON of `ro-crate-metadata.json`. */
  metadata: unknown;
  /** Where it sits in the archive: `ro-crate-metadata.json` or `<folder>/ro-crate-metadata.json`. */
  metadataPath: string;
  entryCount: number;
  /** Every file of the archive, by its path from the folder that holds `ro-crate-metadata.json`. */
  files: string[];
  /** The sum of the uncompressed sizes the archive declares. */
  declaredBytes: number;
  /**
   * The first of the companion files asked for that the crate's root holds: its bytes, or why they
   * could not be read (too large, encrypted…), which is the companion's problem, not the crate's.
   */
  companion?: { name: string; bytes?: Buffer; problem?: string };
}

/** Small files beside `ro-crate-metadata.json` to read with it: the first of `names` found. */
export interface CompanionFiles {
  names: readonly string[];
  /** A larger one is refused as the metadata is (DomainError invalid_input). */
  maxBytes: number;
}

/** The archive has no `ro-crate-metadata.json` at its top or under its one top-level folder. */
export class MissingMetadataError extends DomainError {
  constructor() {
    super('invalid_input', `the crate has no ${METADATA_FILE}`);
  }
}

/** Local file header, empty archive, and spanned-archive marker: what a zip file starts with. */
const ZIP_MAGIC = ['504b0304', '504b0506', '504b0708'];
const SUPPORTED_METHODS = new Set([0, 8]);
const END_SIGNATURE = Buffer.from('504b0506', 'hex');
/** unzipper looks for the end of central directory record in the archive's last 80 bytes. */
const END_SEARCH_WINDOW = 80;
/** The fixed part of a central directory record; every entry takes at least this much. */
const DIRECTORY_RECORD_BYTES = 46;

/**
 * Reads a crate archive from disk without extracting it: checks every entry name and the
 * declared sizes, then inflates only `ro-crate-metadata.json` (and a companion file asked for,
 * such as `.lifemonitor.yaml`, or, for `files`, the one file asked for), counting the bytes it
 * really produces because a zip bomb lies about its sizes.
 */
@Injectable()
export class CrateReader {
  /**
   * Reads the archive at a path, or its bytes when the caller has them in memory already.
   * Throws DomainError('invalid_input') with a detail the caller can show as it is.
   */
  async read(
    archive: string | Buffer,
    maxUncompressedBytes: number,
    maxMetadataBytes = DEFAULT_MAX_METADATA_BYTES,
    companions?: CompanionFiles,
  ): Promise<CrateContents> {
    const source = typeof archive === 'string' ? await openSource(archive) : new BufferSource(archive);
    try {
      const { entries, declaredBytes, metadataEntry } = await directoryOf(source, maxUncompressedBytes);
      const budget = (entry: ZipEntry, max: number): Budget => ({
        total: maxUncompressedBytes - (declaredBytes - entry.uncompressedSize),
        totalLimit: maxUncompressedBytes,
        entry: max,
      });
      const bytes = await source.guard(inflate(metadataEntry, budget(metadataEntry, maxMetadataBytes)));
      const folder = normalizedName(metadataEntry).slice(0, -METADATA_FILE.length);
      const contents: CrateContents = {
        metadata: parseJson(bytes),
        metadataPath: metadataEntry.path,
        entryCount: entries.length,
        files: filesUnder(entries, folder),
        declaredBytes,
      };
      const companion = companions?.names
        .map((name) =>
          entries.find((entry) => entry.type === 'File' && normalizedName(entry) === folder + name),
        )
        .find((entry) => entry !== undefined);
      if (companions && companion) {
        const name = normalizedName(companion).slice(folder.length);
        try {
          const read = await source.guard(inflate(companion, budget(companion, companions.maxBytes), name));
          contents.companion = { name, bytes: read };
        } catch (error) {
          if (!(error instanceof DomainError)) {
            throw error;
          }
          contents.companion = { name, problem: error.message };
        }
      }
      return contents;
    } finally {
      source.close();
    }
  }

  /**
   * The files of a stored crate: every file entry under the crate's root (the folder of its
   * `ro-crate-metadata.json`), with the same checks as `read`. Throws DomainError('invalid_input')
   * for an archive that fails them.
   */
  async files(archive: string, maxUncompressedBytes: number): Promise<CrateFile[]> {
    const source = await openSource(archive);
    try {
      const { entries, metadataEntry } = await directoryOf(source, maxUncompressedBytes);
      const root = normalizedName(metadataEntry).slice(0, -METADATA_FILE.length);
      return fileEntriesUnder(entries, root).map(({ entry, path }) => ({
        path,
        size: entry.uncompressedSize,
        open: () => checkedStream(entry, source),
      }));
    } finally {
      // The entries' streams open their own reads of the file: they work after this.
      source.close();
    }
  }
}

/** A file of a stored crate. */
export interface CrateFile {
  /** Its path relative to the crate's root (the folder of `ro-crate-metadata.json`), `/`-separated. */
  path: string;
  /** Its uncompressed size as the archive declares it. */
  size: number;
  /**
   * Its bytes, inflated. Rejects with DomainError('invalid_input') when the entry is encrypted or
   * compressed otherwise than stored or deflated; the stream fails when the bytes are more than
   * the declared size (a zip bomb lies there) or fail their CRC check.
   */
  open(): Promise<Readable>;
}

interface Directory {
  entries: ZipEntry[];
  declaredBytes: number;
  metadataEntry: ZipEntry;
}

/** The archive's entries, checked: safe names, declared sizes within the limit, a metadata file. */
async function directoryOf(source: Source, maxUncompressedBytes: number): Promise<Directory> {
  await precheck(source);
  const entries = await source.guard(openDirectory(source));
  let declaredBytes = 0;
  for (const entry of entries) {
    if (isUnsafeName(entry.path)) {
      throw invalid(`the archive has an unsafe entry name: ${JSON.stringify(entry.path.slice(0, 200))}`);
    }
    if (!Number.isSafeInteger(entry.uncompressedSize) || entry.uncompressedSize < 0) {
      throw invalid('the archive is truncated or damaged (an entry has no valid size)');
    }
    declaredBytes += entry.uncompressedSize;
  }
  if (declaredBytes > maxUncompressedBytes) {
    throw expandsPast(maxUncompressedBytes);
  }
  const metadataEntry = findMetadata(entries);
  if (!metadataEntry) {
    throw new MissingMetadataError();
  }
  return { entries, declaredBytes, metadataEntry };
}

function checkedStream(entry: ZipEntry, source: Source): Promise<Readable> {
  const name = normalizedName(entry);
  if (entry.flags & 0x01) {
    return Promise.reject(invalid(`${name} is encrypted`));
  }
  if (!SUPPORTED_METHODS.has(entry.compressionMethod)) {
    return Promise.reject(
      invalid(`${name} uses an unsupported compression method (${entry.compressionMethod})`),
    );
  }
  let size = 0;
  let crc = 0;
  const check = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      size += chunk.length;
      if (size > entry.uncompressedSize) {
        done(invalid(`${name} expands past its declared size`));
        return;
      }
      crc = crc32(chunk, crc);
      done(null, chunk);
    },
    flush(done) {
      done(
        size === entry.uncompressedSize && crc === entry.crc32
          ? null
          : invalid(`the archive is damaged (${name} fails its size or CRC check)`),
      );
    },
  });
  // A failure of the archive's own reads (deleted meanwhile) ends the stream instead of leaving it waiting.
  source.onFailure((error) => check.destroy(damaged(error)));
  return Promise.resolve(pipeline(entry.stream(), check, () => undefined));
}

/** Archives up to this size are read into memory with one read, then parsed from there. */
export const IN_MEMORY_ARCHIVE_BYTES = 1024 * 1024;

/** The archive as unzipper's random-access source, and positioned reads for the prechecks. */
interface Source {
  size(): Promise<number>;
  stream(offset: number, length?: number): Readable;
  readAt(position: number, length: number): Promise<Buffer>;
  guard<T>(work: Promise<T>): Promise<T>;
  /** Calls `listener` when reading the archive fails (never for one in memory). */
  onFailure(listener: (error: unknown) => void): void;
  close(): void;
}

/**
 * A small archive is read whole, in one go: reading it piece by piece (the prechecks, the end
 * record, the directory, the entry) took some fifteen file operations one after another, each
 * waiting its turn in libuv's thread pool, which 20 concurrent registrations kept busy (most of a
 * second per archive, `npm run bench -- register-concurrent`). A large one is read in place, so
 * that memory does not grow with the archive.
 */
async function openSource(path: string): Promise<Source> {
  const file = await open(path, 'r');
  try {
    const { size } = await file.stat();
    if (size <= IN_MEMORY_ARCHIVE_BYTES) {
      return new BufferSource(await file.readFile());
    }
  } finally {
    await file.close();
  }
  return new FileSource(path);
}

class BufferSource implements Source {
  constructor(private readonly bytes: Buffer) {}

  size = (): Promise<number> => Promise.resolve(this.bytes.length);

  stream = (offset: number, length?: number): Readable =>
    Readable.from([this.bytes.subarray(offset, length === undefined ? undefined : offset + length)], {
      objectMode: false,
    });

  readAt(position: number, length: number): Promise<Buffer> {
    if (position < 0 || length <= 0 || !Number.isSafeInteger(position)) {
      return Promise.resolve(Buffer.alloc(0));
    }
    return Promise.resolve(this.bytes.subarray(position, position + length));
  }

  guard<T>(work: Promise<T>): Promise<T> {
    return work;
  }

  onFailure(): void {
    // Bytes in memory do not fail to be read.
  }

  close(): void {
    // Nothing is open.
  }
}

/**
 * A large archive, read in place. `Open.file` opens a read stream per request and leaves it
 * open when a reader stops early (as we do on a zip bomb), leaking a descriptor each time; this
 * one keeps its streams so that they can all be closed.
 */
class FileSource implements Source {
  private readonly streams = new Set<ReadStream>();
  private fail: (error: unknown) => void = () => undefined;
  /** Rejects when reading the file fails: unzipper does not pass those errors on, it would wait forever. */
  private readonly failed = new Promise<never>((_resolve, reject) => {
    this.fail = reject;
  });

  constructor(private readonly path: string) {
    this.failed.catch(() => undefined);
  }

  size = async (): Promise<number> => (await stat(this.path)).size;

  stream = (offset: number, length?: number): Readable => {
    const stream = createReadStream(this.path, {
      start: offset,
      end: length === undefined ? undefined : offset + length - 1,
    });
    this.streams.add(stream);
    stream.once('error', (error) => this.fail(error));
    stream.once('close', () => this.streams.delete(stream));
    return stream;
  };

  async readAt(position: number, length: number): Promise<Buffer> {
    const file = await open(this.path, 'r');
    try {
      return await readAt(file, position, length);
    } finally {
      await file.close();
    }
  }

  guard<T>(work: Promise<T>): Promise<T> {
    return Promise.race([work, this.failed]);
  }

  onFailure(listener: (error: unknown) => void): void {
    this.failed.catch(listener);
  }

  close(): void {
    for (const stream of this.streams) {
      stream.destroy();
    }
    this.streams.clear();
  }
}

/**
 * Checks the archive's start and its end-of-directory record before unzipper sees them:
 * unzipper allocates and walks as many directory records as the archive claims, so a
 * 100-byte file claiming 2^31 entries would hold it for minutes.
 */
async function precheck(source: Source): Promise<void> {
  const size = await source.size();
  const head = await source.readAt(0, 4);
  if (head.length < 4 || !ZIP_MAGIC.includes(head.toString('hex'))) {
    throw invalid('the archive is not a zip file');
  }
  // The same window unzipper searches for the end record, so that both read the same one.
  const tailStart = Math.max(0, size - END_SEARCH_WINDOW);
  const tail = await source.readAt(tailStart, size - tailStart);
  const at = tail.indexOf(END_SIGNATURE);
  if (at < 0 || tail.length < at + 22) {
    throw invalid('the archive is truncated or damaged (it has no end of central directory)');
  }
  let entries = tail.readUInt16LE(at + 10);
  if (entries === 0xffff || tail.readUInt32LE(at + 16) === 0xffffffff) {
    const locator = await source.readAt(tailStart + at - 20, 20);
    if (locator.length < 20 || locator.readUInt32LE(0) !== 0x07064b50) {
      throw invalid('the archive is truncated or damaged (a broken zip64 end of central directory)');
    }
    const record = await source.readAt(Number(locator.readBigUInt64LE(8)), 56);
    if (record.length < 56 || record.readUInt32LE(0) !== 0x06064b50) {
      throw invalid('the archive is truncated or damaged (a broken zip64 end of central directory)');
    }
    entries = Number(record.readBigUInt64LE(32));
  }
  if (entries * DIRECTORY_RECORD_BYTES > size) {
    throw invalid(`the archive is truncated or damaged (its directory claims ${entries} entries)`);
  }
}

async function readAt(file: FileHandle, position: number, length: number): Promise<Buffer> {
  if (position < 0 || length <= 0 || !Number.isSafeInteger(position)) {
    return Buffer.alloc(0);
  }
  const buffer = Buffer.alloc(length);
  const { bytesRead } = await file.read(buffer, 0, length, position);
  return buffer.subarray(0, bytesRead);
}

async function openDirectory(source: Source): Promise<ZipEntry[]> {
  try {
    const directory = await unzipper.Open.custom(source);
    return directory.files;
  } catch (error) {
    throw damaged(error);
  }
}

function isUnsafeName(name: string): boolean {
  const normalized = name.replace(/\\/g, '/');
  return (
    name.includes('\0') ||
    normalized.startsWith('/') ||
    /^[A-Za-z]:/.test(normalized) ||
    normalized.split('/').includes('..')
  );
}

/** At the top of the archive, or under its one top-level folder (as source-hosting sites' and many zip tools' archives are). */
function findMetadata(entries: ZipEntry[]): ZipEntry | undefined {
  const files = entries.filter((entry) => entry.type === 'File');
  const atTop = files.find((entry) => normalizedName(entry) === METADATA_FILE);
  if (atTop) {
    return atTop;
  }
  const tops = new Set(
    entries
      .map((entry) => normalizedName(entry).split('/')[0])
      .filter((top) => top !== '__MACOSX' && top !== ''),
  );
  if (tops.size !== 1) {
    return undefined;
  }
  const [folder] = tops;
  return files.find((entry) => normalizedName(entry) === `${folder}/${METADATA_FILE}`);
}

/** The files under `folder` (`''` or `name/`), by their paths from there. */
function filesUnder(entries: ZipEntry[], folder: string): string[] {
  return fileEntriesUnder(entries, folder).map(({ path }) => path);
}

/** The file entries under `folder`, each with its path from there. */
function fileEntriesUnder(entries: ZipEntry[], folder: string): { entry: ZipEntry; path: string }[] {
  return entries
    .filter((entry) => entry.type === 'File' && normalizedName(entry).startsWith(folder))
    .map((entry) => ({ entry, path: normalizedName(entry).slice(folder.length) }));
}

function normalizedName(entry: ZipEntry): string {
  return entry.path.replace(/\\/g, '/').replace(/^(\.\/)+/, '');
}

interface Budget {
  /** Bytes the entry may inflate to before the whole archive passes its limit. */
  total: number;
  totalLimit: number;
  /** Bytes the entry itself may have. */
  entry: number;
}

async function inflate(entry: ZipEntry, budget: Budget, name = METADATA_FILE): Promise<Buffer> {
  if (entry.flags & 0x01) {
    throw invalid(`${name} is encrypted`);
  }
  if (!SUPPORTED_METHODS.has(entry.compressionMethod)) {
    throw invalid(`${name} uses an unsupported compression method (${entry.compressionMethod})`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of entry.stream()) {
      const buffer = chunk as Buffer;
      size += buffer.length;
      if (size > budget.total) {
        throw expandsPast(budget.totalLimit);
      }
      if (size > budget.entry) {
        throw invalid(`${name} is larger than ${formatBytes(budget.entry)}`);
      }
      chunks.push(buffer);
    }
  } catch (error) {
    throw error instanceof DomainError ? error : damaged(error);
  }
  const bytes = Buffer.concat(chunks);
  if (crc32(bytes) !== entry.crc32) {
    throw invalid(`the archive is damaged (${name} fails its CRC check)`);
  }
  return bytes;
}

function parseJson(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8').replace(/^\uFEFF/, '')) as unknown;
  } catch {
    throw invalid(`${METADATA_FILE} is not valid JSON`);
  }
}

function expandsPast(limit: number): DomainError {
  return invalid(`the archive expands to more than ${formatBytes(limit)}`);
}

function damaged(error: unknown): DomainError {
  if (error instanceof DomainError) {
    return error;
  }
  const reason = error instanceof Error ? error.message : String(error);
  // unzipper's FILE_ENDED only says that the data stopped early, which "truncated" says already.
  const detail = reason === 'FILE_ENDED' || reason === '' ? '' : ` (${reason.slice(0, 200)})`;
  return invalid(`the archive is truncated or damaged${detail}`);
}

function invalid(detail: string): DomainError {
  return new DomainError('invalid_input', detail);
}

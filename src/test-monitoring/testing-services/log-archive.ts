import { randomUUID } from 'node:crypto';
import { mkdir, open, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import { isUint32Array } from 'node:util/types';
import { constants, createInflateRaw, type InflateRaw } from 'node:zlib';
import { jobMatcher } from '../../common/job-selector.js';
import { LogStreamError } from './testing-service.js';

/**
 * A zip of logs as a CI service hands it out (GitHub's run log archive): saved to a temporary file
 * (a zip is read from its end, and its entries in the order we choose), then read entry by entry
 * without holding more than a chunk of it. Only what a log archive uses is understood: stored and
 * deflated entries, no zip64 (GitHub's archives stay far below 4 GiB).
 */

/** The largest log archive saved: a run's logs are seldom more than a few MiB. */
export const MAX_LOG_ARCHIVE_BYTES = 2 * 1024 ** 3;
/** The most a log archive may inflate to: past it, it is a zip bomb, not logs. */
export const MAX_LOG_INFLATED_BYTES = 8 * 1024 ** 3;

const END_OF_DIRECTORY = 0x06054b50;
const DIRECTORY_RECORD = 0x02014b50;
const LOCAL_HEADER = 0x04034b50;
/** The end record is 22 bytes plus a comment of at most 65,535. */
const END_SEARCH = 22 + 0xffff;

export interface ZipEntry {
  name: string;
  method: number;
  compressedSize: number;
  size: number;
  localHeaderOffset: number;
}

/** Writes `chunks` to a new file under `folder`; removes it and rethrows when they break off or exceed `maxBytes`. */
export async function saveTemporary(
  folder: string,
  chunks: AsyncIterable<Buffer>,
  maxBytes = MAX_LOG_ARCHIVE_BYTES,
): Promise<string> {
  await mkdir(folder, { recursive: true });
  const path = join(folder, `log-${randomUUID()}.zip`);
  const out = await open(path, 'wx', 0o600);
  try {
    let size = 0;
    for await (const chunk of chunks) {
      size += chunk.length;
      if (size > maxBytes) {
        throw new LogStreamError('refused', `the log archive is larger than ${maxBytes} bytes`);
      }
      // Written before the next chunk is asked for: a streamed answer reuses its buffer.
      await out.appendFile(chunk);
    }
    await out.close();
    return path;
  } catch (error) {
    await out.close().catch(() => undefined);
    await rm(path, { force: true });
    throw error;
  }
}

export async function removeTemporary(path: string): Promise<void> {
  await rm(path, { force: true });
}

/** The entries of the zip at `path`, from its central directory. Throws LogStreamError('refused') for anything else. */
export async function zipEntries(path: string): Promise<ZipEntry[]> {
  const file = await open(path, 'r');
  try {
    const { size } = await file.stat();
    const tailLength = Math.min(size, END_SEARCH);
    const tail = await readAt(file, size - tailLength, tailLength);
    let at = -1;
    for (let index = tail.length - 22; index >= 0; index--) {
      if (tail.readUInt32LE(index) === END_OF_DIRECTORY) {
        at = index;
        break;
      }
    }
    if (at < 0) {
      throw damaged('it is not a zip file');
    }
    const count = tail.readUInt16LE(at + 10);
    const directorySize = tail.readUInt32LE(at + 12);
    const directoryOffset = tail.readUInt32LE(at + 16);
    if (count === 0xffff || directoryOffset === 0xffffffff) {
      throw damaged('it is a zip64 archive');
    }
    if (directoryOffset + directorySize > size || count * 46 > directorySize) {
      throw damaged('its directory is truncated');
    }
    const directory = await readAt(file, directoryOffset, directorySize);
    const entries: ZipEntry[] = [];
    let position = 0;
    for (let index = 0; index < count; index++) {
      if (position + 46 > directory.length || directory.readUInt32LE(position) !== DIRECTORY_RECORD) {
        throw damaged('its directory is damaged');
      }
      const nameLength = directory.readUInt16LE(position + 28);
      const extraLength = directory.readUInt16LE(position + 30);
      const commentLength = directory.readUInt16LE(position + 32);
      entries.push({
        method: directory.readUInt16LE(position + 10),
        compressedSize: directory.readUInt32LE(position + 20),
        size: directory.readUInt32LE(position + 24),
        localHeaderOffset: directory.readUInt32LE(position + 42),
        name: directory.toString('utf8', position + 46, position + 46 + nameLength),
      });
      position += 46 + nameLength + extraLength + commentLength;
    }
    return entries;
  } finally {
    await file.close();
  }
}

/** Compressed bytes read at once, and inflated bytes handed on at once: one buffer each per entry. */
const READ_BYTES = 64 * 1024;
const INFLATED_BYTES = 64 * 1024;

/**
 * One entry's bytes, inflated, as they are read; at most `maxBytes` of them. The chunks are views
 * of two buffers reused for the whole entry, valid until the next one is asked for: a reader keeps
 * what it needs by copying (as LogTail does).
 */
export async function* entryChunks(
  path: string,
  entry: ZipEntry,
  maxBytes = MAX_LOG_INFLATED_BYTES,
): AsyncGenerator<Buffer> {
  if (entry.method !== 0 && entry.method !== 8) {
    throw damaged(`${entry.name} is compressed with method ${entry.method}`);
  }
  const file = await open(path, 'r');
  const inflater = entry.method === 8 ? new RawInflater(INFLATED_BYTES) : undefined;
  try {
    const header = await readAt(file, entry.localHeaderOffset, 30);
    if (header.length < 30 || header.readUInt32LE(0) !== LOCAL_HEADER) {
      throw damaged(`the entry ${entry.name} is damaged`);
    }
    let position = entry.localHeaderOffset + 30 + header.readUInt16LE(26) + header.readUInt16LE(28);
    let left = entry.compressedSize;
    const input = Buffer.allocUnsafe(Math.min(READ_BYTES, left));
    let size = 0;
    while (left > 0) {
      const { bytesRead } = await file.read(input, 0, Math.min(input.length, left), position);
      if (bytesRead === 0) {
        throw damaged(`${entry.name} is cut short`);
      }
      position += bytesRead;
      left -= bytesRead;
      const read = input.subarray(0, bytesRead);
      for await (const chunk of inflater ? inflater.inflate(read, left === 0) : [read]) {
        size += chunk.length;
        if (size > maxBytes) {
          throw damaged(`${entry.name} inflates past ${maxBytes} bytes`);
        }
        yield chunk;
      }
    }
  } catch (error) {
    throw error instanceof LogStreamError ? error : damaged(`${entry.name} cannot be inflated`);
  } finally {
    inflater?.close();
    await file.close();
  }
}

/** What a zlib stream object holds of its native handle (lib/zlib.js), for RawInflater. */
interface ZlibInternals {
  _handle?: {
    writeSync?: (
      flush: number,
      input: Buffer,
      inputOffset: number,
      inputLength: number,
      output: Buffer,
      outputOffset: number,
      outputLength: number,
    ) => void;
  };
  /** After a write: the output bytes left free, then the input bytes left unread. */
  _writeState?: Uint32Array;
}

/**
 * Raw deflate, inflated into one buffer reused for every piece. node:zlib's streams and its
 * one-shot functions put each 16 KiB they make in a new buffer: a 200 MiB job log left some
 * 13,000 of them to the collector, which let them pile up to 15-30 MiB of the service's memory
 * before it ran (`npm run bench -- build-logs`). No public call of node:zlib inflates into a
 * buffer of the caller's, so this drives the native handle of a zlib stream object itself, with
 * the very call Node's own `inflateRawSync` makes (`handle.writeSync`, its results in
 * `_writeState`); on a Node without them it falls back to the stream, correct and only larger.
 */
export class RawInflater {
  /** Whether pieces are inflated into the one buffer (false: through the stream, a buffer each). */
  readonly direct: boolean;
  private readonly stream = createInflateRaw() as InflateRaw & ZlibInternals;
  private readonly output: Buffer;
  private readonly made: Buffer[] = [];

  /** `useHandle` false takes the stream's way even where the handle is there (tests of that way). */
  constructor(outputBytes: number, useHandle = true) {
    this.output = Buffer.allocUnsafe(outputBytes);
    this.direct =
      useHandle &&
      typeof this.stream._handle?.writeSync === 'function' &&
      isUint32Array(this.stream._writeState);
    // The handle reports a fault by destroying the stream, which emits it: read through `errored`.
    this.stream.on('error', () => undefined);
    if (!this.direct) {
      this.stream.on('data', (chunk: Buffer) => this.made.push(chunk));
    }
  }

  /**
   * The bytes `input` inflates to, in pieces valid until the next is asked for; `last` says it
   * ends the deflated data, which must then be whole. Throws when it is not deflate or breaks off.
   */
  async *inflate(input: Buffer, last: boolean): AsyncGenerator<Buffer> {
    if (this.direct) {
      yield* this.intoOutput(input, last);
    } else {
      yield* await this.throughStream(input, last);
    }
  }

  close(): void {
    this.stream.close();
  }

  private *intoOutput(input: Buffer, last: boolean): Generator<Buffer> {
    const handle = this.stream._handle!;
    const state = this.stream._writeState!;
    // Z_FINISH only once the input is all in: then deflated data that breaks off is an error.
    const flush = last ? constants.Z_FINISH : constants.Z_NO_FLUSH;
    let offset = 0;
    let length = input.length;
    for (;;) {
      handle.writeSync!(flush, input, offset, length, this.output, 0, this.output.length);
      if (this.stream.errored) {
        throw this.stream.errored;
      }
      const free = state[0];
      const unread = state[1];
      offset += length - unread;
      length = unread;
      if (free < this.output.length) {
        yield this.output.subarray(0, this.output.length - free);
      }
      // A full output buffer may hold back more, even with every input byte taken.
      if (free !== 0) {
        return;
      }
    }
  }

  private async throughStream(input: Buffer, last: boolean): Promise<Buffer[]> {
    // A copy: the stream keeps the bytes until it has inflated them, and `input` is reused. A
    // fault destroys the stream, which then never calls the write's callback: its error ends the wait.
    await new Promise<void>((resolve) => {
      const done = (): void => {
        this.stream.off('error', done);
        resolve();
      };
      this.stream.once('error', done);
      this.stream.write(Buffer.from(input), done);
    });
    if (last && !this.stream.errored) {
      // Pieces may still come after the write's callback; all have come when the stream has ended.
      this.stream.end();
      await finished(this.stream).catch(() => undefined);
    }
    if (this.stream.errored) {
      throw this.stream.errored;
    }
    return this.made.splice(0);
  }
}

/**
 * The job logs of a GitHub run's archive, in job order: the files at its top, `{n}_{job}.txt`, by
 * `n` (each holds its job's whole log; the folders hold the same per step). An archive without
 * them gives every `.txt` in name order, step files by their number.
 */
export function jobLogsInOrder(entries: readonly ZipEntry[]): ZipEntry[] {
  const texts = entries.filter((entry) => entry.name.endsWith('.txt'));
  const top = texts.filter((entry) => !entry.name.includes('/'));
  const chosen = top.length > 0 ? top : texts;
  const key = (entry: ZipEntry): [string, number, string] => {
    const slash = entry.name.lastIndexOf('/');
    const base = entry.name.slice(slash + 1);
    const number = /^(\d+)_/.exec(base)?.[1];
    return [entry.name.slice(0, slash + 1), number === undefined ? Infinity : Number(number), base];
  };
  return [...chosen].sort((a, b) => {
    const [folderA, numberA, nameA] = key(a);
    const [folderB, numberB, nameB] = key(b);
    return folderA.localeCompare(folderB) || numberA - numberB || nameA.localeCompare(nameB);
  });
}

/**
 * The job an entry of a run's log archive belongs to (API.md 16): `{n}_{job}.txt` at the top, or
 * the folder of a step's `{job}/{n}_{step}.txt`, as GitHub names them after the job.
 */
export function jobNameOfEntry(name: string): string {
  const slash = name.indexOf('/');
  return slash >= 0 ? name.slice(0, slash) : name.replace(/^\d+_/, '').replace(/\.txt$/, '');
}

/**
 * A run's log archive, saved to a temporary file, read as its job logs in job order (those of the
 * jobs the glob selects, by the names the archive gives them); the file is removed after.
 */
export async function* jobLogs(
  folder: string,
  archive: AsyncIterable<Buffer>,
  glob?: string,
): AsyncGenerator<Buffer> {
  const path = await saveTemporary(folder, archive);
  try {
    const entries = jobLogsInOrder(await zipEntries(path));
    const matches = glob === undefined ? undefined : jobMatcher(glob);
    for (const entry of matches ? entries.filter((e) => matches(jobNameOfEntry(e.name))) : entries) {
      yield* entryChunks(path, entry);
    }
  } finally {
    await removeTemporary(path);
  }
}

function damaged(why: string): LogStreamError {
  return new LogStreamError('refused', `the log archive cannot be read: ${why}`);
}

async function readAt(file: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(Math.max(0, length));
  const { bytesRead } = await file.read(buffer, 0, buffer.length, Math.max(0, position));
  return buffer.subarray(0, bytesRead);
}

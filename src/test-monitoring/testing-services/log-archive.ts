import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { createInflateRaw } from 'node:zlib';
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

/** One entry's bytes, inflated, as they are read; at most `maxBytes` of them. */
export async function* entryChunks(
  path: string,
  entry: ZipEntry,
  maxBytes = MAX_LOG_INFLATED_BYTES,
): AsyncGenerator<Buffer> {
  if (entry.method !== 0 && entry.method !== 8) {
    throw damaged(`${entry.name} is compressed with method ${entry.method}`);
  }
  const file = await open(path, 'r');
  let start: number;
  try {
    const header = await readAt(file, entry.localHeaderOffset, 30);
    if (header.length < 30 || header.readUInt32LE(0) !== LOCAL_HEADER) {
      throw damaged(`the entry ${entry.name} is damaged`);
    }
    start = entry.localHeaderOffset + 30 + header.readUInt16LE(26) + header.readUInt16LE(28);
  } finally {
    await file.close();
  }
  if (entry.compressedSize === 0) {
    return;
  }
  const raw = createReadStream(path, { start, end: start + entry.compressedSize - 1 });
  const bytes = entry.method === 8 ? raw.pipe(createInflateRaw()) : raw;
  let size = 0;
  try {
    for await (const chunk of bytes) {
      size += (chunk as Buffer).length;
      if (size > maxBytes) {
        throw damaged(`${entry.name} inflates past ${maxBytes} bytes`);
      }
      yield chunk as Buffer;
    }
  } catch (error) {
    throw error instanceof LogStreamError ? error : damaged(`${entry.name} cannot be inflated`);
  } finally {
    raw.destroy();
    bytes.destroy();
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

function damaged(why: string): LogStreamError {
  return new LogStreamError('refused', `the log archive cannot be read: ${why}`);
}

async function readAt(file: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(Math.max(0, length));
  const { bytesRead } = await file.read(buffer, 0, buffer.length, Math.max(0, position));
  return buffer.subarray(0, bytesRead);
}

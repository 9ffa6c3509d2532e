import { writeFile } from 'node:fs/promises';
import { crc32, deflateRawSync } from 'node:zlib';

/**
 * Builds zip archives byte by byte, so that tests can make the broken and hostile ones
 * that no zip tool writes: sizes that lie, `../` names, truncated files.
 */
export interface ZipEntrySpec {
  /** The name as stored; a trailing `/` makes a folder entry. */
  name: string;
  data?: Buffer | string;
  /** Default `deflate`. */
  method?: 'store' | 'deflate';
  /** The uncompressed size written in both headers instead of the real one (a zip bomb lies here). */
  declaredSize?: number;
  /** A CRC-32 to write instead of the real one (a damaged archive). */
  crc?: number;
}

export interface ZipOptions {
  /** Keep only this many bytes of the finished archive. */
  truncateAt?: number;
  comment?: string;
}

const DOS_TIME = 0;
const DOS_DATE = ((2024 - 1980) << 9) | (1 << 5) | 1;
const UTF8_NAMES = 0x0800;

export function buildZip(entries: ZipEntrySpec[], options: ZipOptions = {}): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name, 'utf8');
    const folder = entry.name.endsWith('/');
    const data = Buffer.from(entry.data ?? '');
    const method = folder || entry.method === 'store' ? 0 : 8;
    const stored = method === 8 ? deflateRawSync(data) : data;
    const crc = entry.crc ?? crc32(data);
    const size = entry.declaredSize ?? data.length;

    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(UTF8_NAMES, 6);
    local.writeUInt16LE(method, 8);
    local.writeUInt16LE(DOS_TIME, 10);
    local.writeUInt16LE(DOS_DATE, 12);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(stored.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(0, 28);
    locals.push(local, name, stored);

    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(0x0314, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(UTF8_NAMES, 8);
    central.writeUInt16LE(method, 10);
    central.writeUInt16LE(DOS_TIME, 12);
    central.writeUInt16LE(DOS_DATE, 14);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(stored.length, 20);
    central.writeUInt32LE(size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt16LE(0, 30);
    central.writeUInt16LE(0, 32);
    central.writeUInt16LE(0, 34);
    central.writeUInt16LE(0, 36);
    central.writeUInt32LE(folder ? 0x10 : 0, 38);
    central.writeUInt32LE(offset, 42);
    centrals.push(central, name);

    offset += local.length + name.length + stored.length;
  }
  const directory = Buffer.concat(centrals);
  const comment = Buffer.from(options.comment ?? '', 'utf8');
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(0, 4);
  end.writeUInt16LE(0, 6);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  end.writeUInt16LE(comment.length, 20);
  const zip = Buffer.concat([...locals, directory, end, comment]);
  return options.truncateAt === undefined ? zip : zip.subarray(0, options.truncateAt);
}

export async function writeZip(
  path: string,
  entries: ZipEntrySpec[],
  options: ZipOptions = {},
): Promise<string> {
  await writeFile(path, buildZip(entries, options));
  return path;
}

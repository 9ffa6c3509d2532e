import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateRawSync } from 'node:zlib';
import { buildZip, type ZipEntrySpec } from '../../../test/support/zip-builder.js';
import { entryChunks, RawInflater, zipEntries } from './log-archive.js';
import { LogStreamError } from './testing-service.js';

/** Text that deflates well, with random stretches between (stored blocks among compressed ones). */
function mixedLog(mib: number): Buffer {
  const parts: Buffer[] = [];
  for (let index = 0; parts.length < mib * 16; index++) {
    parts.push(
      Buffer.from(`${String(index).padStart(8, '0')} ${'step output '.repeat(5000)}\n`.slice(0, 48 * 1024)),
    );
    parts.push(randomBytes(16 * 1024));
  }
  return Buffer.concat(parts);
}

/** Every chunk copied as it comes: the chunks are views of reused buffers. */
async function collect(
  chunks: AsyncIterable<Buffer>,
): Promise<{ bytes: Buffer; views: Set<ArrayBufferLike> }> {
  const copies: Buffer[] = [];
  const views = new Set<ArrayBufferLike>();
  for await (const chunk of chunks) {
    copies.push(Buffer.from(chunk));
    views.add(chunk.buffer);
  }
  return { bytes: Buffer.concat(copies), views };
}

describe('log archives: entries read through fixed buffers', () => {
  let folder: string;
  const log = mixedLog(4);

  beforeAll(() => {
    folder = mkdtempSync(join(tmpdir(), 'log-archive-'));
  });

  afterAll(() => {
    rmSync(folder, { recursive: true, force: true });
  });

  const archive = (name: string, entries: ZipEntrySpec[], truncateAt?: number): string => {
    const path = join(folder, name);
    writeFileSync(path, buildZip(entries, { truncateAt }));
    return path;
  };

  it('inflates into one buffer on this Node, not a new one per piece', () => {
    expect(new RawInflater(1024).direct).toBe(true);
  });

  it('gives a deflated entry back whole, in pieces that are views of one buffer', async () => {
    const path = archive('deflated.zip', [{ name: '1_test.txt', data: log }]);
    const [entry] = await zipEntries(path);
    const { bytes, views } = await collect(entryChunks(path, entry));
    expect(bytes.equals(log)).toBe(true);
    expect(views.size).toBe(1);
  });

  it('gives a stored entry back whole', async () => {
    const path = archive('stored.zip', [{ name: '1_test.txt', data: log, method: 'store' }]);
    const [entry] = await zipEntries(path);
    await expect(collect(entryChunks(path, entry)).then(({ bytes }) => bytes.equals(log))).resolves.toBe(
      true,
    );
  });

  it('inflates the same bytes through the stream where the handle is not there', async () => {
    const deflated = deflateRawSync(log);
    for (const useHandle of [true, false]) {
      const inflater = new RawInflater(64 * 1024, useHandle);
      expect(inflater.direct).toBe(useHandle);
      async function* pieces(): AsyncGenerator<Buffer> {
        for (let at = 0; at < deflated.length; at += 10_000) {
          yield* inflater.inflate(deflated.subarray(at, at + 10_000), at + 10_000 >= deflated.length);
        }
      }
      const { bytes } = await collect(pieces());
      inflater.close();
      expect(bytes.equals(log)).toBe(true);
    }
  });

  it('refuses deflated data that breaks off, or is not deflate, on either way', async () => {
    const deflated = deflateRawSync(log);
    const cut = deflated.subarray(0, deflated.length - 100);
    const garbage = Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
    for (const useHandle of [true, false]) {
      for (const data of [cut, garbage]) {
        const inflater = new RawInflater(64 * 1024, useHandle);
        await expect(collect(inflater.inflate(data, true))).rejects.toThrow();
        inflater.close();
      }
    }
  });

  it('answers a damaged entry with LogStreamError refused, not a crash', async () => {
    const path = archive('damaged.zip', [{ name: '1_test.txt', data: log }]);
    const [entry] = await zipEntries(path);
    const lying = { ...entry, compressedSize: entry.compressedSize - 200 };
    await expect(collect(entryChunks(path, lying))).rejects.toEqual(
      new LogStreamError('refused', 'the log archive cannot be read: 1_test.txt cannot be inflated'),
    );
  });

  it('stops at the inflated limit: a zip bomb is refused as it inflates', async () => {
    const path = archive('bomb.zip', [{ name: '1_test.txt', data: Buffer.alloc(8 * 1024 * 1024) }]);
    const [entry] = await zipEntries(path);
    await expect(collect(entryChunks(path, entry, 1024 * 1024))).rejects.toEqual(
      new LogStreamError(
        'refused',
        `the log archive cannot be read: 1_test.txt inflates past ${1024 * 1024} bytes`,
      ),
    );
  });
});

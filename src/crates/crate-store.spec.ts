import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../config/app-config.js';
import { CrateStore } from './crate-store.js';

let dataDir: string;
let store: CrateStore;
let counter = 0;

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'crate-store-'));
  store = new CrateStore(loadConfig({ DATA_DIR: dataDir, JWT_SECRET: 'x'.repeat(40) }));
  await mkdir(join(dataDir, 'tmp'), { recursive: true });
});

afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

/** A temporary file as the downloader leaves it, with its digest. */
async function temp(content: string): Promise<{ path: string; sha256: string }> {
  counter += 1;
  const path = join(dataDir, 'tmp', `download-${counter}.zip.part`);
  await writeFile(path, content);
  return { path, sha256: createHash('sha256').update(content).digest('hex') };
}

describe('CrateStore', () => {
  it('places an archive at crates/<first two hex>/<sha256>.zip', async () => {
    const { sha256 } = await temp('a');
    expect(store.pathOf(sha256)).toBe(join(dataDir, 'crates', sha256.slice(0, 2), `${sha256}.zip`));
  });

  it('refuses anything but a SHA-256 digest as a key', () => {
    expect(() => store.pathOf('../../etc/passwd')).toThrow(/not a SHA-256/);
    expect(() => store.pathOf('A'.repeat(64))).toThrow(/not a SHA-256/);
  });

  it('moves the temporary file into the store', async () => {
    const { path, sha256 } = await temp('crate bytes');
    const stored = await store.put(path, sha256);
    expect(stored).toBe(store.pathOf(sha256));
    await expect(readFile(stored, 'utf8')).resolves.toBe('crate bytes');
    await expect(readdir(join(dataDir, 'tmp'))).resolves.toEqual([]);
    await expect(store.has(sha256)).resolves.toBe(true);
  });

  it('keeps one file for the same bytes and deletes the second temporary file', async () => {
    const first = await temp('same bytes');
    const second = await temp('same bytes');
    await store.put(first.path, first.sha256);
    await expect(store.put(second.path, second.sha256)).resolves.toBe(store.pathOf(first.sha256));
    await expect(readdir(join(dataDir, 'tmp'))).resolves.toEqual([]);
    await expect(readdir(join(dataDir, 'crates', first.sha256.slice(0, 2)))).resolves.toEqual([
      `${first.sha256}.zip`,
    ]);
  });

  it('removes an archive, and a missing one quietly', async () => {
    const { path, sha256 } = await temp('to remove');
    await store.put(path, sha256);
    await store.remove(sha256);
    await expect(store.has(sha256)).resolves.toBe(false);
    await expect(store.remove(sha256)).resolves.toBeUndefined();
  });

  it('streams a stored archive, and answers null for one that is not stored', async () => {
    const { path, sha256 } = await temp('the bytes');
    await store.put(path, sha256);
    const stream = await store.read(sha256);
    const chunks: Buffer[] = [];
    for await (const chunk of stream ?? []) {
      chunks.push(chunk as Buffer);
    }
    expect(Buffer.concat(chunks).toString()).toBe('the bytes');
    await store.remove(sha256);
    await expect(store.read(sha256)).resolves.toBeNull();
  });

  it('keeps a stream opened before the archive is removed readable to its end', async () => {
    const { path, sha256 } = await temp('still here');
    await store.put(path, sha256);
    const stream = await store.read(sha256);
    await store.remove(sha256);
    const chunks: Buffer[] = [];
    for await (const chunk of stream ?? []) {
      chunks.push(chunk as Buffer);
    }
    expect(Buffer.concat(chunks).toString()).toBe('still here');
  });

  it('sweeps temporary files older than the given age only', async () => {
    const old = await temp('old');
    const fresh = await temp('fresh');
    const now = Date.now();
    const hourAgo = new Date(now - 3600_000);
    await utimes(old.path, hourAgo, hourAgo);
    await expect(store.sweepTemp(600_000, now)).resolves.toBe(1);
    await expect(readdir(join(dataDir, 'tmp'))).resolves.toEqual([fresh.path.split('/').pop()]);
  });

  it('sweeps nothing when the temporary folder does not exist', async () => {
    await rm(join(dataDir, 'tmp'), { recursive: true });
    await expect(store.sweepTemp(0, Date.now())).resolves.toBe(0);
  });
});

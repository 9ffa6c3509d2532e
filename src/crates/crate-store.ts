import { randomUUID } from 'node:crypto';
import { copyFile, mkdir, open, readdir, rename, rm, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';

const SHA256 = /^[0-9a-f]{64}$/;

/**
 * Crate archives on disk, content-addressed: `<DATA_DIR>/crates/<first two hex>/<sha256>.zip`.
 * Versions with the same bytes share one file; the two-letter folders keep any one folder small.
 */
@Injectable()
export class CrateStore {
  private readonly root: string;
  private readonly tmp: string;
  private folders?: Promise<Set<string>>;

  constructor(config: AppConfig) {
    this.root = join(config.dataDir, 'crates');
    this.tmp = join(config.dataDir, 'tmp');
  }

  /** Throws for anything but a lower-case hex SHA-256, which also keeps paths inside the store. */
  pathOf(sha256: string): string {
    if (!SHA256.test(sha256)) {
      throw new Error(`not a SHA-256 digest: ${sha256.slice(0, 80)}`);
    }
    return join(this.root, sha256.slice(0, 2), `${sha256}.zip`);
  }

  /**
   * Moves a downloaded temporary file into the store and returns its stored path. The move
   * is a rename, so readers never see half a file. An archive stored already is replaced by
   * the same bytes (a reader that has it open keeps reading the old file): one file operation
   * instead of a look first, which under 20 concurrent registrations waited in libuv's queue
   * like any other.
   */
  async put(tempPath: string, sha256: string): Promise<string> {
    const target = this.pathOf(sha256);
    const folder = sha256.slice(0, 2);
    const folders = await this.knownFolders();
    if (!folders.has(folder)) {
      // Made first, not after a move that failed for want of it: one file operation less for
      // each of the first archives of a new store, which wait their turns like any other.
      await mkdir(join(this.root, folder), { recursive: true });
      folders.add(folder);
    }
    try {
      await moveInto(tempPath, target);
    } catch (error) {
      if (!isNotFound(error)) {
        throw error;
      }
      // The folder was removed since (by hand: the store never removes one).
      await mkdir(join(this.root, folder), { recursive: true });
      await moveInto(tempPath, target);
    }
    return target;
  }

  /** The two-letter folders there are, read once: a folder made later by another copy is made again harmlessly. */
  private knownFolders(): Promise<Set<string>> {
    this.folders ??= readdirOrEmpty(this.root).then(
      (names) => new Set(names),
      () => new Set<string>(),
    );
    return this.folders;
  }

  async has(sha256: string): Promise<boolean> {
    return exists(this.pathOf(sha256));
  }

  /**
   * A stream of a stored archive's bytes, or null when it is not stored (deleted since it was
   * looked up, by a concurrent deletion of its last version). The file is opened before this
   * resolves, so a deletion after that no longer affects the stream.
   */
  async read(sha256: string): Promise<Readable | null> {
    try {
      const handle = await open(this.pathOf(sha256), 'r');
      return handle.createReadStream();
    } catch (error) {
      if (isNotFound(error)) {
        return null;
      }
      throw error;
    }
  }

  /** Deletes a stored archive; one that is gone already is not an error. */
  async remove(sha256: string): Promise<void> {
    try {
      await unlink(this.pathOf(sha256));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
        throw error;
      }
    }
  }

  /** Every stored archive with the time it was written (a rename keeps the download's time). */
  async listArchives(): Promise<{ sha256: string; mtimeMs: number }[]> {
    const archives: { sha256: string; mtimeMs: number }[] = [];
    for (const folder of await readdirOrEmpty(this.root)) {
      for (const name of await readdirOrEmpty(join(this.root, folder))) {
        const sha256 = name.replace(/\.zip$/, '');
        if (!SHA256.test(sha256)) {
          continue;
        }
        try {
          archives.push({ sha256, mtimeMs: (await stat(join(this.root, folder, name))).mtimeMs });
        } catch (error) {
          // Removed meanwhile by a deletion in this or another copy.
          if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
            throw error;
          }
        }
      }
    }
    return archives;
  }

  /**
   * Deletes what crashed or killed downloads left in `<DATA_DIR>/tmp` longer than
   * `olderThanMs` ago (downloads in progress are younger than the download timeout).
   * Returns how many files it deleted.
   */
  async sweepTemp(olderThanMs: number, now: number): Promise<number> {
    let removed = 0;
    for (const name of await readdirOrEmpty(this.tmp)) {
      const path = join(this.tmp, name);
      try {
        const info = await stat(path);
        if (info.isFile() && now - info.mtimeMs > olderThanMs) {
          await unlink(path);
          removed += 1;
        }
      } catch (error) {
        // Another copy of the service may have swept or finished the same file meanwhile.
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
          throw error;
        }
      }
    }
    return removed;
  }
}

/** A rename, or a copy beside the target renamed there when the temporary folder is on another file system. */
async function moveInto(tempPath: string, target: string): Promise<void> {
  try {
    await rename(tempPath, target);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EXDEV') {
      throw error;
    }
    // DATA_DIR/crates mounted apart from DATA_DIR/tmp: copy beside the target, then rename
    // there, which is still atomic.
    const beside = `${target}.${randomUUID()}.part`;
    try {
      await copyFile(tempPath, beside);
      await rename(beside, target);
    } finally {
      await rm(beside, { force: true });
    }
    await rm(tempPath, { force: true });
  }
}

async function readdirOrEmpty(path: string): Promise<string[]> {
  try {
    return await readdir(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      return [];
    }
    throw error;
  }
}

// Not `instanceof Error`: errors of node:fs come from another realm under Jest's VM modules.
export function isNotFound(error: unknown): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && error.code === 'ENOENT';
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (error) {
    if (isNotFound(error)) {
      return false;
    }
    throw error;
  }
}

import { randomUUID } from 'node:crypto';
import { mkdir, open, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';

/**
 * The log tails of managed runs (API.md 17: kept after the working folder is removed), one file
 * per run in `<DATA_DIR>/run-logs/<instance id>/<run id>.log`, beside the crate store: runners
 * write them, the API's copies serve them. A file, not a column: MariaDB's TEXT stops at 64 KiB
 * and MAX_LOG_BYTES is 1 MiB. One folder per instance, so that an instance's logs go with it.
 */
@Injectable()
export class RunLogs {
  private readonly root: string;

  constructor(config: AppConfig) {
    this.root = join(config.dataDir, 'run-logs');
  }

  /** Replaces the run's log with `tail` (written aside, then renamed: a reader sees a whole file). */
  async write(instanceId: number, runId: number, tail: Buffer): Promise<void> {
    const folder = this.folderOf(instanceId);
    await mkdir(folder, { recursive: true });
    const aside = join(folder, `.${runId}.${randomUUID()}.tmp`);
    await writeFile(aside, tail);
    await rename(aside, join(folder, `${runId}.log`));
  }

  /** The run's log as it was last written, read as it is consumed; undefined when there is none yet. */
  async open(instanceId: number, runId: number): Promise<AsyncIterable<Buffer> | undefined> {
    const path = join(this.folderOf(instanceId), `${runId}.log`);
    // Opened here, so that a missing log is told before anything is sent.
    const handle = await open(path, 'r').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') {
        return undefined;
      }
      throw error;
    });
    if (!handle) {
      return undefined;
    }
    return handle.createReadStream() as AsyncIterable<Buffer>;
  }

  /** Removes every log of an instance (it was deleted). */
  async removeInstance(instanceId: number): Promise<void> {
    await rm(this.folderOf(instanceId), { recursive: true, force: true });
  }

  private folderOf(instanceId: number): string {
    if (!Number.isSafeInteger(instanceId) || instanceId < 0) {
      throw new Error(`not an instance id: ${instanceId}`);
    }
    return join(this.root, String(instanceId));
  }
}

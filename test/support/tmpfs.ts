import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A small tmpfs the test mounts (CI runs as root) to get a real ENOSPC or SQLITE_FULL: a
 * folder whose file system really fills up, and really has room again once the filler is
 * removed. Throws when it cannot mount: the fault tests must fail loudly, not pass untested.
 */
export class SmallDisk {
  private constructor(readonly dir: string) {}

  static mount(megabytes: number): SmallDisk {
    const dir = mkdtempSync(join(tmpdir(), 'small-disk-'));
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${megabytes}m,mode=0700`, 'tmpfs', dir], {
        stdio: 'pipe',
      });
    } catch (error) {
      rmSync(dir, { recursive: true, force: true });
      const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim();
      throw new Error(
        `could not mount a ${megabytes} MiB tmpfs at ${dir} (the full-disk tests need root): ${stderr ?? String(error)}`,
        { cause: error },
      );
    }
    return new SmallDisk(dir);
  }

  private get filler(): string {
    return join(this.dir, 'filler');
  }

  /** Writes until the file system refuses with ENOSPC, in large pieces then page by page; returns the bytes. */
  fill(): number {
    const fd = openSync(this.filler, 'a');
    try {
      return writeUntilFull(fd, 1024 * 1024) + writeUntilFull(fd, 4096);
    } finally {
      closeSync(fd);
    }
  }

  /** Gives the space back. */
  free(): void {
    writeFileSync(this.filler, '');
    rmSync(this.filler, { force: true });
  }

  unmount(): void {
    execFileSync('umount', ['-l', this.dir], { stdio: 'pipe' });
    rmSync(this.dir, { recursive: true, force: true });
  }
}

function writeUntilFull(fd: number, pieceBytes: number): number {
  const piece = Buffer.alloc(pieceBytes, 1);
  let written = 0;
  for (;;) {
    try {
      written += writeSync(fd, piece);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') {
        throw error;
      }
      return written;
    }
  }
}

import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { DomainError } from '../common/errors/domain-error.js';
import type { CrateFile } from '../crates/index.js';

/** Archives whose checksums are kept; each takes a path and a digest per file. */
const KEPT_ARCHIVES = 256;

/** SHA-256 (hex) of a crate file's bytes, inflated and checked as CrateFile.open reads them. */
export async function sha256Of(file: CrateFile): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of await file.open()) {
    hash.update(chunk as Buffer);
  }
  return hash.digest('hex');
}

/**
 * The SHA-256 of every file of stored crates, by archive. An archive is content-addressed (its own
 * SHA-256 names it), so what it holds never changes and its files' digests are computed once,
 * however often they are listed, and once for requests that ask together. A file the archive
 * cannot give back (encrypted, an unsupported compression) has none.
 */
@Injectable()
export class CrateChecksums {
  private readonly byArchive = new Map<string, Promise<Map<string, string>>>();

  of(archiveSha256: string, files: readonly CrateFile[]): Promise<Map<string, string>> {
    let digests = this.byArchive.get(archiveSha256);
    if (digests === undefined) {
      digests = this.compute(files);
      this.byArchive.set(archiveSha256, digests);
      // A failure (the archive deleted meanwhile) is not kept.
      digests.catch(() => this.byArchive.delete(archiveSha256));
      if (this.byArchive.size > KEPT_ARCHIVES) {
        const [oldest] = this.byArchive.keys();
        this.byArchive.delete(oldest);
      }
    }
    return digests;
  }

  private async compute(files: readonly CrateFile[]): Promise<Map<string, string>> {
    const digests = new Map<string, string>();
    for (const file of files) {
      const digest = await sha256Of(file).catch((error: unknown) => {
        if (isUnreadableEntry(error)) {
          return undefined;
        }
        throw error;
      });
      if (digest !== undefined) {
        digests.set(file.path, digest);
      }
    }
    return digests;
  }
}

/** CrateFile.open's refusal of one entry (invalid_input), as opposed to the archive going away. */
function isUnreadableEntry(error: unknown): boolean {
  return error instanceof DomainError && error.kind === 'invalid_input';
}

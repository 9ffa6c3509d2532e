import { createHash, randomUUID } from 'node:crypto';
import { open, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Injectable } from '@nestjs/common';
import { DomainError } from '../common/errors/domain-error.js';
import { isRecord } from '../common/is-record.js';
import {
  CrateDownloader,
  DEFAULT_MAX_METADATA_BYTES,
  type DownloadedCrate,
  formatBytes,
  IN_MEMORY_ARCHIVE_BYTES,
  LinkFailure,
  METADATA_FILE,
  removeQuietly,
  singleFileZip,
} from '../crates/index.js';
import {
  RepositoryHosts,
  type RepositoryArchive,
  type RepositoryHost,
  type RepositoryLink,
  type RepositorySource,
} from '../repositories/index.js';

/** What a `roc_link` gave: a zip archive in `<DATA_DIR>/tmp/` (the caller stores or removes it). */
export interface FetchedCrate {
  crate: DownloadedCrate;
  /** The ref and commit, when the link named a repository on a host. */
  source?: RepositorySource;
  /** The repository, when the link named one. */
  repository?: RepositoryLink;
  /** The repository as messages name it (`the GitHub repository o/r`), when the link named one. */
  repositoryName?: string;
}

const JSON_TYPES = new Set(['application/json', 'application/ld+json']);
const ZIP_MAGIC = Buffer.from('504b', 'hex');

/**
 * Turns any kind of `roc_link` (API.md 2.1, 7.1) into a zip archive on disk: a link to an
 * archive is downloaded as it is; a link naming a repository on a host (RepositoryHosts) becomes
 * the archive of its ref through the host's API; a link answering the metadata JSON itself (a detached crate) becomes
 * a zip holding only that file, its bytes unchanged.
 */
@Injectable()
export class CrateFetcher {
  constructor(
    private readonly downloader: CrateDownloader,
    private readonly hosts: RepositoryHosts,
  ) {}

  /** Throws DomainError('invalid_input') as the downloader does; never leaves a file behind on failure. */
  async fetch(link: string, version: string, authorization?: string): Promise<FetchedCrate> {
    const onHost = this.hosts.forLink(link);
    if (onHost) {
      const { host, repository } = onHost;
      const source = await host.resolve(repository, version);
      const archive = await host.archive(repository, source.commit);
      const crate = await this.downloadArchive(host, repository, archive);
      return { crate, source, repository, repositoryName: host.describe(repository) };
    }
    const crate = await this.downloader.download(link, authorization);
    try {
      return { crate: await this.detachedToZip(crate, link) };
    } catch (error) {
      await removeQuietly(crate.path);
      throw error;
    }
  }

  /**
   * The archive of a repository at a commit known already (a followed repository's new tag or
   * push: API.md 12), recorded as registered from `source.ref`; `link` names the repository on
   * its host. Throws as `fetch` does.
   */
  async fetchAt(link: string, repository: RepositoryLink, source: RepositorySource): Promise<FetchedCrate> {
    const onHost = this.hosts.forLink(link);
    if (!onHost) {
      throw new DomainError('invalid_input', 'the link names no repository on a known host');
    }
    const archive = await onHost.host.archive(repository, source.commit);
    const crate = await this.downloadArchive(onHost.host, repository, archive);
    return { crate, source, repository, repositoryName: onHost.host.describe(repository) };
  }

  /**
   * A repository's archive, through the guard and limits of any link: the archive host is chosen
   * by the host's answer, trusted only when the host says it is its configured origin. Failures
   * name the link the caller gave (`the link names the GitHub repository o/r, whose archive …`).
   */
  private downloadArchive(
    host: RepositoryHost,
    repository: RepositoryLink,
    archive: RepositoryArchive,
  ): Promise<DownloadedCrate> {
    return this.downloader.download(archive.url, archive.authorization, {
      subject: `the link names ${host.describe(repository)}, whose archive`,
      trusted: archive.trusted === true,
    });
  }

  /**
   * The crate archive a registry serves (API.md 10.1), through the same guarded download as any
   * link. The registry is an upstream, not the caller's input: its failures are 502s (504 when it
   * did not answer in time), whose detail names `upstream`; an answer that is not a zip archive too.
   */
  async fetchFromUpstream(
    link: string,
    authorization: string | undefined,
    upstream: string,
  ): Promise<FetchedCrate> {
    let crate: DownloadedCrate;
    try {
      crate = await this.downloader.download(link, authorization);
    } catch (error) {
      if (error instanceof LinkFailure) {
        const detail = `${upstream} failed to serve the crate: ${error.message.replace(/^the link /, 'it ')}`;
        throw new DomainError(error.timedOut ? 'gateway_timeout' : 'upstream_failed', detail);
      }
      throw error;
    }
    if (!(await startsWithZipMagic(crate))) {
      await removeQuietly(crate.path);
      throw new DomainError(
        'upstream_failed',
        `${upstream} answered something that is not a zip archive for the crate`,
      );
    }
    return { crate };
  }

  /** A detached crate (API.md 7.1) as a zip holding only its metadata; anything else unchanged. */
  private async detachedToZip(crate: DownloadedCrate, link: string): Promise<DownloadedCrate> {
    if ((await startsWithZipMagic(crate)) || !isDetached(crate.contentType, link)) {
      return crate;
    }
    if (crate.size > DEFAULT_MAX_METADATA_BYTES) {
      throw invalid(
        `the link answered a JSON document larger than ${formatBytes(DEFAULT_MAX_METADATA_BYTES)}`,
      );
    }
    const bytes = crate.bytes ?? (await readFile(crate.path));
    let document: unknown;
    try {
      document = JSON.parse(bytes.toString('utf8').replace(/^\uFEFF/, ''));
    } catch {
      throw invalid('the link answered a JSON document (a detached crate) that is not valid JSON');
    }
    if (!isRecord(document) || !('@context' in document || '@graph' in document)) {
      throw invalid(
        `the link answered JSON that is not JSON-LD (no @context or @graph): a detached crate is its ${METADATA_FILE}`,
      );
    }
    const zip = singleFileZip(METADATA_FILE, bytes);
    const path = join(dirname(crate.path), `detached-${randomUUID()}.zip.part`);
    try {
      await writeFile(path, zip, { flag: 'wx', mode: 0o600 });
    } catch (error) {
      await removeQuietly(path);
      throw error;
    }
    await removeQuietly(crate.path);
    return {
      path,
      size: zip.length,
      sha256: createHash('sha256').update(zip).digest('hex'),
      contentType: 'application/zip',
      bytes: zip.length <= IN_MEMORY_ARCHIVE_BYTES ? zip : undefined,
    };
  }
}

/** A JSON media type, or a link whose path ends in `ro-crate-metadata.json` (raw file hosts answer text/plain). */
function isDetached(contentType: string | undefined, link: string): boolean {
  if (contentType !== undefined && (JSON_TYPES.has(contentType) || contentType.endsWith('+json'))) {
    return true;
  }
  try {
    return new URL(link).pathname.endsWith(METADATA_FILE);
  } catch {
    return false;
  }
}

async function startsWithZipMagic({ path, bytes }: DownloadedCrate): Promise<boolean> {
  if (bytes) {
    return bytes.subarray(0, 2).equals(ZIP_MAGIC);
  }
  const file = await open(path, 'r');
  try {
    const head = Buffer.alloc(2);
    const { bytesRead } = await file.read(head, 0, 2, 0);
    return bytesRead === 2 && head.equals(ZIP_MAGIC);
  } finally {
    await file.close();
  }
}

function invalid(detail: string): DomainError {
  return new DomainError('invalid_input', detail);
}

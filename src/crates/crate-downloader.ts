import { createHash, randomUUID } from 'node:crypto';
import { mkdir, open, rm, type FileHandle } from 'node:fs/promises';
import { STATUS_CODES, validateHeaderValue } from 'node:http';
import { join } from 'node:path';
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Injectable } from '@nestjs/common';
import { DomainError } from '../common/errors/domain-error.js';
import { atPath } from '../common/errors/infrastructure.js';
import { OutboundError, sendRequest } from '../common/net/http-client.js';
import { AppConfig } from '../config/app-config.js';
import { formatBytes } from './byte-size.js';
import { IN_MEMORY_ARCHIVE_BYTES } from './crate-reader.js';
import { LinkFailure, UpstreamUnavailable } from './upstream-unavailable.js';

export const MAX_REDIRECTS = 5;

const CONNECTION_FAILURES = new Set([
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'ERR_STREAM_PREMATURE_CLOSE',
]);

export interface DownloadedCrate {
  /** A temporary file under `<DATA_DIR>/tmp/`; the caller moves it into the store or removes it. */
  path: string;
  size: number;
  /** Hex SHA-256 of the bytes. */
  sha256: string;
  /** The media type the link answered with (`application/json`, …), lower-case, without parameters. */
  contentType?: string;
  /**
   * The same bytes in memory, for an archive of at most IN_MEMORY_ARCHIVE_BYTES: reading the crate
   * from them spares the file operations of reading the file again, each of which waits its turn
   * in libuv's queue behind every other request's.
   */
  bytes?: Buffer;
}

/**
 * A link the service found from what the caller gave (a repository's archive, from the project
 * link), downloaded as any link but named for what the caller gave.
 */
export interface DerivedLink {
  /** How failures name it, as a sentence's subject: `the link names the GitHub repository o/r, whose archive`. */
  subject: string;
  /**
   * Its origin is a service the operator configured (API.md 2.8): reached on a private address
   * too. That origin only: a redirect anywhere else passes the guard as any link does.
   */
  trusted: boolean;
}

/** Deletes a file if it is there; a cleanup that must never hide the error that made it necessary. */
export async function removeQuietly(path: string): Promise<void> {
  try {
    await rm(path, { force: true });
  } catch {
    // Nothing left to do: a leftover in tmp/ is swept later by CrateStore.sweepTemp.
  }
}

/**
 * Downloads a crate link to a temporary file: streamed to disk with its SHA-256 computed on
 * the way, never buffered whole, bounded in size and time, refusing private addresses on
 * every redirect hop unless the settings allow them.
 */
@Injectable()
export class CrateDownloader {
  constructor(private readonly config: AppConfig) {}

  /**
   * `authorization` is sent as the `Authorization` header to the link's origin only; `derived`
   * when the service found the link itself. Throws DomainError('invalid_input') with a detail the
   * caller can show as it is; a failure of our own disk is rethrown unchanged. The temporary file
   * never outlives a failure.
   */
  async download(link: string, authorization?: string, derived?: DerivedLink): Promise<DownloadedCrate> {
    const subject = derived?.subject ?? 'the link';
    checkLink(link, subject);
    if (authorization !== undefined) {
      checkAuthorization(authorization);
    }
    const { maxCrateBytes, downloadTimeoutMs, allowPrivateNetworkLinks } = this.config.registry;
    const folder = join(this.config.dataDir, 'tmp');
    const path = join(folder, `download-${randomUUID()}.zip.part`);
    // Opened while the request goes out (a turn of the event loop less), and always awaited before
    // the cleanup below: a write stream would open its file lazily, so with a link that breaks
    // early the file could appear after the cleanup had run, and stay.
    const opening = openTemp(folder, path);
    opening.catch(() => undefined);
    // Our own copy of the deadline tells a timeout apart from other cancellations whatever
    // the client makes of the abort reason (which can come from another realm under jest).
    const deadline = AbortSignal.timeout(downloadTimeoutMs);
    try {
      const response = await sendRequest(link, {
        signal: deadline,
        timeoutMs: downloadTimeoutMs,
        allowPrivate: allowPrivateNetworkLinks,
        trustedOrigins: derived?.trusted ? [new URL(link).origin] : undefined,
        maxRedirects: MAX_REDIRECTS,
        originOnlyHeaders: authorization ? { authorization } : undefined,
      });
      if (response.status < 200 || response.status >= 300) {
        response.body.destroy();
        const phrase = STATUS_CODES[response.status];
        const detail = `${subject} answered ${response.status}${phrase ? ` ${phrase}` : ''}`;
        // A server's trouble or its rate limit may pass; any other status is about the link.
        throw response.status >= 500 || response.status === 429
          ? new UpstreamUnavailable(detail)
          : invalid(detail);
      }
      const declared = Number(response.headers['content-length']);
      if (Number.isFinite(declared) && declared > maxCrateBytes) {
        response.body.destroy();
        throw this.tooLarge(derived);
      }
      const contentType = response.headers['content-type']?.split(';')[0].trim().toLowerCase();
      const file = await opening.catch((error: unknown) => {
        response.body.destroy();
        throw error;
      });
      return { path, contentType, ...(await save(response.body, file, maxCrateBytes)) };
    } catch (error) {
      // Closing twice is harmless: the write stream of `save` may have closed it already.
      const file = await opening.catch(() => undefined);
      await file?.close().catch(() => undefined);
      await removeQuietly(path);
      throw error instanceof DomainError
        ? error
        : this.toDomainError(atPath(error, path), deadline.aborted, derived);
    }
  }

  /** Faults of the link become invalid_input; anything else (our own disk, a bug) stays as it is: a 500. */
  private toDomainError(error: unknown, deadlinePassed: boolean, derived?: DerivedLink): unknown {
    const subject = derived?.subject ?? 'the link';
    const code = connectionFailureCode(error);
    const broken =
      code !== undefined ||
      (error instanceof OutboundError && (error.reason === 'unreachable' || error.reason === 'timeout'));
    if (deadlinePassed && broken) {
      return this.timedOut(subject);
    }
    if (error instanceof OutboundError) {
      switch (error.reason) {
        case 'private_address':
          // The one setting that allows it, named: a newcomer's first crate is often on localhost.
          return invalid(
            `${subject} resolves to a private or reserved address (${privateHost(error.message)}); ` +
              'set ALLOW_PRIVATE_NETWORK_LINKS=true to allow links on this network',
          );
        case 'timeout':
          return this.timedOut(subject);
        case 'unreachable':
          return new UpstreamUnavailable(`${subject} is unreachable (${unreachableDetail(error.message)})`);
        case 'too_many_redirects':
          return invalid(`${subject} redirected more than ${MAX_REDIRECTS} times`);
        case 'bad_redirect':
          return invalid(`${subject} answered with ${error.message}`);
        case 'too_large':
          return this.tooLarge(derived);
        case 'bad_url':
          return invalid(`${subject} is not a valid http(s) URL (${error.message})`);
      }
    }
    if (code !== undefined) {
      return new UpstreamUnavailable(
        `${subject} is unreachable (the connection broke before the whole archive arrived: ${code})`,
      );
    }
    return error;
  }

  private timedOut(subject: string): DomainError {
    return new UpstreamUnavailable(
      `${subject} did not answer within ${Math.round(this.config.registry.downloadTimeoutMs / 1000)} s`,
      undefined,
      true,
    );
  }

  private tooLarge(derived?: DerivedLink): DomainError {
    const limit = formatBytes(this.config.registry.maxCrateBytes);
    return invalid(`${derived?.subject ?? 'the archive'} is larger than ${limit}`);
  }
}

/**
 * Opens a new temporary file; the folder is made only when it is missing (the first download, or
 * after someone removed it), not looked at on every download.
 */
async function openTemp(folder: string, path: string): Promise<FileHandle> {
  try {
    return await open(path, 'wx', 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw error;
    }
    await mkdir(folder, { recursive: true });
    return open(path, 'wx', 0o600);
  }
}

async function save(
  body: Readable,
  file: FileHandle,
  maxBytes: number,
): Promise<{ size: number; sha256: string; bytes?: Buffer }> {
  const hash = createHash('sha256');
  let size = 0;
  // Held back while the archive is small enough to be read from memory (see DownloadedCrate.bytes),
  // and then written at once: one write instead of one per network chunk, each of which is a turn
  // of the event loop behind every other request. A larger archive streams to the file.
  let held: Buffer[] | undefined = [];
  let bytes: Buffer | undefined;
  const meter = new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
      size += chunk.length;
      if (size > maxBytes) {
        callback(new OutboundError('too_large', `more than ${maxBytes} bytes`));
        return;
      }
      hash.update(chunk);
      if (held === undefined) {
        callback(null, chunk);
        return;
      }
      held.push(chunk);
      if (size <= IN_MEMORY_ARCHIVE_BYTES) {
        callback();
        return;
      }
      const flushed = Buffer.concat(held, size);
      held = undefined;
      callback(null, flushed);
    },
    flush(callback: TransformCallback): void {
      if (held !== undefined && size > 0) {
        bytes = Buffer.concat(held, size);
        callback(null, bytes);
        return;
      }
      callback();
    },
  });
  await pipeline(body, meter, file.createWriteStream());
  return { size, sha256: hash.digest('hex'), bytes: held && (bytes ?? Buffer.alloc(0)) };
}

function checkLink(link: string, subject: string): void {
  let url: URL;
  try {
    url = new URL(link);
  } catch {
    throw invalid(`${subject} is not a valid URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw invalid(`${subject} is not an http(s) URL (${url.protocol})`);
  }
}

function checkAuthorization(value: string): void {
  try {
    validateHeaderValue('authorization', value);
  } catch {
    throw invalid('authorization is not a valid HTTP header value');
  }
}

/** "localhost resolves to a private or reserved address" → "localhost"; never the address it resolved to. */
function privateHost(message: string): string {
  const match = /^(.*?) (?:resolves to|is) a private or reserved address$/.exec(message);
  return (match ? match[1] : message).replace(/^\[|\]$/g, '');
}

/** "nope.invalid is unreachable (ENOTFOUND)" → "nope.invalid: ENOTFOUND". */
function unreachableDetail(message: string): string {
  const match = /^(.*) is unreachable(?: \((.*)\))?$/.exec(message);
  if (!match) {
    return message;
  }
  const [, host, code] = match;
  return code ? `${host}: ${code}` : host;
}

/** Socket-level codes of a body that stopped arriving; fs errors (which carry a path) are ours, not the link's. */
function connectionFailureCode(error: unknown): string | undefined {
  // Structural, not `instanceof Error`: errors made by Node's internals can come from another realm (jest's VM).
  if (typeof error !== 'object' || error === null) {
    return undefined;
  }
  const { code, path } = error as NodeJS.ErrnoException;
  if (typeof code !== 'string' || path !== undefined) {
    return undefined;
  }
  return CONNECTION_FAILURES.has(code) || code.startsWith('HPE_') ? code : undefined;
}

function invalid(detail: string): DomainError {
  return new LinkFailure(detail);
}

import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DomainError } from '../common/errors/domain-error.js';
import { loadConfig, type AppConfig } from '../config/app-config.js';
import { LinkServer } from '../../test/fakes/link-server.js';
import { CrateDownloader, removeQuietly } from './crate-downloader.js';

const FIXTURE = fileURLToPath(
  new URL('../../test/fixtures/crates/lifemonitor-example-wf-crate.zip', import.meta.url),
);

let server: LinkServer;
let other: LinkServer;
let dataDir: string;
let fixture: Buffer;

function configWith(settings: Record<string, string> = {}): AppConfig {
  return loadConfig({
    DATA_DIR: dataDir,
    DOWNLOAD_TIMEOUT_SECONDS: '1',
    ALLOW_PRIVATE_NETWORK_LINKS: 'true',
    JWT_SECRET: 'x'.repeat(40),
    ...settings,
  });
}

function downloader(settings: Record<string, string> = {}): CrateDownloader {
  return new CrateDownloader(configWith(settings));
}

async function tempFiles(): Promise<string[]> {
  return readdir(join(dataDir, 'tmp')).catch(() => []);
}

async function expectInvalid(work: Promise<unknown>, detail: RegExp): Promise<void> {
  await expect(work).rejects.toBeInstanceOf(DomainError);
  await expect(work).rejects.toMatchObject({ kind: 'invalid_input' });
  await expect(work).rejects.toThrow(detail);
}

beforeAll(async () => {
  [server, other] = await Promise.all([LinkServer.start(), LinkServer.start()]);
  fixture = await readFile(FIXTURE);
});

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'crate-downloader-'));
  server.reset();
  other.reset();
});

afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

afterAll(async () => {
  await Promise.all([server.close(), other.close()]);
});

describe('CrateDownloader', () => {
  it('streams the archive to a temporary file under DATA_DIR/tmp with its size and SHA-256', async () => {
    const link = server.route('/crate.zip', { kind: 'file', path: FIXTURE });
    const result = await downloader().download(link);
    expect(result.path.startsWith(join(dataDir, 'tmp'))).toBe(true);
    expect(result.size).toBe(fixture.length);
    expect(result.sha256).toBe(createHash('sha256').update(fixture).digest('hex'));
    await expect(readFile(result.path)).resolves.toEqual(fixture);
  });

  it('downloads a body sent without Content-Length', async () => {
    const link = server.route('/chunked.zip', { kind: 'file', path: FIXTURE, contentLength: false });
    await expect(downloader().download(link)).resolves.toMatchObject({ size: fixture.length });
  });

  it('follows up to 5 redirects', async () => {
    server.route('/crate.zip', { kind: 'file', path: FIXTURE });
    const link = server.redirectChain('/hop', 5, '/crate.zip');
    await expect(downloader().download(link)).resolves.toMatchObject({ size: fixture.length });
    expect(server.requests.map((request) => request.path)).toEqual([
      '/hop/1',
      '/hop/2',
      '/hop/3',
      '/hop/4',
      '/hop/5',
      '/crate.zip',
    ]);
  });

  it('sends the authorization to the link origin only, not to another origin after a redirect', async () => {
    other.route('/crate.zip', { kind: 'file', path: FIXTURE });
    server.route('/same-origin', { kind: 'redirect', location: other.url('/crate.zip') });
    const link = server.route('/start', { kind: 'redirect', location: '/same-origin', status: 301 });
    await downloader().download(link, 'Bearer s3cret');
    expect(server.requests.map((request) => request.headers.authorization)).toEqual([
      'Bearer s3cret',
      'Bearer s3cret',
    ]);
    expect(other.requests).toHaveLength(1);
    expect(other.requests[0].headers).not.toHaveProperty('authorization');
  });

  it('sends no authorization header when none is given', async () => {
    const link = server.route('/crate.zip', { kind: 'file', path: FIXTURE });
    await downloader().download(link);
    expect(server.requests[0].headers).not.toHaveProperty('authorization');
  });

  it('accepts an archive of exactly the size limit', async () => {
    const link = server.route('/exact.zip', { kind: 'bytes', body: Buffer.alloc(1000, 1) });
    await expect(downloader({ MAX_CRATE_BYTES: '1000' }).download(link)).resolves.toMatchObject({
      size: 1000,
    });
  });

  describe('on failure', () => {
    afterEach(async () => {
      // Whatever went wrong, nothing is left behind.
      expect(await tempFiles()).toEqual([]);
    });

    it.each([404, 500, 401])('refuses a link answering %i, naming the status', async (status) => {
      const link = server.route('/missing.zip', { kind: 'status', status, body: 'no' });
      await expectInvalid(downloader().download(link), new RegExp(`^the link answered ${status}\\b`));
    });

    it('refuses the 6th redirect', async () => {
      server.route('/crate.zip', { kind: 'file', path: FIXTURE });
      const link = server.redirectChain('/hop', 6, '/crate.zip');
      await expectInvalid(downloader().download(link), /^the link redirected more than 5 times$/);
      expect(server.requestsTo('/crate.zip')).toHaveLength(0);
    });

    it('refuses a redirect loop', async () => {
      const link = server.route('/loop', { kind: 'redirect', location: '/loop' });
      await expectInvalid(downloader().download(link), /^the link redirected more than 5 times$/);
      expect(server.requestsTo('/loop')).toHaveLength(6);
    });

    it('refuses a redirect to a location that is not http(s)', async () => {
      const link = server.route('/ftp', { kind: 'redirect', location: 'ftp://example.org/crate.zip' });
      await expectInvalid(
        downloader().download(link),
        /^the link answered with a redirect to a non-http\(s\) location/,
      );
    });

    it('gives up on a link that never answers, once the timeout has passed, and closes the connection', async () => {
      const link = server.route('/hang', { kind: 'hang' });
      await expectInvalid(downloader().download(link), /^the link did not answer within 1 s$/);
      await server.untilUnfinished(new URL(link).pathname);
    });

    it('bounds the body by the same timeout: a link that stops sending', async () => {
      const link = server.route('/stall', {
        kind: 'stall',
        first: fixture.subarray(0, 100),
        contentLength: fixture.length,
      });
      await expectInvalid(downloader().download(link), /^the link did not answer within 1 s$/);
      await server.untilUnfinished(new URL(link).pathname);
    });

    it('bounds the body by the same timeout: a link that trickles', async () => {
      const link = server.route('/trickle', { kind: 'trickle', chunk: 'PK', intervalMs: 100, count: 100 });
      await expectInvalid(downloader().download(link), /^the link did not answer within 1 s$/);
      await server.untilUnfinished(new URL(link).pathname);
    });

    it('refuses a link on a private address unless the settings allow it', async () => {
      const link = server.route('/crate.zip', { kind: 'file', path: FIXTURE });
      const guarded = downloader({ ALLOW_PRIVATE_NETWORK_LINKS: 'false' });
      await expectInvalid(
        guarded.download(link),
        /^the link resolves to a private or reserved address \(127\.0\.0\.1\); set ALLOW_PRIVATE_NETWORK_LINKS=true to allow links on this network$/,
      );
      await expectInvalid(
        guarded.download(link.replace('127.0.0.1', 'localhost')),
        /^the link resolves to a private or reserved address \(localhost\); set ALLOW_PRIVATE_NETWORK_LINKS=true to allow links on this network$/,
      );
      expect(server.requests).toHaveLength(0);
    });

    it('reaches a derived link on a trusted origin on a private address, and nothing it redirects to', async () => {
      const guarded = downloader({ ALLOW_PRIVATE_NETWORK_LINKS: 'false' });
      const derived = { subject: 'the link names the project g/p, whose archive', trusted: true };
      const link = server.route('/archive.zip', { kind: 'file', path: FIXTURE });
      const crate = await guarded.download(link, undefined, derived);
      expect(crate.size).toBe(fixture.length);
      await removeQuietly(crate.path);
      // Another port of the same host is another origin: a neighbour, not the trusted service.
      const away = server.route('/away.zip', { kind: 'redirect', location: other.url('/crate.zip') });
      await expectInvalid(
        guarded.download(away, undefined, derived),
        /^the link names the project g\/p, whose archive resolves to a private or reserved address \(127\.0\.0\.1\); set ALLOW_PRIVATE_NETWORK_LINKS=true to allow links on this network$/,
      );
      expect(other.requests).toHaveLength(0);
      await expectInvalid(
        guarded.download(other.url('/crate.zip'), undefined, { ...derived, trusted: false }),
        /^the link names the project g\/p, whose archive resolves to a private or reserved address/,
      );
      expect(other.requests).toHaveLength(0);
    });

    it('names a derived link by its subject in every failure', async () => {
      const derived = { subject: 'the link names the project g/p, whose archive', trusted: false };
      await expectInvalid(
        downloader().download(server.route('/gone.zip', { kind: 'status', status: 404 }), undefined, derived),
        /^the link names the project g\/p, whose archive answered 404 Not Found$/,
      );
      await expectInvalid(
        downloader({ MAX_CRATE_BYTES: '1000' }).download(
          server.route('/big.zip', { kind: 'bytes', body: Buffer.alloc(5000, 1) }),
          undefined,
          derived,
        ),
        /^the link names the project g\/p, whose archive is larger than 1000 bytes$/,
      );
    });

    it('refuses an archive whose Content-Length is over the limit, before reading it', async () => {
      const link = server.route('/big.zip', { kind: 'bytes', body: Buffer.alloc(5000, 1) });
      await expectInvalid(
        downloader({ MAX_CRATE_BYTES: '1000' }).download(link),
        /^the archive is larger than 1000 bytes$/,
      );
    });

    it('stops reading an archive that grows past the limit without a Content-Length', async () => {
      const link = server.route('/big.zip', {
        kind: 'bytes',
        body: Buffer.alloc(300 * 1024, 1),
        contentLength: false,
      });
      await expectInvalid(
        downloader({ MAX_CRATE_BYTES: String(100 * 1024) }).download(link),
        /^the archive is larger than 100 KiB$/,
      );
    });

    it('names the default limit in MiB', async () => {
      const link = server.route('/huge.zip', {
        kind: 'bytes',
        body: 'x',
        headers: { 'content-length': String(200 * 1024 * 1024) },
      });
      await expectInvalid(downloader().download(link), /^the archive is larger than 100 MiB$/);
    });

    it('refuses a link that closes the connection before the whole archive arrived', async () => {
      const link = server.route('/cut.zip', {
        kind: 'cut',
        body: fixture.subarray(0, 500),
        contentLength: fixture.length,
      });
      await expectInvalid(downloader().download(link), /^the link is unreachable \(the connection broke/);
    });

    it('leaves no temporary file behind when the connection breaks at once, however the timing falls', async () => {
      const link = server.route('/cut-early.zip', { kind: 'cut', body: 'PK', contentLength: 5000 });
      for (let attempt = 0; attempt < 30; attempt++) {
        await expectInvalid(downloader().download(link), /^the link is unreachable \(the connection broke/);
        expect(await tempFiles()).toEqual([]);
      }
    });

    it('refuses a link nobody listens on', async () => {
      const closed = await LinkServer.start();
      const link = closed.url('/crate.zip');
      await closed.close();
      await expectInvalid(
        downloader().download(link),
        /^the link is unreachable \(127\.0\.0\.1:\d+: ECONNREFUSED\)$/,
      );
    });

    it('refuses links that are not http(s) URLs', async () => {
      await expectInvalid(
        downloader().download('ftp://example.org/crate.zip'),
        /^the link is not an http\(s\) URL/,
      );
      await expectInvalid(downloader().download('not a link'), /^the link is not a valid URL$/);
    });

    it('refuses an authorization that cannot be sent as a header', async () => {
      const link = server.route('/crate.zip', { kind: 'file', path: FIXTURE });
      await expectInvalid(
        downloader().download(link, 'Bearer x\r\nX-Injected: 1'),
        /^authorization is not a valid/,
      );
      expect(server.requests).toHaveLength(0);
    });
  });
});

describe('removeQuietly', () => {
  it('ignores a file that is not there', async () => {
    await expect(removeQuietly(join(dataDir, 'nothing-here'))).resolves.toBeUndefined();
  });
});

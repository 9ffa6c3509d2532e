import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { DataSource } from 'typeorm';
import { LinkServer } from '../fakes/link-server.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import { crateMetadata, crateZip, FIXTURE_CRATES, snapshot, type Snapshot } from '../support/registry.js';
import { buildZip } from '../support/zip-builder.js';

const MiB = 1024 * 1024;
const TEST = 'https://w3id.org/ro/terms/test#';

/**
 * Every 400 and 409 of API.md 2.1, each with its own detail, and after each one: no new row
 * in any table and no new file under DATA_DIR. Limits are small so that hostile archives
 * and slow links are quick to show.
 */
describe('workflow registration refusals (API.md 2.1, 2.9)', () => {
  let t: TestApp;
  let links: LinkServer;
  let alice: string;
  let database: DataSource;
  let served = 0;

  beforeAll(async () => {
    t = await createTestApp({
      DOWNLOAD_TIMEOUT_SECONDS: '2',
      MAX_CRATE_BYTES: String(MiB),
      MAX_CRATE_UNCOMPRESSED_BYTES: String(4 * MiB),
    });
    links = await LinkServer.start();
    alice = await t.userToken(['user']);
    database = t.app.get(DataSource);
  });

  afterAll(async () => {
    await links.close();
    await t.close();
  });

  const serve = (body: Buffer | string): string => links.route(`/c${++served}.zip`, { kind: 'bytes', body });

  const register = (token: string, body: Record<string, unknown>) =>
    t.http.post('/users/current/workflows').set('Authorization', `Bearer ${token}`).send(body);

  /** Registers, expects the refusal in area B's shape, and that nothing was left behind. */
  const expectRefused = async (
    body: Record<string, unknown>,
    status: 400 | 409,
    detail: string | RegExp,
    token: string = alice,
  ): Promise<void> => {
    const before: Snapshot = await snapshot(t, database);
    const response = await register(token, body);
    expect(response.status).toBe(status);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(response.body).toMatchObject({
      type: 'about:blank',
      title: status === 400 ? 'Bad Request' : 'Conflict',
      status,
    });
    if (typeof detail === 'string') {
      expect(response.body.detail).toBe(detail);
    } else {
      expect(response.body.detail).toMatch(detail);
    }
    expect(await snapshot(t, database)).toEqual(before);
  };

  describe('a body field missing or of the wrong type', () => {
    const link = 'http://127.0.0.1:9/never-fetched.zip';

    it.each<[string, Record<string, unknown>, string]>([
      ['no roc_link', { version: '1' }, 'roc_link is required'],
      [
        'roc_link not http(s)',
        { roc_link: 'ftp://example.org/c.zip', version: '1' },
        'roc_link must be an http or https URL',
      ],
      [
        'roc_link not a URL',
        { roc_link: 'crate.zip', version: '1' },
        'roc_link must be an http or https URL',
      ],
      ['roc_link a number', { roc_link: 42, version: '1' }, 'roc_link must be a string'],
      ['no version', { roc_link: link }, 'version is required'],
      [
        'version a JSON number',
        { roc_link: link, version: 1.0 },
        'version must be a JSON string (send "1.0", not 1.0)',
      ],
      ['version empty', { roc_link: link, version: '' }, 'version must not be empty'],
      [
        'version of 65 characters',
        { roc_link: link, version: 'v'.repeat(65) },
        'version must be at most 64 characters long',
      ],
      [
        'version with /',
        { roc_link: link, version: '1.0/2' },
        "version must not contain '/' or control characters",
      ],
      [
        'version with a tab',
        { roc_link: link, version: '1.0\t2' },
        "version must not contain '/' or control characters",
      ],
      [
        'version with a DEL',
        { roc_link: link, version: '1.0\u007f' },
        "version must not contain '/' or control characters",
      ],
      ['version ..', { roc_link: link, version: '..' }, "version must not be '.' or '..'"],
      ['uuid not a UUID', { roc_link: link, version: '1', uuid: 'not-a-uuid' }, 'uuid must be a UUID'],
      [
        'authorization not a string',
        { roc_link: link, version: '1', authorization: 7 },
        'authorization must be a string',
      ],
      [
        'name empty',
        { roc_link: link, version: '1', name: '' },
        'name must be longer than or equal to 1 characters',
      ],
    ])('%s', async (_label, body, detail) => {
      const before = await snapshot(t, database);
      const response = await register(alice, body);
      expect(response.status).toBe(400);
      const field = detail.split(' ')[0];
      expect(response.body).toEqual({
        type: 'about:blank',
        title: 'Bad Request',
        status: 400,
        detail,
        errors: [{ field, message: detail }],
      });
      expect(await snapshot(t, database)).toEqual(before);
    });

    it('names every bad field at once', async () => {
      const response = await register(alice, { roc_link: 'ftp://x', version: 2 });
      expect(response.status).toBe(400);
      expect(response.body.errors).toEqual([
        { field: 'roc_link', message: 'roc_link must be an http or https URL' },
        { field: 'version', message: 'version must be a JSON string (send "1.0", not 1.0)' },
      ]);
    });

    it('ignores unknown members (clients of the original send extras)', async () => {
      const response = await register(alice, {
        roc_link: serve(crateZip({ marker: randomUUID() })),
        version: '1',
        emulate: true,
        auth_token: 'ignored',
      });
      expect(response.status).toBe(201);
    });
  });

  describe('the link', () => {
    it('answering 404', async () => {
      const link = links.route('/missing.zip', { kind: 'status', status: 404, body: 'no such file' });
      await expectRefused({ roc_link: link, version: '1' }, 400, 'the link answered 404 Not Found');
    });

    it('answering 500', async () => {
      const link = links.route('/broken.zip', { kind: 'status', status: 500 });
      await expectRefused(
        { roc_link: link, version: '1' },
        400,
        'the link answered 500 Internal Server Error',
      );
    });

    it('never answering: the download is cut at the timeout and not tried again', async () => {
      const link = links.route('/hang.zip', { kind: 'hang' });
      await expectRefused({ roc_link: link, version: '1' }, 400, 'the link did not answer within 2 s');
      await links.untilUnfinished('/hang.zip');
      expect(links.requestsTo('/hang.zip')).toHaveLength(1);
    });

    it('stopping in the middle of the archive: cut by the same timeout, not tried again', async () => {
      const link = links.route('/stall.zip', { kind: 'stall', first: 'PK\u0003\u0004', contentLength: 5000 });
      await expectRefused({ roc_link: link, version: '1' }, 400, 'the link did not answer within 2 s');
      await links.untilUnfinished('/stall.zip');
      expect(links.requestsTo('/stall.zip')).toHaveLength(1);
    });

    it('closing the connection before the whole archive arrived', async () => {
      const link = links.route('/cut.zip', {
        kind: 'cut',
        body: 'PK\u0003\u0004 and some',
        contentLength: 5000,
      });
      await expectRefused(
        { roc_link: link, version: '1' },
        400,
        /^the link is unreachable \(the connection broke before the whole archive arrived: [A-Z_]+\)$/,
      );
    });

    it('where nobody listens', async () => {
      const closed = await LinkServer.start();
      const link = closed.url('/gone.zip');
      await closed.close();
      await expectRefused(
        { roc_link: link, version: '1' },
        400,
        /^the link is unreachable \(127\.0\.0\.1:\d+: ECONNREFUSED\)$/,
      );
    });

    it('redirecting in a loop', async () => {
      const link = links.route('/loop', { kind: 'redirect', location: '/loop' });
      await expectRefused({ roc_link: link, version: '1' }, 400, 'the link redirected more than 5 times');
    });

    it('redirecting a 6th time (5 redirects are followed)', async () => {
      const target = serve(crateZip({ marker: randomUUID() }));
      const six = links.redirectChain('/six', 6, target);
      await expectRefused({ roc_link: six, version: '1' }, 400, 'the link redirected more than 5 times');
      const five = links.redirectChain('/five', 5, target);
      expect((await register(alice, { roc_link: five, version: '1' })).status).toBe(201);
    });

    it('sending an archive over MAX_CRATE_BYTES, with a Content-Length', async () => {
      const link = links.route('/big.zip', { kind: 'bytes', body: Buffer.alloc(MiB + 1) });
      await expectRefused({ roc_link: link, version: '1' }, 400, 'the archive is larger than 1 MiB');
    });

    it('sending an archive over MAX_CRATE_BYTES, without a Content-Length', async () => {
      const link = links.route('/big-chunked.zip', {
        kind: 'bytes',
        body: Buffer.alloc(MiB + 1),
        contentLength: false,
      });
      await expectRefused({ roc_link: link, version: '1' }, 400, 'the archive is larger than 1 MiB');
    });

    it('with an authorization that cannot be sent as a header', async () => {
      await expectRefused(
        { roc_link: serve(crateZip()), version: '1', authorization: 'Bearer a\r\nX-Injected: 1' },
        400,
        'authorization is not a valid HTTP header value',
      );
    });
  });

  describe('the archive', () => {
    it('not a zip file', async () => {
      await expectRefused(
        { roc_link: serve('this is not a zip'), version: '1' },
        400,
        'the archive is not a zip file',
      );
    });

    it('a truncated zip file', async () => {
      const whole = crateZip();
      const truncated = whole.subarray(0, whole.length - 40);
      await expectRefused(
        { roc_link: serve(truncated), version: '1' },
        400,
        /^the archive is truncated or damaged/,
      );
    });

    it('a zip bomb by its declared sizes', async () => {
      const bomb = buildZip([
        { name: 'ro-crate-metadata.json', data: JSON.stringify(crateMetadata()) },
        { name: 'huge.bin', data: 'small', method: 'store', declaredSize: 0xfffffff0 },
      ]);
      expect(bomb.length).toBeLessThan(10_000);
      await expectRefused(
        { roc_link: serve(bomb), version: '1' },
        400,
        'the archive expands to more than 4 MiB',
      );
    });

    it('a zip bomb by its actual expansion (sizes that lie)', async () => {
      const bomb = buildZip([
        { name: 'ro-crate-metadata.json', data: ' '.repeat(8 * MiB), declaredSize: 300 },
      ]);
      expect(bomb.length).toBeLessThan(100_000);
      await expectRefused(
        { roc_link: serve(bomb), version: '1' },
        400,
        'the archive expands to more than 4 MiB',
      );
    });

    it('an entry name with ../ (zip-slip)', async () => {
      const slip = buildZip([
        { name: 'ro-crate-metadata.json', data: JSON.stringify(crateMetadata()) },
        { name: '../../evil.sh', data: 'rm -rf /' },
      ]);
      await expectRefused(
        { roc_link: serve(slip), version: '1' },
        400,
        'the archive has an unsafe entry name: "../../evil.sh"',
      );
    });

    it('an absolute entry name', async () => {
      const absolute = buildZip([
        { name: 'ro-crate-metadata.json', data: JSON.stringify(crateMetadata()) },
        { name: '/etc/cron.d/evil', data: '* * * * * root true' },
      ]);
      await expectRefused(
        { roc_link: serve(absolute), version: '1' },
        400,
        'the archive has an unsafe entry name: "/etc/cron.d/evil"',
      );
    });

    it('no ro-crate-metadata.json', async () => {
      const none = buildZip([{ name: 'README.md', data: '# not a crate' }]);
      await expectRefused(
        { roc_link: serve(none), version: '1' },
        400,
        'the crate has no ro-crate-metadata.json',
      );
    });
  });

  describe('the crate', () => {
    it('metadata that is not JSON', async () => {
      await expectRefused(
        { roc_link: serve(crateZip({}, '{"@graph": [')), version: '1' },
        400,
        'ro-crate-metadata.json is not valid JSON',
      );
    });

    it('metadata without a root dataset', async () => {
      await expectRefused(
        { roc_link: serve(crateZip({}, JSON.stringify({ '@context': {}, '@graph': [] }))), version: '1' },
        400,
        'the crate metadata has no root dataset (no ro-crate-metadata.json descriptor in its @graph)',
      );
    });

    it('no name in the body, on the root dataset or on the main workflow', async () => {
      await expectRefused(
        { roc_link: serve(crateZip({ name: null, mainName: null })), version: '1' },
        400,
        'the workflow has no name: give one in the body (name), or name the root dataset or the main workflow of the crate',
      );
    });

    it('a test instance on an unknown service type', async () => {
      const crate = crateZip({ instances: [{ id: '#ci', runsOn: `${TEST}CircleCIService` }] });
      await expectRefused(
        { roc_link: serve(crate), version: '1' },
        400,
        `a test instance uses an unknown service type: ${TEST}CircleCIService (instance #ci; known: github, travis, jenkins, gitlab, managed)`,
      );
    });

    it('a test instance whose url is not http(s)', async () => {
      const crate = crateZip({ instances: [{ id: '#ci', url: 'ftp://ci.example.org/' }] });
      await expectRefused(
        { roc_link: serve(crate), version: '1' },
        400,
        'the test instance #ci has a url that is not http(s): ftp://ci.example.org/',
      );
    });

    it('a value longer than the registry keeps', async () => {
      const crate = crateZip({ instances: [{ id: '#ci', resource: `repos/o/r/${'x'.repeat(1100)}` }] });
      await expectRefused(
        { roc_link: serve(crate), version: '1' },
        400,
        "the test instance '#ci' has a resource longer than 1024 characters",
      );
    });

    it('a name longer than the registry keeps', async () => {
      await expectRefused(
        { roc_link: serve(crateZip({ name: 'n'.repeat(600) })), version: '1' },
        400,
        "the crate's name is longer than 512 characters: give a shorter one in the body (name)",
      );
    });
  });

  describe('conflicts', () => {
    it('this uuid already has this version', async () => {
      const bytes = readFileSync(FIXTURE_CRATES.cwlBaseFreqSum);
      const first = await register(alice, { roc_link: serve(bytes), version: '1.0' });
      expect(first.status).toBe(201);
      const uuid: string = first.body.uuid;
      const detail = `The workflow ${uuid} already has a version '1.0'`;
      await expectRefused({ roc_link: serve(bytes), version: '1.0', uuid }, 409, detail);
      // Other bytes under the same version are refused just the same.
      await expectRefused(
        { roc_link: serve(crateZip({ marker: randomUUID() })), version: '1.0', uuid },
        409,
        detail,
      );
    });

    it('the uuid belongs to another user', async () => {
      const bob = await t.userToken(['user']);
      const first = await register(alice, {
        roc_link: serve(crateZip({ marker: randomUUID() })),
        version: '1',
      });
      expect(first.status).toBe(201);
      const uuid: string = first.body.uuid;
      const detail = `The workflow ${uuid} belongs to another user`;
      await expectRefused(
        { roc_link: serve(crateZip({ marker: randomUUID() })), version: '2', uuid },
        409,
        detail,
        bob,
      );
      await expectRefused(
        { roc_link: serve(crateZip({ marker: randomUUID() })), version: '1', uuid },
        409,
        detail,
        bob,
      );
      // Not even an admin adds versions to somebody else's workflow.
      const admin = await t.login();
      await expectRefused(
        { roc_link: serve(crateZip({ marker: randomUUID() })), version: '3', uuid },
        409,
        detail,
        admin,
      );
    });
  });
});

import { createHash, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { DataSource } from 'typeorm';
import { MainWorkflowBackfill } from '../../src/workflows/main-workflow-backfill.js';
import { LinkServer } from '../fakes/link-server.js';
import { createTestApp, testDatabase, type TestApp } from '../support/create-test-app.js';
import { binaryBody, FIXTURE_CRATES } from '../support/registry.js';
import {
  CWL_TOOL,
  cwlCrate,
  cwlCrateFiles,
  cwlWorkflow,
  registerCrate,
  trsValidators,
  type TrsSchema,
} from '../support/trs.js';
import { buildZip } from '../support/zip-builder.js';

const TRS = '/ga4gh/trs/v2';
const DOCKSTORE = '/api/ga4gh/v2';

const sha256 = (text: string | Buffer): string => createHash('sha256').update(text).digest('hex');

interface Reply {
  status: number;
  headers: Record<string, string>;
  body: unknown;
  text: string;
}

/**
 * GA4GH TRS v2 (API.md 10.2): every reply validated against the TRS 2.1.0 document, visibility as
 * API.md 5.1, paging, filters, descriptors, files and paths inside the stored crate.
 */
describe(`GA4GH TRS (API.md 10.2, ${testDatabase()})`, () => {
  let t: TestApp;
  let links: LinkServer;
  let alice: string;
  let bob: string;
  let admin: string;
  let aliceName: string;
  const validate = trsValidators();

  /** Registers a crate as `token`'s and returns its uuid. */
  const register = (token: string, crate: Buffer, body: Record<string, unknown> = {}): Promise<string> =>
    registerCrate(t, links, token, crate, body);

  /** A GET (or HEAD) of a TRS path, as `token` (none: anonymous), the body parsed when JSON. */
  const get = async (path: string, token?: string, method: 'GET' | 'HEAD' = 'GET'): Promise<Reply> => {
    const request = method === 'GET' ? t.http.get(path) : t.http.head(path);
    if (token) {
      request.set('Authorization', `Bearer ${token}`);
    }
    const response = await request.buffer(true).parse(binaryBody);
    const raw = Buffer.isBuffer(response.body) ? response.body : Buffer.alloc(0);
    const text = raw.toString('utf8');
    const json = /json/.test(String(response.headers['content-type'])) && text.length > 0;
    return {
      status: response.status,
      headers: response.headers,
      body: json ? (JSON.parse(text) as unknown) : raw,
      text,
    };
  };

  /** The reply, which must have this status and validate against this schema of the TRS document. */
  const expectReply = (reply: Reply, status: number, schema: TrsSchema): unknown => {
    expect({ status: reply.status, body: reply.status === status ? 'as expected' : reply.text }).toEqual({
      status,
      body: 'as expected',
    });
    expect(validate(schema, reply.body)).toEqual([]);
    return reply.body;
  };

  const trsError = async (path: string, status: number, token?: string): Promise<string> => {
    const reply = await get(path, token);
    const body = expectReply(reply, status, 'Error') as { code: number; message: string };
    expect(reply.headers['content-type']).toMatch(/^application\/json/);
    expect(body.code).toBe(status);
    return body.message;
  };

  beforeAll(async () => {
    t = await createTestApp();
    links = await LinkServer.start();
    alice = await t.userToken(['user'], `alice_${randomUUID().slice(0, 6)}`);
    bob = await t.userToken(['user']);
    admin = await t.login();
    const me = await t.http.get('/users/current').set('Authorization', `Bearer ${alice}`).expect(200);
    aliceName = (me.body as { username: string }).username;
  });

  afterAll(async () => {
    await links?.close();
    await t?.close();
  });

  describe('a public CWL workflow', () => {
    let uuid: string;
    const files = cwlCrateFiles({ marker: 'public' });
    const version = () => `${TRS}/tools/${uuid}/versions/1.0`;

    beforeAll(async () => {
      uuid = await register(alice, cwlCrate({ marker: 'public' }), { public: true });
    });

    it('is a tool with its versions, for anybody', async () => {
      const tool = expectReply(await get(`${TRS}/tools/${uuid}`), 200, 'Tool');
      const toolVersion = {
        id: '1.0',
        url: `${t.baseUrl}${version()}`,
        name: 'say public',
        descriptor_type: ['CWL'],
        verified: false,
        verified_source: [`${t.baseUrl}/status/${uuid}?version=1.0`],
        containerfile: false,
        signed: false,
        is_production: false,
        images: [],
      };
      expect(tool).toEqual({
        url: `${t.baseUrl}${TRS}/tools/${uuid}`,
        id: uuid,
        organization: aliceName,
        name: 'say public',
        toolclass: { id: 'Workflow', name: 'Workflow', description: expect.any(String) },
        has_checker: false,
        versions: [toolVersion],
      });
      expect(expectReply(await get(`${TRS}/tools/${uuid}/versions`), 200, 'ToolVersion[]')).toEqual([
        toolVersion,
      ]);
      expect(expectReply(await get(version()), 200, 'ToolVersion')).toEqual(toolVersion);
      // cwltool asks for `latest` when given no version.
      expect(expectReply(await get(`${TRS}/tools/${uuid}/versions/latest`), 200, 'ToolVersion')).toEqual(
        toolVersion,
      );
    });

    it('links to the prefix the request came by', async () => {
      const tool = expectReply(await get(`${DOCKSTORE}/tools/${uuid}`), 200, 'Tool') as {
        url: string;
        versions: { url: string }[];
      };
      expect(tool.url).toBe(`${t.baseUrl}${DOCKSTORE}/tools/${uuid}`);
      expect(tool.versions[0].url).toBe(`${t.baseUrl}${DOCKSTORE}/tools/${uuid}/versions/1.0`);
    });

    it('serves the main workflow wrapped and plain, and its import by the relative path', async () => {
      const wrapped = expectReply(await get(`${version()}/CWL/descriptor`), 200, 'FileWrapper');
      expect(wrapped).toEqual({
        content: files['workflow.cwl'],
        checksum: [{ checksum: sha256(files['workflow.cwl']), type: 'sha-256' }],
        url: `${t.baseUrl}${version()}/PLAIN_CWL/descriptor/workflow.cwl`,
      });
      for (const type of ['PLAIN_CWL', 'plain-CWL', 'plain-cwl']) {
        const plain = await get(`${version()}/${type}/descriptor`);
        expect({ type, status: plain.status, text: plain.text }).toEqual({
          type,
          status: 200,
          text: files['workflow.cwl'],
        });
        expect(plain.headers['content-type']).toMatch(/^text\/plain/);
      }
      const tool = await get(`${version()}/plain-CWL/descriptor/tools/say.cwl`);
      expect({ status: tool.status, text: tool.text }).toEqual({ status: 200, text: CWL_TOOL });
      expect(expectReply(await get(`${version()}/CWL/descriptor/tools/say.cwl`), 200, 'FileWrapper')).toEqual(
        {
          content: CWL_TOOL,
          checksum: [{ checksum: sha256(CWL_TOOL), type: 'sha-256' }],
          url: `${t.baseUrl}${version()}/PLAIN_CWL/descriptor/tools/say.cwl`,
        },
      );
    });

    it('lists the files with their types and SHA-256, and gives the archive as registered', async () => {
      const listed = expectReply(await get(`${version()}/CWL/files`), 200, 'ToolFile[]') as {
        path: string;
      }[];
      const typeOf: Record<string, string> = {
        'workflow.cwl': 'PRIMARY_DESCRIPTOR',
        'tools/say.cwl': 'SECONDARY_DESCRIPTOR',
        'checks/say-test.yml': 'TEST_FILE',
        'test/job.yml': 'TEST_FILE',
        'README.md': 'OTHER',
        'ro-crate-metadata.json': 'OTHER',
      };
      expect([...listed].sort((a, b) => a.path.localeCompare(b.path))).toEqual(
        Object.entries(files)
          .map(([path, text]) => ({
            path,
            file_type: typeOf[path],
            checksum: { checksum: sha256(text), type: 'sha-256' },
          }))
          .sort((a, b) => a.path.localeCompare(b.path)),
      );
      const zip = await get(`${version()}/CWL/files?format=zip`);
      const download = await t.http
        .get(`/workflows/${uuid}/rocrate/1.0/download`)
        .buffer(true)
        .parse(binaryBody);
      expect(zip.status).toBe(200);
      expect(zip.headers['content-type']).toBe('application/zip');
      expect(sha256(zip.body as Buffer)).toBe(sha256(download.body as Buffer));
      expect(await trsError(`${version()}/CWL/files?format=tar`, 400)).toBe('format must be zip');
    });

    it('gives its test files with their contents', async () => {
      const tests = expectReply(await get(`${version()}/CWL/tests`), 200, 'FileWrapper[]');
      expect(tests).toEqual(
        ['checks/say-test.yml', 'test/job.yml'].map((path) => ({
          content: files[path],
          checksum: [{ checksum: sha256(files[path]), type: 'sha-256' }],
          url: `${t.baseUrl}${version()}/PLAIN_CWL/descriptor/${path}`,
        })),
      );
    });

    it('answers HEAD as GET without a body', async () => {
      for (const path of [
        `${TRS}/tools/${uuid}`,
        `${TRS}/tools?limit=2`,
        `${DOCKSTORE}/tools/${uuid}/versions/1.0/CWL/files`,
        `${version()}/plain-CWL/descriptor/tools/say.cwl`,
        `${version()}/CWL/files?format=zip`,
        `${TRS}/tools/${randomUUID()}`,
      ]) {
        const got = await get(path);
        const head = await get(path, undefined, 'HEAD');
        expect({ path, status: head.status, length: head.text.length }).toEqual({
          path,
          status: got.status,
          length: 0,
        });
        for (const header of ['content-type', 'content-length', 'self_link', 'next_page', 'last_page']) {
          expect({ path, header, value: head.headers[header] }).toEqual({
            path,
            header,
            value: got.headers[header],
          });
        }
      }
    });

    it('has no container file, and no descriptor of another type', async () => {
      expect(await trsError(`${version()}/containerfile`, 404)).toMatch(/^Cannot GET /);
      expect(await trsError(`${version()}/GALAXY/descriptor`, 404)).toMatch(
        /no GALAXY descriptor \(it is CWL\)/,
      );
      expect(await trsError(`${version()}/PLAIN_WDL/files`, 404)).toMatch(/no WDL descriptor/);
      expect(await trsError(`${version()}/DOCKER/descriptor`, 400)).toMatch(/^type must be one of CWL, /);
      expect(await trsError(`${TRS}/tools/${uuid}/versions/2.0`, 404)).toMatch(/has no version '2.0'/);
    });

    it('answers a path that leaves the crate, or names no file of it, with 404', async () => {
      for (const path of [
        'nothing.cwl',
        'tools',
        'tools/',
        '..%2F..%2F..%2Fetc%2Fpasswd',
        '..%2Fworkflow.cwl',
        '%2Fetc%2Fpasswd',
        '%2Fworkflow.cwl',
        'tools%5Csay.cwl',
        '..%5C..%5Cetc%5Cpasswd',
        '%252e%252e%252fworkflow.cwl',
        '%2e%2e%2f%2e%2e%2fetc%2fpasswd',
        'tools/..%2F..%2Fworkflow.cwl',
        'C:%5Cwindows%5Cwin.ini',
        'workflow.cwl%00',
      ]) {
        const reply = await get(`${version()}/PLAIN_CWL/descriptor/${path}`);
        expect({ path, status: reply.status }).toEqual({ path, status: 404 });
        expect(validate('Error', reply.body)).toEqual([]);
      }
      // Raw `..` segments, as a client that does not normalise paths sends them.
      const raw = await rawGet(`${version()}/PLAIN_CWL/descriptor/../../../../../../etc/passwd`);
      expect(raw.status).toBe(404);
      // Inside the crate, a path may climb and come back.
      const back = await get(`${version()}/PLAIN_CWL/descriptor/tools%2F..%2Fworkflow.cwl`);
      expect({ status: back.status, text: back.text }).toEqual({ status: 200, text: files['workflow.cwl'] });
    });
    it("has nothing beside descriptor/ when the main workflow is at the crate's root", async () => {
      expect(await trsError(`${version()}/PLAIN_CWL/tools/say.cwl`, 404)).toBe(
        `The tool ${uuid} at version '1.0' has no file '../tools/say.cwl'`,
      );
      const wrapped = expectReply(await get(`${version()}/CWL/descriptor`), 200, 'FileWrapper') as {
        url: string;
      };
      expect(new URL('tools/say.cwl', wrapped.url).pathname).toBe(
        `${version()}/PLAIN_CWL/descriptor/tools/say.cwl`,
      );
    });
  });

  describe("a crate whose main workflow sits in a folder (a real crate's layout)", () => {
    let uuid: string;
    const version = () => `${TRS}/tools/${uuid}/versions/1.0`;
    const fixture = readFileSync(FIXTURE_CRATES.cwlBaseFreqSum);

    beforeAll(async () => {
      uuid = await register(bob, fixture, { public: true });
    });

    it("gives paths from the main workflow's folder, climbing (`../`) to the files above it", async () => {
      const listed = expectReply(await get(`${version()}/CWL/files`), 200, 'ToolFile[]') as {
        path: string;
        file_type: string;
      }[];
      const types = Object.fromEntries(listed.map((file) => [file.path, file.file_type]));
      expect(types).toEqual({
        'base_freq_sum.cwl': 'PRIMARY_DESCRIPTOR',
        '../tools/base_freqs.cwl': 'SECONDARY_DESCRIPTOR',
        '../tools/sum_freqs.cwl': 'SECONDARY_DESCRIPTOR',
        '../test/test1/base_freq_sum_tests.yml': 'TEST_FILE',
        '../test/test1/base_freq_sum_job.yml': 'TEST_FILE',
        '../test/test1/seqs.fa': 'TEST_FILE',
        '../test/test1/freqs_sum_exp.tsv': 'TEST_FILE',
        '../test/test2/base_freq_sum_tests.yml': 'TEST_FILE',
        '../test/test2/base_freq_sum_job.yml': 'TEST_FILE',
        '../test/test2/seqs.fa': 'TEST_FILE',
        '../test/test2/freqs_sum_exp.tsv': 'TEST_FILE',
        '../README.md': 'OTHER',
        '../LICENSE': 'OTHER',
        '../ro-crate-metadata.json': 'OTHER',
      });
      const wrapped = expectReply(
        await get(`${version()}/CWL/descriptor/..%2Ftools%2Fbase_freqs.cwl`),
        200,
        'FileWrapper',
      ) as {
        content: string;
        url: string;
      };
      expect(wrapped.content).toMatch(/^class: CommandLineTool\ncwlVersion: v1\.0/);
      expect(wrapped.url).toBe(`${t.baseUrl}${version()}/PLAIN_CWL/descriptor/..%2Ftools%2Fbase_freqs.cwl`);
      // The url works as given.
      const plain = await get(new URL(wrapped.url).pathname);
      expect({ status: plain.status, text: plain.text }).toEqual({ status: 200, text: wrapped.content });
      expect(await trsError(`${version()}/CWL/descriptor/..%2F..%2Ftools%2Fbase_freqs.cwl`, 404)).toMatch(
        /has no file/,
      );
    });
    it("resolves its relative imports against the main descriptor's url, and against cwltool's", async () => {
      const main = expectReply(await get(`${version()}/CWL/descriptor`), 200, 'FileWrapper') as {
        content: string;
        url: string;
      };
      // The main workflow's url carries its path in the crate, and works as given.
      expect(main.url).toBe(`${t.baseUrl}${version()}/PLAIN_CWL/descriptor/workflows/base_freq_sum.cwl`);
      const plainMain = await get(new URL(main.url).pathname);
      expect({ status: plainMain.status, text: plainMain.text }).toEqual({ status: 200, text: main.content });
      const listed = expectReply(await get(`${version()}/CWL/files`), 200, 'ToolFile[]') as {
        path: string;
        checksum: { checksum: string };
      }[];
      const digests = new Map(listed.map((file) => [file.path, file.checksum.checksum]));
      const imports = [...main.content.matchAll(/run: (\S+)/g)].map((match) => match[1]);
      expect(imports).toEqual(['../tools/base_freqs.cwl', '../tools/sum_freqs.cwl']);
      // cwltool's base: the PRIMARY_DESCRIPTOR's path from /files as one segment after descriptor/.
      const cwltoolBase = `${t.baseUrl}${DOCKSTORE}/tools/${uuid}/versions/1.0/plain-CWL/descriptor/base_freq_sum.cwl`;
      for (const base of [main.url, cwltoolBase]) {
        for (const run of imports) {
          const url = new URL(run, base);
          const reply = await get(url.pathname);
          expect({ url: url.href, status: reply.status, sha256: sha256(reply.text) }).toEqual({
            url: url.href,
            status: 200,
            sha256: digests.get(run),
          });
        }
      }
      expect(new URL(imports[0], cwltoolBase).pathname).toBe(
        `${DOCKSTORE}/tools/${uuid}/versions/1.0/plain-CWL/tools/base_freqs.cwl`,
      );
      // Wrapped at that path too, with the url /files' path gives.
      expect(
        expectReply(await get(`${version()}/CWL/tools/sum_freqs.cwl`), 200, 'FileWrapper'),
      ).toMatchObject({
        url: `${t.baseUrl}${version()}/PLAIN_CWL/descriptor/..%2Ftools%2Fsum_freqs.cwl`,
      });
      // Today's paths keep their meaning.
      const today = await get(`${version()}/PLAIN_CWL/descriptor/base_freq_sum.cwl`);
      expect({ status: today.status, text: today.text }).toEqual({ status: 200, text: main.content });
      const head = await get(`${version()}/plain-CWL/tools/base_freqs.cwl`, undefined, 'HEAD');
      expect({ status: head.status, length: head.headers['content-length'] }).toEqual({
        status: 200,
        length: String(Buffer.byteLength((await get(`${version()}/plain-CWL/tools/base_freqs.cwl`)).text)),
      });
    });

    it('answers a path beside descriptor/ that leaves the crate, or names no file, with a TRS 404', async () => {
      for (const path of [
        '..%2Ftools%2Fbase_freqs.cwl',
        '..%2F..%2F..%2Fetc%2Fpasswd',
        '%2Fetc%2Fpasswd',
        'tools%5Cbase_freqs.cwl',
        '%252e%252e%252fLICENSE',
        'tools/..%2F..%2FLICENSE',
        'tools',
        'tools/',
        'tools/nothing.cwl',
        'LICENSE%00',
      ]) {
        const reply = await get(`${version()}/PLAIN_CWL/${path}`);
        expect({ path, status: reply.status }).toEqual({ path, status: 404 });
        expect(validate('Error', reply.body)).toEqual([]);
      }
      const raw = await rawGet(`${version()}/PLAIN_CWL/tools/../../../../etc/passwd`);
      expect(raw.status).toBe(404);
      expect(await trsError(`${version()}/CWL/..%2FLICENSE`, 404)).toBe(
        `The tool ${uuid} at version '1.0' has no file '../../LICENSE'`,
      );
      expect(await trsError(`${version()}/DOCKER/tools/base_freqs.cwl`, 400)).toMatch(
        /^type must be one of /,
      );
      expect(await trsError(`${version()}/GALAXY/tools/base_freqs.cwl`, 404)).toMatch(/no GALAXY descriptor/);
      // Inside the crate, a path may climb and come back.
      const back = await get(`${version()}/PLAIN_CWL/test/..%2Ftools%2Fbase_freqs.cwl`);
      expect(back.status).toBe(200);
    });
  });

  describe('a Galaxy workflow (the LifeMonitor example crate)', () => {
    let uuid: string;

    beforeAll(async () => {
      uuid = await register(alice, readFileSync(FIXTURE_CRATES.lifemonitorExample), { public: true });
    });

    it('is of descriptor type GALAXY, with its test files', async () => {
      const tool = expectReply(await get(`${TRS}/tools/${uuid}`), 200, 'Tool') as {
        versions: { descriptor_type: string[] }[];
      };
      expect(tool.versions[0].descriptor_type).toEqual(['GALAXY']);
      const plain = await get(`${TRS}/tools/${uuid}/versions/1.0/PLAIN_GALAXY/descriptor`);
      expect(plain.status).toBe(200);
      expect(JSON.parse(plain.text)).toHaveProperty('a_galaxy_workflow');
      const tests = expectReply(
        await get(`${TRS}/tools/${uuid}/versions/1.0/GALAXY/tests`),
        200,
        'FileWrapper[]',
      ) as {
        url: string;
      }[];
      expect(tests.map((file) => file.url.split('/descriptor/')[1]).sort()).toEqual([
        'test/test1/input.bed',
        'test/test1/output_exp.bed',
        'test/test1/sort-and-change-case-test.yml',
      ]);
    });
  });

  describe('files that do not go inline', () => {
    let uuid: string;
    const binary = Buffer.from([0xff, 0xfe, 0x00, 0x80, 0x81]);
    const large = 'x'.repeat(1024 * 1024 + 1);

    beforeAll(async () => {
      uuid = await register(
        alice,
        cwlCrate({ marker: 'sizes' }, [
          { name: 'test/image.png', data: binary },
          { name: 'test/large.txt', data: large },
        ]),
        { public: true },
      );
    });

    it('gives a binary or large test file by its url, with its checksum', async () => {
      const version = `${TRS}/tools/${uuid}/versions/1.0`;
      const tests = expectReply(await get(`${version}/CWL/tests`), 200, 'FileWrapper[]') as {
        url: string;
        content?: string;
        checksum: { checksum: string }[];
      }[];
      const byPath = new Map(tests.map((file) => [file.url.split('/descriptor/')[1], file]));
      for (const [path, bytes] of [
        ['test/image.png', binary],
        ['test/large.txt', Buffer.from(large)],
      ] as const) {
        const file = byPath.get(path);
        expect({ path, content: file?.content, checksum: file?.checksum[0].checksum }).toEqual({
          path,
          content: undefined,
          checksum: sha256(bytes),
        });
        const plain = await get(new URL(file?.url ?? '').pathname);
        expect(sha256(Buffer.from(plain.body as Buffer))).toBe(sha256(bytes));
      }
      expect(byPath.get('test/job.yml')?.content).toBe('message: hello\n');
    });
  });

  describe('visibility (API.md 5.1)', () => {
    let privateUuid: string;
    let publicUuid: string;

    beforeAll(async () => {
      privateUuid = await register(alice, cwlCrate({ marker: 'private' }));
      publicUuid = await register(alice, cwlCrate({ marker: 'also public' }), { public: true });
    });

    const reads = (uuid: string): string[] => [
      `${TRS}/tools/${uuid}`,
      `${TRS}/tools/${uuid}/versions`,
      `${TRS}/tools/${uuid}/versions/1.0`,
      `${TRS}/tools/${uuid}/versions/1.0/CWL/descriptor`,
      `${TRS}/tools/${uuid}/versions/1.0/PLAIN_CWL/descriptor/tools/say.cwl`,
      `${TRS}/tools/${uuid}/versions/1.0/CWL/files`,
      `${TRS}/tools/${uuid}/versions/1.0/CWL/files?format=zip`,
      `${TRS}/tools/${uuid}/versions/1.0/CWL/tests`,
      `${DOCKSTORE}/tools/${uuid}/versions/1.0/CWL/files`,
    ];
    const listed = async (token: string | undefined, uuid: string): Promise<boolean> => {
      const tools = expectReply(await get(`${TRS}/tools?id=${uuid}`, token), 200, 'Tool[]') as {
        id: string;
      }[];
      return tools.some((tool) => tool.id === uuid);
    };

    it('shows a private workflow to its owner and admins only; 404 to anybody else', async () => {
      for (const [caller, token, sees] of [
        ['anonymous', undefined, false],
        ['another user', bob, false],
        ['owner', alice, true],
        ['admin', admin, true],
      ] as const) {
        for (const path of reads(privateUuid)) {
          const reply = await get(path, token);
          expect({ caller, path, status: reply.status }).toEqual({ caller, path, status: sees ? 200 : 404 });
        }
        expect({ caller, listed: await listed(token, privateUuid) }).toEqual({ caller, listed: sees });
        expect({ caller, listed: await listed(token, publicUuid) }).toEqual({ caller, listed: true });
      }
    });

    it('answers a token that is not valid with 401 in its own shape, not as anonymous', async () => {
      expect(await trsError(`${TRS}/tools/${publicUuid}`, 401, 'not-a-token')).toMatch(/token/i);
    });
  });

  describe('GET /tools: filters and paging', () => {
    const mine: string[] = [];
    let owner: string;
    let ownerName: string;

    beforeAll(async () => {
      ownerName = `carol_${randomUUID().slice(0, 6)}`;
      owner = await t.userToken(['user'], ownerName);
      for (let i = 0; i < 5; i++) {
        mine.push(await register(owner, cwlCrate({ marker: `paged ${i}` }), { public: true }));
      }
      mine.push(await register(owner, readFileSync(FIXTURE_CRATES.galaxySortChangeCase), { public: true }));
    });

    const page = async (query: string, token?: string) => {
      const reply = await get(`${TRS}/tools?${query}`, token);
      const tools = expectReply(reply, 200, 'Tool[]') as { id: string; name: string }[];
      return { tools, ids: tools.map((tool) => tool.id), headers: reply.headers };
    };

    it('pages in the list order (latest registered first) with the TRS paging headers', async () => {
      const newest = [...mine].reverse();
      const first = await page(`organization=${ownerName}&limit=4`);
      expect(first.ids).toEqual(newest.slice(0, 4));
      const base = `${t.baseUrl}${TRS}/tools?organization=${ownerName}`;
      expect(first.headers).toMatchObject({
        self_link: `${base}&offset=0&limit=4`,
        next_page: `${base}&offset=4&limit=4`,
        last_page: `${base}&offset=last&limit=4`,
        current_offset: '0',
        current_limit: '4',
      });
      const second = await page(new URL(first.headers.next_page).search.slice(1));
      expect(second.ids).toEqual(newest.slice(4));
      expect(second.headers).not.toHaveProperty('next_page');
      expect(second.headers.current_offset).toBe('4');
      const last = await page(new URL(first.headers.last_page).search.slice(1));
      expect(last.ids).toEqual(newest.slice(2));
      expect(last.headers).toMatchObject({ current_offset: 'last', self_link: first.headers.last_page });
      expect(last.headers).not.toHaveProperty('next_page');
      expect((await page(`organization=${ownerName}&offset=6`)).ids).toEqual([]);
      // The default page is TRS's 1000.
      expect((await page(`organization=${ownerName}`)).headers.current_limit).toBe('1000');
    });

    it('filters by id, name, descriptor type, organization and class', async () => {
      expect((await page(`id=${mine[2]}`)).ids).toEqual([mine[2]]);
      expect((await page(`name=say%20paged%203`)).ids).toEqual([mine[3]]);
      expect((await page(`toolname=say%20paged%203`)).ids).toEqual([mine[3]]);
      expect((await page(`name=say%20paged%203&toolname=other`)).ids).toEqual([]);
      expect((await page(`organization=${ownerName}&descriptorType=GALAXY`)).ids).toEqual([mine[5]]);
      expect((await page(`organization=${ownerName}&descriptorType=CWL&limit=2`)).ids).toEqual([
        mine[4],
        mine[3],
      ]);
      expect((await page(`organization=${ownerName}&toolClass=Workflow`)).ids).toHaveLength(6);
      expect((await page(`descriptorType=CWL&name=say%20paged%201`)).ids).toEqual([mine[1]]);
      expect((await page(`organization=nobody-${randomUUID()}`)).ids).toEqual([]);
      for (const unsatisfiable of [
        'toolClass=CommandLineTool',
        'alias=x',
        'checker=true',
        'registry=quay.io',
        'author=someone',
        'description=x',
        'tags=a,b',
      ]) {
        expect({
          unsatisfiable,
          ids: (await page(`organization=${ownerName}&${unsatisfiable}`)).ids,
        }).toEqual({
          unsatisfiable,
          ids: [],
        });
      }
      expect((await page(`organization=${ownerName}&checker=false`)).ids).toHaveLength(6);
    });

    it('refuses a bad limit, offset or descriptor type with 400', async () => {
      for (const query of [
        'limit=0',
        'limit=1001',
        'limit=x',
        'offset=-1',
        'offset=x',
        'descriptorType=FOO',
        'checker=maybe',
      ]) {
        const reply = await get(`${TRS}/tools?${query}`);
        expect({ query, status: reply.status }).toEqual({ query, status: 400 });
        expect(validate('Error', reply.body)).toEqual([]);
      }
    });
  });

  describe('verified (API.md 10.2): from the builds of the version', () => {
    let uuid: string;
    let dataSource: DataSource;

    beforeAll(async () => {
      dataSource = t.app.get(DataSource);
      uuid = await register(alice, cwlCrate({ marker: 'verified' }), { public: true });
    });

    /** A build start `daysAgo` days before now, as the builds table keeps it (UTC, to the second). */
    const startedDaysAgo = (daysAgo: number): string =>
      new Date(Date.now() - daysAgo * 24 * 3600_000).toISOString().slice(0, 19).replace('T', ' ');

    const setLatestFinished = async (status: string, runningAfter = false, daysAgo = 1): Promise<void> => {
      const [{ id }] = await dataSource.query<{ id: number | string }[]>(
        `SELECT c.instance_id AS id FROM test_check_states c
         JOIN workflow_versions v ON v.id = c.version_id JOIN workflows w ON w.id = v.workflow_id WHERE w.uuid = ?`,
        [uuid],
      );
      await dataSource.query('DELETE FROM builds WHERE instance_id = ?', [id]);
      await dataSource.query(
        `INSERT INTO builds (instance_id, build_id, status, started_at, duration_seconds, url)
         VALUES (?, ?, ?, ?, ?, ?)`,
        [id, '1', status, startedDaysAgo(daysAgo), 60, 'https://github.com/o/say/actions/runs/1'],
      );
      if (runningAfter) {
        await dataSource.query(
          `INSERT INTO builds (instance_id, build_id, status, started_at, duration_seconds, url)
           VALUES (?, ?, ?, ?, ?, ?)`,
          [id, '2', 'running', startedDaysAgo(daysAgo - 0.5), 0, 'https://github.com/o/say/actions/runs/2'],
        );
      }
    };

    const verification = async () => {
      const version = expectReply(await get(`${TRS}/tools/${uuid}/versions/1.0`), 200, 'ToolVersion') as {
        verified: boolean;
        verified_source: string[];
      };
      return { verified: version.verified, verified_source: version.verified_source };
    };

    it('is true when every instance passed its latest finished build within STALE_AFTER_DAYS, with its status page and the runs as sources', async () => {
      const statusPage = `${t.baseUrl}/status/${uuid}?version=1.0`;
      expect(await verification()).toEqual({ verified: false, verified_source: [statusPage] });
      await setLatestFinished('passed', true);
      expect(await verification()).toEqual({
        verified: true,
        verified_source: [statusPage, 'https://github.com/o/say/actions/runs/1'],
      });
      // API.md 16: a pass older than STALE_AFTER_DAYS (default 30) no longer verifies it.
      await setLatestFinished('passed', false, 31);
      expect(await verification()).toEqual({
        verified: false,
        verified_source: [statusPage, 'https://github.com/o/say/actions/runs/1'],
      });
      expect((await get(statusPage.slice(t.baseUrl.length))).status).toBe(200);
      await setLatestFinished('failed');
      expect(await verification()).toEqual({
        verified: false,
        verified_source: [statusPage, 'https://github.com/o/say/actions/runs/1'],
      });
      // The same in the list.
      const [tool] = expectReply(await get(`${TRS}/tools?id=${uuid}`), 200, 'Tool[]') as {
        versions: { verified: boolean }[];
      }[];
      expect(tool.versions[0].verified).toBe(false);
    });
  });

  describe('versions registered before the main workflow was kept', () => {
    it('get it from their archives at start-up (MainWorkflowBackfill)', async () => {
      const uuid = await register(alice, cwlCrate({ marker: 'older' }), { public: true });
      const dataSource = t.app.get(DataSource);
      await dataSource.query(
        `UPDATE workflow_versions SET main_workflow = NULL, workflow_language = NULL
         WHERE workflow_id = (SELECT w.id FROM workflows w WHERE w.uuid = ?)`,
        [uuid],
      );
      const before = expectReply(await get(`${TRS}/tools/${uuid}/versions/1.0`), 200, 'ToolVersion');
      expect(before).toMatchObject({ descriptor_type: [] });
      expect(await trsError(`${TRS}/tools/${uuid}/versions/1.0/CWL/descriptor`, 404)).toMatch(
        /no CWL descriptor/,
      );
      expect(await t.app.get(MainWorkflowBackfill).run()).toBeGreaterThanOrEqual(1);
      const after = expectReply(await get(`${TRS}/tools/${uuid}/versions/1.0`), 200, 'ToolVersion');
      expect(after).toMatchObject({ descriptor_type: ['CWL'] });
      expect((await get(`${TRS}/tools/${uuid}/versions/1.0/PLAIN_CWL/descriptor`)).text).toBe(
        cwlWorkflow('tools/say.cwl'),
      );
    });
  });

  describe('the service itself', () => {
    it('describes itself as GA4GH service-info and lists its tool classes', async () => {
      const info = expectReply(await get(`${TRS}/service-info`), 200, 'Service');
      expect(info).toMatchObject({
        type: { group: 'org.ga4gh', artifact: 'trs', version: '2.1.0' },
        organization: { url: t.baseUrl },
      });
      expect(expectReply(await get(`${DOCKSTORE}/toolClasses`), 200, 'ToolClass[]')).toEqual([
        { id: 'Workflow', name: 'Workflow', description: expect.any(String) },
      ]);
    });

    it('answers a path of no operation under either prefix in its own error shape', async () => {
      for (const path of [
        `${TRS}/nothing`,
        `${DOCKSTORE}/tools/x/y/z/w/v/u`,
        `${TRS}/tools/x/versions/1.0/CWL`,
      ]) {
        expect(await trsError(path, 404)).toMatch(/Cannot GET|No workflow/);
      }
    });

    it('refuses a crate a zip entry of which lies about its size, at read time (a zip bomb)', async () => {
      const files = cwlCrateFiles({ marker: 'bomb' });
      const uuid = await register(
        alice,
        buildZip([
          ...Object.entries(files).map(([name, data]) => ({
            name,
            data,
            declaredSize: name === 'tools/say.cwl' ? 10 : undefined,
          })),
        ]),
        { public: true },
      );
      for (const type of ['PLAIN_CWL', 'CWL']) {
        expect(
          await trsError(`${TRS}/tools/${uuid}/versions/1.0/${type}/descriptor/tools/say.cwl`, 404),
        ).toMatch(/cannot be read: tools\/say\.cwl expands past its declared size/);
      }
      const listed = expectReply(
        await get(`${TRS}/tools/${uuid}/versions/1.0/CWL/files`),
        200,
        'ToolFile[]',
      ) as { path: string; checksum?: unknown }[];
      expect(listed.find((file) => file.path === 'tools/say.cwl')).toEqual({
        path: 'tools/say.cwl',
        file_type: 'SECONDARY_DESCRIPTOR',
      });
    });
  });

  /** A GET sent byte for byte as written, `..` segments included (no client normalises them away). */
  const rawGet = (path: string): Promise<{ status: number }> =>
    new Promise((resolve, reject) => {
      const url = new URL(t.baseUrl);
      const sent = request({ host: url.hostname, port: url.port, path, method: 'GET' }, (response) => {
        response.resume();
        response.on('end', () => resolve({ status: response.statusCode ?? 0 }));
      });
      sent.on('error', reject);
      sent.end();
    });
});

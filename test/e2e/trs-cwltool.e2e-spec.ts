import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LinkServer } from '../fakes/link-server.js';
import { createTestApp, testDatabase, type TestApp } from '../support/create-test-app.js';
import { FIXTURE_CRATES } from '../support/registry.js';
import { cwlCrate, cwlCrateFiles, registerCrate } from '../support/trs.js';
import { buildZip } from '../support/zip-builder.js';

/** Debian's cwltool (3.1.20230209161050 here); scripts/run-tests.mjs refuses to run without it. */
const CWLTOOL = 'cwltool';
const CWLTOOL_TIMEOUT_MS = 60_000;

interface Run {
  code: number | null;
  output: string;
}

/**
 * A real GA4GH TRS client against the service (API.md 10.2): cwltool resolves `<uuid>:<version>`
 * through `{registry}/api/ga4gh/v2/tools/{id}/versions/{version}/CWL/files` (HEAD, then GET),
 * then loads the primary descriptor from `…/plain-CWL/descriptor/{path}` (the path percent-encoded
 * as one segment) and its relative `run:` imports resolved against that URL (cwltool's resolver.py):
 * beside it, or, climbing out of its folder (`../tools/x.cwl`), at `…/plain-CWL/tools/x.cwl`.
 */
describe(`cwltool resolves and validates a registered CWL workflow through TRS (${testDatabase()})`, () => {
  let t: TestApp;
  let links: LinkServer;
  let token: string;
  let home: string;

  const register = (crate: Buffer, body: Record<string, unknown>): Promise<string> =>
    registerCrate(t, links, token, crate, body);

  /** `cwltool --enable-ga4gh-tool-registry --add-ga4gh-tool-registry <base> --validate <tool>`. */
  const validate = (tool: string): Promise<Run> =>
    new Promise((resolve, reject) => {
      const child = spawn(
        CWLTOOL,
        ['--enable-ga4gh-tool-registry', '--add-ga4gh-tool-registry', t.baseUrl, '--validate', tool],
        // A home of its own: cwltool may write caches there; nothing leaves 127.0.0.1.
        { cwd: home, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, LANG: 'C.UTF-8' } },
      );
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
      const timer = setTimeout(() => child.kill('SIGKILL'), CWLTOOL_TIMEOUT_MS);
      // A missing cwltool fails here (ENOENT), loudly: the test is never skipped.
      child.on('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code, output });
      });
    });

  beforeAll(async () => {
    t = await createTestApp();
    links = await LinkServer.start();
    token = await t.userToken(['user']);
    home = mkdtempSync(join(tmpdir(), 'cwltool-home-'));
  });

  afterAll(async () => {
    rmSync(home, { recursive: true, force: true });
    await links?.close();
    await t?.close();
  });

  it(
    'exits 0 for a public CWL workflow with a relative run: import, by uuid:version and by uuid alone',
    async () => {
      const uuid = await register(cwlCrate({ marker: 'cwltool' }), { public: true });
      for (const tool of [`${uuid}:1.0`, uuid]) {
        const run = await validate(tool);
        expect({ tool, code: run.code, output: run.output }).toEqual({
          tool,
          code: 0,
          output: expect.stringMatching(/is valid CWL/) as unknown,
        });
        // It read the workflow from us (the plain descriptor's URL), not from anywhere else.
        expect(run.output).toContain(`/api/ga4gh/v2/tools/${uuid}/versions/`);
      }
    },
    3 * CWLTOOL_TIMEOUT_MS,
  );

  it(
    "exits 0 for LifeMonitor's ro-crate-cwl-basefreqsum, whose main workflow imports ../tools/ from workflows/",
    async () => {
      const uuid = await register(readFileSync(FIXTURE_CRATES.cwlBaseFreqSum), { public: true });
      const run = await validate(`${uuid}:1.0`);
      expect({ code: run.code, output: run.output }).toEqual({
        code: 0,
        output: expect.stringMatching(/is valid CWL/) as unknown,
      });
      expect(run.output).toContain(
        `/api/ga4gh/v2/tools/${uuid}/versions/1.0/plain-CWL/descriptor/base_freq_sum.cwl`,
      );
    },
    CWLTOOL_TIMEOUT_MS * 2,
  );

  it(
    'fails for a workflow whose import the crate lacks, and for a private one (404 to anonymous)',
    async () => {
      const files = cwlCrateFiles({ marker: 'no tool' });
      const broken = await register(
        buildZip(
          Object.entries(files)
            .filter(([name]) => name !== 'tools/say.cwl')
            .map(([name, data]) => ({ name, data })),
        ),
        { public: true },
      );
      const hidden = await register(cwlCrate({ marker: 'private' }), {});
      for (const tool of [`${broken}:1.0`, `${hidden}:1.0`]) {
        const run = await validate(tool);
        expect({ tool, failed: run.code !== 0 }).toEqual({ tool, failed: true });
      }
    },
    3 * CWLTOOL_TIMEOUT_MS,
  );
});

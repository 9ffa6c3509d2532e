import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { parse } from 'yaml';
import { isRecord } from '../../../common/is-record.js';
import { insideFolder } from '../working-folder.js';
import { CompareFail, compareCwl, type OutputFiles } from './cwltest-compare.js';
import { commandVersion, type EngineContext, type EngineResult, type LocalEngine } from './local-engine.js';

/** A cwltest-format file is read whole; anything larger is not a test list. */
const MAX_DEFINITION_BYTES = 1024 * 1024;
/** Output files compared by `contents` are read whole up to this size. */
const MAX_CONTENTS_BYTES = 1024 * 1024;

interface CwlTest {
  name: string;
  tool: string;
  job: string | null;
  output: unknown;
  shouldFail: boolean;
}

/**
 * CWL suites (API.md 17): the test definition is a file in cwltest's format (a YAML list of
 * `{tool, job, output, should_fail, id|label, doc}`, paths relative to the file), each test run
 * with cwltool. With `cwltest` installed on the runner, it runs the file itself; else each test
 * is one cwltool run whose output object is compared by cwltest's rules (cwltest-compare.ts).
 * Debian packages cwltool but not cwltest, hence both.
 */
export class CwltoolEngine implements LocalEngine {
  readonly name = 'cwltool' as const;

  version(): Promise<string | null> {
    return commandVersion('cwltool').then((line) => line?.replace(/^\S*cwltool\s+/, '') ?? null);
  }

  async run(context: EngineContext): Promise<EngineResult> {
    if ((await commandVersion('cwltest')) !== null) {
      const exitCode = await context.exec('cwltest', ['--test', context.definition, '--tool', 'cwltool'], {
        cwd: dirname(context.definition),
      });
      return exitCode === 0
        ? { outcome: 'passed', reason: 'cwltest reported every test passed', exitCode }
        : { outcome: 'failed', reason: `cwltest reported failing tests (exit ${exitCode})`, exitCode };
    }
    const tests = await this.readTests(context);
    if (typeof tests === 'string') {
      return { outcome: 'error', reason: tests, exitCode: null };
    }
    const failed: string[] = [];
    for (const [index, test] of tests.entries()) {
      const problem = await this.runTest(context, test, index);
      if (problem === undefined) {
        context.log(`test ${test.name}: passed`);
      } else {
        context.log(`test ${test.name}: FAILED: ${problem}`);
        failed.push(test.name);
      }
    }
    return failed.length === 0
      ? { outcome: 'passed', reason: `all ${tests.length} CWL tests passed`, exitCode: 0 }
      : {
          outcome: 'failed',
          reason: `${failed.length} of ${tests.length} CWL tests failed: ${failed.join(', ')}`.slice(0, 500),
          exitCode: 1,
        };
  }

  /** The tests of the definition file, or why it is not a cwltest file whose files stay in the crate. */
  private async readTests(context: EngineContext): Promise<CwlTest[] | string> {
    const { size } = await stat(context.definition);
    if (size > MAX_DEFINITION_BYTES) {
      return `the test definition is larger than ${MAX_DEFINITION_BYTES} bytes`;
    }
    let document: unknown;
    try {
      document = parse(await readFile(context.definition, 'utf8'));
    } catch (error) {
      return `the test definition is not YAML: ${(error as Error).message.split('\n')[0]}`;
    }
    if (!Array.isArray(document) || document.length === 0) {
      return 'the test definition is not a cwltest file (a YAML list of tests)';
    }
    const folder = dirname(context.definition);
    const tests: CwlTest[] = [];
    for (const [index, entry] of document.entries()) {
      if (!isRecord(entry) || typeof entry.tool !== 'string') {
        return `test ${index + 1} of the definition has no 'tool'`;
      }
      const named = [entry.id, entry.label].find(
        (value) => typeof value === 'string' || typeof value === 'number',
      );
      const name = named === undefined ? `${index + 1}` : `${named}`;
      const tool = await insideFolder(context.folder.crate, folder, entry.tool);
      if (tool === undefined) {
        return `test ${name}: its tool '${entry.tool}' is not a file of the crate`;
      }
      let job: string | null = null;
      if (typeof entry.job === 'string') {
        job = (await insideFolder(context.folder.crate, folder, entry.job)) ?? null;
        if (job === null) {
          return `test ${name}: its job '${entry.job}' is not a file of the crate`;
        }
      }
      tests.push({ name, tool, job, output: entry.output, shouldFail: entry.should_fail === true });
    }
    return tests;
  }

  /** Why the test failed, or undefined when it passed. */
  private async runTest(context: EngineContext, test: CwlTest, index: number): Promise<string | undefined> {
    const outdir = join(context.folder.root, 'out', `${index + 1}`);
    const chunks: Buffer[] = [];
    const exitCode = await context.exec(
      'cwltool',
      [
        '--quiet',
        '--outdir',
        outdir,
        '--tmpdir-prefix',
        `${context.folder.tmp}/`,
        '--tmp-outdir-prefix',
        `${context.folder.tmp}/`,
        test.tool,
        ...(test.job ? [test.job] : []),
      ],
      { cwd: dirname(test.tool), stdout: (chunk) => chunks.push(Buffer.from(chunk)) },
    );
    if (test.shouldFail) {
      return exitCode === 0 ? 'cwltool succeeded where the test expects a failure' : undefined;
    }
    if (exitCode !== 0) {
      return `cwltool exited with ${exitCode}`;
    }
    let actual: unknown;
    try {
      actual = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return 'cwltool did not print an output object';
    }
    try {
      await compareCwl(test.output ?? {}, actual, confinedFiles(context.folder.root));
      return undefined;
    } catch (error) {
      if (error instanceof CompareFail) {
        return error.message;
      }
      throw error;
    }
  }
}

/** The output files of a run, as the comparison reads them: inside its working folder only. */
function confinedFiles(root: string): OutputFiles {
  const inside = (path: string): Promise<string | undefined> => insideFolder(root, root, path);
  const kind = async (path: string): Promise<'file' | 'directory' | undefined> => {
    const real = await inside(path);
    if (real === undefined) {
      return undefined;
    }
    const info = await stat(real);
    return info.isFile() ? 'file' : info.isDirectory() ? 'directory' : undefined;
  };
  return {
    isFile: async (path) => (await kind(path)) === 'file',
    isDirectory: async (path) => (await kind(path)) === 'directory',
    async text(path) {
      const real = await inside(path);
      if (real === undefined || (await stat(real)).size > MAX_CONTENTS_BYTES) {
        return undefined;
      }
      return readFile(real, 'utf8');
    },
    async size(path) {
      const real = await inside(path);
      return real === undefined ? -1 : (await stat(real)).size;
    },
    async sha1(path) {
      const real = await inside(path);
      if (real === undefined) {
        return '';
      }
      const hash = createHash('sha1');
      for await (const chunk of createReadStream(real)) {
        hash.update(chunk as Buffer);
      }
      return `sha1$${hash.digest('hex')}`;
    },
  };
}

import { mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { needsBuild, sourcesDigest, STAMP } from '../../scripts/build-if-changed.mjs';

/** `npm start` and `npm run cli` compile only when the sources changed (scripts/build-if-changed.mjs). */
describe('the build before a start', () => {
  let root: string;
  const write = (path: string, text: string): void => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  };
  const stamp = (): void => write(STAMP, `${sourcesDigest(root)}\n`);

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'build-if-changed-'));
    for (const path of ['tsconfig.json', 'tsconfig.build.json', 'package-lock.json']) {
      write(path, '{}');
    }
    write('src/main.ts', 'export const a = 1;\n');
    write('src/auth/auth.service.ts', 'export const b = 2;\n');
    write('migrations/1-create.ts', 'export const c = 3;\n');
    write('dist/src/main.js', '');
    write('dist/src/cli.js', '');
  });

  afterEach(() => {
    rmSync(root, { recursive: true, force: true });
  });

  it('is what npm start and npm run cli run first, instead of a whole compilation every time', () => {
    const scripts = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> })
      .scripts;
    expect({ prestart: scripts.prestart, precli: scripts.precli }).toEqual({
      prestart: 'node scripts/build-if-changed.mjs',
      precli: 'node scripts/build-if-changed.mjs',
    });
  });

  it('compiles a checkout never compiled by it, and not again while nothing changed', () => {
    expect(needsBuild(root)).toBe(true);
    stamp();
    expect(needsBuild(root)).toBe(false);
    // Rewritten with the same bytes (a checkout, a touch): nothing to compile.
    write('src/main.ts', 'export const a = 1;\n');
    expect(needsBuild(root)).toBe(false);
  });

  it.each([
    ['a source changes', () => write('src/auth/auth.service.ts', 'export const b = 3;\n')],
    ['a source is added', () => write('src/auth/new.ts', 'export const d = 4;\n')],
    ['a source is removed', () => unlinkSync(join(root, 'src/main.ts'))],
    ['a migration changes', () => write('migrations/1-create.ts', 'export const c = 4;\n')],
    ['the compiler settings change', () => write('tsconfig.build.json', '{"compilerOptions": {}}')],
    ['the dependencies change', () => write('package-lock.json', '{"lockfileVersion": 3}')],
    ['dist/ lost the entry point', () => unlinkSync(join(root, 'dist/src/cli.js'))],
  ])('compiles again when %s', (_case, change) => {
    stamp();
    change();
    expect(needsBuild(root)).toBe(true);
  });
});

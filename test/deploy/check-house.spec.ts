import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { circles, importGraph, longFiles, MAX_LINES } from '../../scripts/check-house.mjs';

/** The house's rules (scripts/check-house.mjs, run by .ci/run): no file past 600 lines, no import circle. */
describe('the house check', () => {
  let root: string;
  const write = (path: string, text: string): string => {
    const file = join(root, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
    return file;
  };

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'house-'));
  });

  afterEach(() => {
    rmSync(root, { recursive: true, force: true });
  });

  it('finds a circle of type-only imports, re-exports and index files, and nothing in a tree without one', () => {
    const a = write('a/a.ts', "import type { B } from '../b/b.js';\nexport interface A { b: B }\n");
    const b = write('b/b.ts', "export { C } from '../c/index.js';\nexport interface B { n: number }\n");
    const c = write('c/index.ts', "import { A } from '../a/a.js';\nexport type C = A;\n");
    const d = write('d.ts', "import { A } from './a/a.js';\nexport const d = (x: A) => x;\n");
    expect(circles(importGraph([a, b, c, d]))).toEqual([[a, b, c].sort()]);
    writeFileSync(c, 'export type C = number;\n');
    expect(circles(importGraph([a, b, c, d]))).toEqual([]);
  });

  it('finds a dynamic import() in a circle, and ignores packages', () => {
    const a = write(
      'a.ts',
      "import { b } from './b.js';\nimport { pino } from 'pino';\nexport const a = b;\n",
    );
    const b = write('b.ts', "export const b = () => import('./a.js');\n");
    expect(circles(importGraph([a, b]))).toEqual([[a, b]]);
  });

  it('names a file past the limit and not one at it', () => {
    const at = write('at.ts', 'x;\n'.repeat(MAX_LINES));
    const past = write('past.ts', 'x;\n'.repeat(MAX_LINES + 1));
    expect(longFiles([at, past])).toEqual([{ file: past, lines: MAX_LINES + 1 }]);
  });
});

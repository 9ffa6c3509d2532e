import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from './config-error.js';
import { loadFailurePatterns } from './failure-patterns-file.js';

describe('loadFailurePatterns', () => {
  let folder: string;
  beforeEach(() => {
    folder = mkdtempSync(join(tmpdir(), 'patterns-'));
  });
  afterEach(() => rmSync(folder, { recursive: true, force: true }));

  function file(text: string): string {
    const path = join(folder, 'patterns.yaml');
    writeFileSync(path, text);
    return path;
  }

  it('has none when the setting is unset', () => {
    expect(loadFailurePatterns(undefined, {})).toEqual([]);
  });

  it('reads `patterns:` and the bare list alike', () => {
    const row = { class: 'infrastructure', reason: 'our proxy', pattern: 'proxy\\.example\\.org.*refused' };
    const yaml = `- class: infrastructure\n  reason: our proxy\n  pattern: 'proxy\\.example\\.org.*refused'\n`;
    expect(loadFailurePatterns(file(`patterns:\n${yaml.replace(/^/gm, '  ')}`), {})).toEqual([row]);
    expect(loadFailurePatterns(file(yaml), {})).toEqual([row]);
  });

  it('refuses rows that are not three strings, one line each', () => {
    const path = file('patterns:\n  - class: test\n    reason: no pattern\n  - just text\n');
    expect(() => loadFailurePatterns(path, {})).toThrow(
      new ConfigError(
        'FAILURE_PATTERNS_FILE',
        'patterns[0] needs pattern (text)\n' +
          'Invalid setting FAILURE_PATTERNS_FILE: patterns[1] must be a mapping of class, reason and pattern',
      ),
    );
  });

  it('refuses a document without a list', () => {
    expect(() => loadFailurePatterns(file('patterns: 3\n'), {})).toThrow(/must have a 'patterns' list/);
  });
});

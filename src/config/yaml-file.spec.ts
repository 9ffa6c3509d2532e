import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readYamlFile } from './yaml-file.js';

describe('readYamlFile', () => {
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'yaml-file-'));
  });

  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  function read(text: string, env: NodeJS.ProcessEnv): unknown {
    const path = join(dir, 'file.yaml');
    writeFileSync(path, text);
    return readYamlFile('CLOUDS_FILE', path, env);
  }

  it('keeps an expanded value a string, even when it looks like a number', () => {
    expect(read('password: ${P}\n', { P: '0123' })).toEqual({ password: '0123' });
  });

  it('keeps a # in an expanded value', () => {
    expect(read('password: ${P}\n', { P: 'abc #x' })).toEqual({ password: 'abc #x' });
  });

  it('expands nothing in comments', () => {
    expect(read('# uses ${UNSET}\nlist: [a, "${P}"]\n', { P: 'p' })).toEqual({ list: ['a', 'p'] });
  });

  it('refuses a variable that is not set, naming the setting', () => {
    expect(() => read('password: ${UNSET}\n', {})).toThrow(
      /^Invalid setting CLOUDS_FILE: .+ refers to \$\{UNSET\}, which is not set$/,
    );
  });
});

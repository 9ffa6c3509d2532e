import { folderOf, pathInCrate, resolveInCrate } from './crate-paths.js';

describe('resolveInCrate', () => {
  it.each([
    ['', 'workflow.cwl', 'workflow.cwl'],
    ['', './tools//say.cwl', 'tools/say.cwl'],
    ['workflows', '../tools/say.cwl', 'tools/say.cwl'],
    ['a/b', '../../c.txt', 'c.txt'],
    ['', 'tools/../workflow.cwl', 'workflow.cwl'],
  ])('%s + %s is %s', (folder, relative, resolved) => {
    expect(resolveInCrate(folder, relative)).toBe(resolved);
  });

  it.each([
    ['', '../etc/passwd'],
    ['workflows', '../../etc/passwd'],
    ['', 'tools/../../x'],
    ['', '/etc/passwd'],
    ['', 'tools\\say.cwl'],
    ['', '..\\..\\etc\\passwd'],
    ['', 'say.cwl\0'],
    ['', 'tools/'],
    ['', '.'],
    ['', ''],
  ])('refuses %s + %j: it leaves the crate, is absolute or names no file', (folder, relative) => {
    expect(resolveInCrate(folder, relative)).toBeUndefined();
  });
});

describe('pathInCrate', () => {
  it.each([
    ['workflow/main.cwl', 'workflow/main.cwl'],
    ['./main.cwl', 'main.cwl'],
    ['my%20workflow.cwl', 'my workflow.cwl'],
  ])('%s names %s', (id, path) => {
    expect(pathInCrate(id)).toBe(path);
  });

  it.each(['https://example.org/main.cwl', 'file:///main.cwl', '#cwl', './', '../main.cwl', '%E0%A4%A.cwl'])(
    '%s names no file of the crate',
    (id) => {
      expect(pathInCrate(id)).toBeUndefined();
    },
  );
});

describe('folderOf', () => {
  it('is the folder of a path, empty at the root', () => {
    expect(folderOf('a/b/c.cwl')).toBe('a/b');
    expect(folderOf('c.cwl')).toBe('');
  });
});

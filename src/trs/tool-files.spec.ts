import {
  cratePathsOf,
  descriptorUrlPathOf,
  fileTypeOf,
  parseRequestedType,
  toolPathInUrl,
  toolPathOf,
} from './tool-files.js';

describe('parseRequestedType', () => {
  it.each([
    ['CWL', { language: 'CWL', plain: false }],
    ['cwl', { language: 'CWL', plain: false }],
    ['PLAIN_CWL', { language: 'CWL', plain: true }],
    ['plain-CWL', { language: 'CWL', plain: true }],
    ['Plain_galaxy', { language: 'GALAXY', plain: true }],
    ['NFL', { language: 'NFL', plain: false }],
  ])('%s is %o', (type, parsed) => {
    expect(parseRequestedType(type)).toEqual(parsed);
  });

  it.each(['DOCKER', 'PLAIN', 'PLAIN_', 'PLAIN__CWL', 'plain CWL', 'CWL2', ''])('%j is no type', (type) => {
    expect(parseRequestedType(type)).toBeUndefined();
  });
});

describe('fileTypeOf (API.md 10.2)', () => {
  const crate = {
    mainWorkflowPath: 'workflows/main.cwl',
    language: 'CWL' as const,
    testDefinitionPaths: ['checks/main-test.yml'],
  };

  it.each([
    ['workflows/main.cwl', 'PRIMARY_DESCRIPTOR'],
    ['tools/say.cwl', 'SECONDARY_DESCRIPTOR'],
    ['checks/main-test.yml', 'TEST_FILE'],
    ['test/job.yml', 'TEST_FILE'],
    ['workflows/tests/job.yml', 'TEST_FILE'],
    ['tests/extra.cwl', 'TEST_FILE'],
    ['testing/job.yml', 'OTHER'],
    ['README.md', 'OTHER'],
    ['ro-crate-metadata.json', 'OTHER'],
  ])('%s is %s', (path, type) => {
    expect(fileTypeOf(path, crate)).toBe(type);
  });

  it("names secondary descriptors by the main workflow's language", () => {
    const galaxy = { mainWorkflowPath: 'main.ga', language: 'GALAXY' as const, testDefinitionPaths: [] };
    expect(fileTypeOf('sub.ga', galaxy)).toBe('SECONDARY_DESCRIPTOR');
    expect(fileTypeOf('sub.gxwf.yml', galaxy)).toBe('SECONDARY_DESCRIPTOR');
    expect(fileTypeOf('tools/say.cwl', galaxy)).toBe('OTHER');
    const snakemake = {
      mainWorkflowPath: 'workflow/Snakefile',
      language: 'SMK' as const,
      testDefinitionPaths: [],
    };
    expect(fileTypeOf('workflow/rules/align.smk', snakemake)).toBe('SECONDARY_DESCRIPTOR');
    expect(fileTypeOf('other/Snakefile', snakemake)).toBe('SECONDARY_DESCRIPTOR');
    const none = { mainWorkflowPath: 'main.cwl', language: null, testDefinitionPaths: [] };
    expect(fileTypeOf('tools/say.cwl', none)).toBe('OTHER');
  });
});

describe('tool paths', () => {
  it("are relative to the main workflow's folder", () => {
    expect(toolPathOf('tools/say.cwl', 'main.cwl')).toBe('tools/say.cwl');
    expect(toolPathOf('tools/say.cwl', 'workflows/main.cwl')).toBe('../tools/say.cwl');
    expect(toolPathOf('workflows/sub/x.cwl', 'workflows/main.cwl')).toBe('sub/x.cwl');
    expect(toolPathOf('README.md', undefined)).toBe('README.md');
  });

  it('go into URLs segment by segment, or whole when they climb', () => {
    expect(toolPathInUrl('tools/say it.cwl')).toBe('tools/say%20it.cwl');
    expect(toolPathInUrl('../tools/say.cwl')).toBe('..%2Ftools%2Fsay.cwl');
  });
});

describe('descriptor URLs (API.md 10.2)', () => {
  const main = 'workflows/base_freq_sum.cwl';

  it("take a path after descriptor/ from the main workflow's folder, then from the crate's root", () => {
    expect(cratePathsOf(main, { after: 'descriptor', path: 'base_freq_sum.cwl' })).toEqual([
      'workflows/base_freq_sum.cwl',
      'base_freq_sum.cwl',
    ]);
    expect(cratePathsOf(main, { after: 'descriptor', path: 'tools/base_freqs.cwl' })).toEqual([
      'workflows/tools/base_freqs.cwl',
      'tools/base_freqs.cwl',
    ]);
    expect(cratePathsOf(main, { after: 'descriptor', path: '../tools/base_freqs.cwl' })).toEqual([
      'tools/base_freqs.cwl',
    ]);
    expect(cratePathsOf('main.cwl', { after: 'descriptor', path: 'tools/say.cwl' })).toEqual([
      'tools/say.cwl',
    ]);
  });

  it("take a path right after {type}/ from the main workflow's parent folder", () => {
    expect(cratePathsOf(main, { after: 'type', path: 'tools/base_freqs.cwl' })).toEqual([
      'tools/base_freqs.cwl',
    ]);
    expect(cratePathsOf('a/b/main.cwl', { after: 'type', path: 'tools/x.cwl' })).toEqual(['a/tools/x.cwl']);
    expect(cratePathsOf('main.cwl', { after: 'type', path: 'tools/say.cwl' })).toEqual([]);
  });

  it.each([
    ['descriptor', '../../etc/passwd'],
    ['descriptor', '/etc/passwd'],
    ['descriptor', 'tools\\say.cwl'],
    ['descriptor', 'tools/'],
    ['type', '../tools/base_freqs.cwl'],
    ['type', '/etc/passwd'],
    ['type', '../../../etc/passwd'],
    ['type', 'tools/base_freqs.cwl\0'],
  ] as const)('name nothing for a path after %s/ that leaves the crate: %j', (after, path) => {
    expect(cratePathsOf(main, { after, path })).toEqual([]);
  });

  it("resolve relative imports against the main workflow's url to its files", () => {
    const files = new Set([main, 'tools/base_freqs.cwl', 'tools/sum_freqs.cwl']);
    const base = `https://trs.test/v/1.0/PLAIN_CWL/descriptor/${descriptorUrlPathOf(main, main, (path) => files.has(path))}`;
    expect(base).toBe('https://trs.test/v/1.0/PLAIN_CWL/descriptor/workflows/base_freq_sum.cwl');
    const imported = new URL('../tools/base_freqs.cwl', base).pathname.split('/descriptor/')[1];
    const [found] = cratePathsOf(main, { after: 'descriptor', path: imported }).filter((path) =>
      files.has(path),
    );
    expect(found).toBe('tools/base_freqs.cwl');
    // What cwltool resolves against: the tool path it puts after descriptor/ as one segment.
    const cwltool = new URL(
      '../tools/base_freqs.cwl',
      'https://trs.test/v/1.0/plain-CWL/descriptor/base_freq_sum.cwl',
    );
    const climbed = cwltool.pathname.split('/plain-CWL/')[1];
    expect(climbed).toBe('tools/base_freqs.cwl');
    expect(cratePathsOf(main, { after: 'type', path: climbed })).toEqual(['tools/base_freqs.cwl']);
  });

  it('give the main workflow by its tool path where its crate path names another file from its folder', () => {
    const files = new Set([main, 'workflows/workflows/base_freq_sum.cwl']);
    expect(descriptorUrlPathOf(main, main, (path) => files.has(path))).toBe('base_freq_sum.cwl');
  });

  it('give other files by their tool path, and a main workflow at the root by its name', () => {
    expect(descriptorUrlPathOf('tools/base_freqs.cwl', main, () => true)).toBe('../tools/base_freqs.cwl');
    expect(descriptorUrlPathOf('main.cwl', 'main.cwl', () => true)).toBe('main.cwl');
  });
});

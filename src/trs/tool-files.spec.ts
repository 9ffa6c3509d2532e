import { fileTypeOf, parseRequestedType, toolPathInUrl, toolPathOf } from './tool-files.js';

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

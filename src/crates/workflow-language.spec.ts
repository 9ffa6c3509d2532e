import { workflowLanguageOf } from './workflow-language.js';

const main = (id: string, name?: string) => ({
  id: 'main',
  types: ['File'],
  programmingLanguage: name === undefined ? { id } : { id, name },
});

describe('workflowLanguageOf', () => {
  it.each([
    ['#cwl', undefined, 'CWL'],
    ['https://w3id.org/workflowhub/workflow-ro-crate#galaxy', undefined, 'GALAXY'],
    ['#nextflow', undefined, 'NFL'],
    ['https://w3id.org/workflowhub/workflow-ro-crate#snakemake', undefined, 'SMK'],
    ['#wdl', undefined, 'WDL'],
    ['#lang', 'Common Workflow Language', 'CWL'],
    ['#lang', 'Workflow Description Language', 'WDL'],
    ['https://w3id.org/cwl/v1.2/', undefined, 'CWL'],
    ['https://www.commonwl.org/', undefined, 'CWL'],
    ['https://galaxyproject.org/', undefined, 'GALAXY'],
    ['https://www.nextflow.io/', undefined, 'NFL'],
  ])('%s (%s) is %s', (id, name, language) => {
    expect(workflowLanguageOf(main(id, name))).toBe(language);
  });

  it('is undefined for another language, none, or no main workflow', () => {
    expect(workflowLanguageOf(main('#knime', 'KNIME'))).toBeUndefined();
    expect(workflowLanguageOf(main('https://example.org/galaxyish'))).toBeUndefined();
    expect(workflowLanguageOf({ id: 'main', types: [] })).toBeUndefined();
    expect(workflowLanguageOf(undefined)).toBeUndefined();
  });
});

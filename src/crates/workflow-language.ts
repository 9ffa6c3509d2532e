import type { ParsedWorkflow } from './ro-crate-parser.js';

/**
 * The workflow languages the registry tells apart, named as GA4GH TRS names its descriptor types
 * (API.md 10.2), which are the names workflow registries and their clients share.
 */
export const WORKFLOW_LANGUAGES = ['CWL', 'GALAXY', 'NFL', 'SMK', 'WDL'] as const;

export type WorkflowLanguage = (typeof WORKFLOW_LANGUAGES)[number];

/**
 * What crates write for each language: the last segment of the language's @id (Workflow RO-Crate's
 * `#cwl`, `…/workflow-ro-crate#galaxy`), its name, or the host of its site; compared lower-case,
 * letters and digits only.
 */
const SPELLINGS: Record<WorkflowLanguage, { words: string[]; hosts: string[] }> = {
  CWL: { words: ['cwl', 'commonworkflowlanguage'], hosts: ['commonwl.org', 'w3id.org/cwl'] },
  GALAXY: { words: ['galaxy'], hosts: ['galaxyproject.org'] },
  NFL: { words: ['nextflow', 'nfl'], hosts: ['nextflow.io'] },
  SMK: { words: ['snakemake', 'smk'], hosts: ['snakemake.github.io', 'snakemake.readthedocs.io'] },
  WDL: { words: ['wdl', 'workflowdescriptionlanguage'], hosts: ['openwdl.org'] },
};

/** The language of a crate's main workflow from its `programmingLanguage`; undefined for any other or none. */
export function workflowLanguageOf(workflow: ParsedWorkflow | undefined): WorkflowLanguage | undefined {
  const language = workflow?.programmingLanguage;
  if (!language) {
    return undefined;
  }
  const segment =
    language.id
      .replace(/[#/]+$/, '')
      .split(/[#/]/)
      .pop() ?? '';
  const words = [segment, language.name ?? ''].map((text) => text.toLowerCase().replace(/[^a-z0-9]/g, ''));
  const iri = language.id.toLowerCase();
  return WORKFLOW_LANGUAGES.find(
    (candidate) =>
      SPELLINGS[candidate].words.some((word) => words.includes(word)) ||
      SPELLINGS[candidate].hosts.some((host) => iri.includes(`//${host}`) || iri.includes(`.${host}`)),
  );
}

import { buildZip, type ZipEntrySpec } from './zip-builder.js';

const TEST = 'https://w3id.org/ro/terms/test#';

/** sha1 of "hello\n": what `echo hello` writes. */
export const HELLO_SHA1 = 'sha1$f572d396fae9206628714fb2ce00f72e94f2258f';

const tool = (command: string[], stdout = true): string =>
  [
    'cwlVersion: v1.0',
    'class: CommandLineTool',
    `baseCommand: ${JSON.stringify(command)}`,
    ...(stdout ? ['stdout: out.txt'] : []),
    'inputs: []',
    stdout ? 'outputs:\n  out:\n    type: stdout' : 'outputs: []',
    '',
  ].join('\n');

/** Small CWL tools with cwltest files, one per way a managed run can end (API.md 17). */
export const CWL_SUITES = {
  /** echo hello, expected by checksum, size, basename and `location: Any`. */
  passing: {
    tool: tool(['echo', 'hello']),
    expected: { out: { class: 'File', basename: 'out.txt', checksum: HELLO_SHA1, size: 6, location: 'Any' } },
  },
  /** The same tool, but the test expects other bytes. */
  failing: {
    tool: tool(['echo', 'hello']),
    expected: {
      out: { class: 'File', checksum: 'sha1$0000000000000000000000000000000000000000', location: 'Any' },
    },
  },
  /** Never ends on its own. */
  endless: { tool: tool(['sleep', '3600']), expected: {} },
  /** Writes without end to its standard output, which cwltool passes on to the log. */
  loud: {
    tool: tool(['sh', '-c', 'yes xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'], false),
    expected: {},
  },
  /** Starts processes until it cannot, each waiting a minute (the run's wall time ends it first). */
  forking: {
    tool: tool(['sh', '-c', 'for i in $(seq 1 400); do sleep 60 & done; wait'], false),
    expected: {},
  },
  /** Leaves a process behind, in a session of its own whose parent exited, and passes. */
  daemon: {
    tool: tool(['sh', '-c', 'setsid sleep 600 </dev/null >/dev/null 2>&1 & echo started'], false),
    expected: {},
  },
  /**
   * Prints its environment, every process's environment it can read (the runner's among them) and
   * a file four folders above cwltool's HOME for the tool (`<run>/tmp/<x>`) (where the spec keeps a secret, 0600).
   */
  snooping: {
    tool: tool(
      [
        'sh',
        '-c',
        'env; for p in $(seq 1 2000); do cat /proc/$p/environ 2>/dev/null; done; cat "$HOME/../../../../secret" 2>&1; true',
      ],
      false,
    ),
    expected: {},
  },
} as const;

export type CwlSuiteKind = keyof typeof CWL_SUITES;

export interface ManagedCrateOptions {
  /** The suite's definition @id (default `tests/test.cwltest.yml`). */
  definitionPath?: string;
  /** The runsOn term (default ManagedService). */
  runsOn?: string;
  /** The instance's resource: the executor (default none: `local`). */
  resource?: string;
  engine?: string;
  /** Replaces the cwltest file's text. */
  definitionText?: string;
  extraEntries?: ZipEntrySpec[];
}

/** The metadata of a crate whose one suite runs on a managed instance. */
export function managedCrateMetadata(name: string, options: ManagedCrateOptions = {}): object {
  const definition = options.definitionPath ?? 'tests/test.cwltest.yml';
  return {
    '@context': 'https://w3id.org/ro/crate/1.1/context',
    '@graph': [
      {
        '@id': 'ro-crate-metadata.json',
        '@type': 'CreativeWork',
        about: { '@id': './' },
        conformsTo: { '@id': 'https://w3id.org/ro/crate/1.1' },
      },
      { '@id': './', '@type': 'Dataset', name, mainEntity: { '@id': 'tool.cwl' } },
      {
        '@id': 'tool.cwl',
        '@type': ['File', 'SoftwareSourceCode', 'ComputationalWorkflow'],
        name,
        programmingLanguage: { '@id': '#cwl' },
      },
      { '@id': '#cwl', '@type': 'ComputerLanguage', name: 'Common Workflow Language' },
      {
        '@id': '#suite1',
        '@type': 'TestSuite',
        name: 'managed suite',
        instance: [{ '@id': '#managed1' }],
        definition: { '@id': definition },
      },
      {
        '@id': '#managed1',
        '@type': 'TestInstance',
        name: 'run by the service',
        runsOn: { '@id': `${TEST}${options.runsOn ?? 'ManagedService'}` },
        url: 'https://lifemonitor.example.org/',
        resource: options.resource ?? '',
      },
      {
        '@id': definition,
        '@type': ['File', 'TestDefinition'],
        conformsTo: { '@id': `${TEST}${options.engine ?? 'CwltoolEngine'}` },
      },
    ],
  };
}

/** The cwltest file of one test of `tool.cwl` (paths relative to the file, in `tests/`). */
export function cwltestFile(expected: unknown, toolPath = '../tool.cwl'): string {
  return `- id: ${'t1'}\n  doc: the tool's one output\n  tool: ${toolPath}\n  job: null\n  output: ${JSON.stringify(expected)}\n`;
}

/** A crate archive with `tool.cwl` of the given kind and its cwltest file. */
export function managedCrate(kind: CwlSuiteKind, options: ManagedCrateOptions = {}): Buffer {
  const suite = CWL_SUITES[kind];
  return buildZip([
    {
      name: 'ro-crate-metadata.json',
      data: JSON.stringify(managedCrateMetadata(`managed ${kind}`, options)),
    },
    { name: 'tool.cwl', data: suite.tool },
    { name: 'tests/test.cwltest.yml', data: options.definitionText ?? cwltestFile(suite.expected) },
    ...(options.extraEntries ?? []),
  ]);
}

import type { EventEmitter } from 'node:events';
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { DataSource } from 'typeorm';
import type { TestApp } from './create-test-app.js';
import { buildZip } from './zip-builder.js';

/** The real crates of test/fixtures/crates, with what each one registers as. */
export const FIXTURE_CRATES = {
  lifemonitorExample: 'test/fixtures/crates/lifemonitor-example-wf-crate.zip',
  cwlBaseFreqSum: 'test/fixtures/crates/ro-crate-cwl-basefreqsum.crate.zip',
  galaxySortChangeCase: 'test/fixtures/crates/ro-crate-galaxy-sortchangecase.crate.zip',
  galaxyWfRepo: 'test/fixtures/crates/test-galaxy-wf-repo.crate.zip',
} as const;

/** Every table of the database, whatever module made it. */
export async function tableNames(dataSource: DataSource): Promise<string[]> {
  const rows = await dataSource.query<{ name: string }[]>(
    dataSource.options.type === 'mariadb'
      ? 'SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE()'
      : "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
  );
  return rows.map((row) => row.name).sort();
}

/** Every file under a folder, as paths relative to it. */
export function filesUnder(root: string): string[] {
  const files: string[] = [];
  const walk = (folder: string): void => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) {
        walk(path);
      } else {
        files.push(relative(root, path));
      }
    }
  };
  walk(root);
  return files.sort();
}

/** The `n` of a `SELECT COUNT(*) AS n …` (MariaDB gives it as a string). */
export async function countRows(
  dataSource: DataSource,
  sql: string,
  parameters: unknown[] = [],
): Promise<number> {
  const [row] = await dataSource.query<{ n: number | string }[]>(sql, parameters);
  return Number(row.n);
}

export interface Snapshot {
  rows: Record<string, number>;
  files: string[];
}

/** The row count of every table and the list of every file under DATA_DIR. */
export async function snapshot(t: TestApp, dataSource: DataSource): Promise<Snapshot> {
  const rows: Record<string, number> = {};
  for (const table of await tableNames(dataSource)) {
    rows[table] = await countRows(dataSource, `SELECT COUNT(*) AS n FROM ${table}`);
  }
  return { rows, files: filesUnder(t.dataDir) };
}

/** Files of the content-addressed store. */
export function storedArchives(t: TestApp): string[] {
  return filesUnder(t.dataDir).filter((file) => file.startsWith('crates/'));
}

export interface CrateInstanceSpec {
  id: string;
  name?: string;
  /** A `runsOn` IRI; default GitHub Actions. */
  runsOn?: string;
  url?: string;
  resource?: string;
}

export interface CrateSpec {
  /** The root dataset's name; `null` leaves it out. */
  name?: string | null;
  /** The main workflow's name; `null` leaves it out. */
  mainName?: string | null;
  instances?: CrateInstanceSpec[];
  /** Any text: crates with different markers have different bytes (and so different archives). */
  marker?: string;
  /** Stored under this top-level folder, as GitHub's archives are. */
  folder?: string;
  /** The main workflow's `programmingLanguage`, Workflow RO-Crate's (`galaxy`: `#galaxy`, named Galaxy); none when absent. */
  language?: 'galaxy';
}

/** The metadata file's own entity, the same in every RO-Crate 1.1. */
export const METADATA_DESCRIPTOR = {
  '@id': 'ro-crate-metadata.json',
  '@type': 'CreativeWork',
  about: { '@id': './' },
  conformsTo: { '@id': 'https://w3id.org/ro/crate/1.1' },
};

export const TEST_TERMS = 'https://w3id.org/ro/terms/test#';
const TEST = TEST_TERMS;

/** The ro-crate-metadata.json of a small Workflow Testing RO-Crate: one suite, its instances, a definition. */
export function crateMetadata(spec: CrateSpec = {}): object {
  const instances = spec.instances ?? [
    {
      id: '#inst1',
      name: 'inst1',
      url: 'https://api.github.com',
      resource: 'repos/o/r/actions/workflows/ci.yml',
    },
  ];
  const root: Record<string, unknown> = {
    '@id': './',
    '@type': 'Dataset',
    mainEntity: { '@id': 'workflow.ga' },
    mentions: [{ '@id': '#suite1' }],
  };
  if (spec.name !== null) {
    root.name = spec.name ?? 'a test workflow';
  }
  if (spec.marker !== undefined) {
    root.identifier = spec.marker;
  }
  const main: Record<string, unknown> = {
    '@id': 'workflow.ga',
    '@type': ['File', 'SoftwareSourceCode', 'ComputationalWorkflow'],
  };
  if (spec.mainName !== null) {
    main.name = spec.mainName ?? 'the main workflow';
  }
  const language =
    spec.language === undefined
      ? []
      : [
          {
            '@id': `#${spec.language}`,
            '@type': 'ComputerLanguage',
            name: 'Galaxy',
            url: { '@id': 'https://galaxyproject.org/' },
          },
        ];
  if (spec.language !== undefined) {
    main.programmingLanguage = { '@id': `#${spec.language}` };
  }
  return {
    '@context': 'https://w3id.org/ro/crate/1.1/context',
    '@graph': [
      METADATA_DESCRIPTOR,
      root,
      main,
      ...language,
      {
        '@id': '#suite1',
        '@type': 'TestSuite',
        name: 'suite one',
        instance: instances.map((instance) => ({ '@id': instance.id })),
        definition: { '@id': 'test/planemo.yml' },
      },
      ...instances.map((instance) => ({
        '@id': instance.id,
        '@type': 'TestInstance',
        name: instance.name,
        runsOn: { '@id': instance.runsOn ?? `${TEST}GithubService` },
        url: instance.url ?? 'https://api.github.com',
        resource: instance.resource ?? 'repos/o/r/actions/workflows/ci.yml',
      })),
      {
        '@id': 'test/planemo.yml',
        '@type': ['File', 'TestDefinition'],
        conformsTo: { '@id': `${TEST}PlanemoEngine` },
        engineVersion: '>=0.74',
      },
    ],
  };
}

/** A crate archive around `crateMetadata(spec)` (or the given metadata text). */
export function crateZip(spec: CrateSpec = {}, metadataText?: string): Buffer {
  const prefix = spec.folder === undefined ? '' : `${spec.folder}/`;
  return buildZip([
    {
      name: `${prefix}ro-crate-metadata.json`,
      data: metadataText ?? JSON.stringify(crateMetadata(spec), null, 2),
    },
    { name: `${prefix}workflow.ga`, data: '{"a_galaxy_workflow": "true"}' },
    { name: `${prefix}test/planemo.yml`, data: '- doc: a test\n' },
  ]);
}

/** A supertest parser that keeps a binary body as one Buffer. */
export function binaryBody(
  response: EventEmitter,
  callback: (error: Error | null, body: Buffer) => void,
): void {
  const chunks: Buffer[] = [];
  response.on('data', (chunk: Buffer) => chunks.push(chunk));
  response.on('end', () => callback(null, Buffer.concat(chunks)));
  response.on('error', (error: Error) => callback(error, Buffer.alloc(0)));
}

export const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

import type { CheckedCrate } from '../../src/crates/checks/issue-check.js';
import { parseCrateGraph, readCrateGraph } from '../../src/crates/ro-crate-parser.js';
import { markUncheckable } from '../../src/workflows/registration-rules.js';
import type { CrateServiceType } from '../../src/crates/testing-service-catalog.js';
import { CRATE_SERVICES } from './crate-services.js';

/** What the repository checks see of a crate with this metadata and these files, as registration reads it. */
export function checkedCrate(
  metadata: object,
  files: readonly string[] = ['ro-crate-metadata.json'],
  services: readonly CrateServiceType[] = CRATE_SERVICES,
): CheckedCrate {
  const graph = readCrateGraph(metadata, { services });
  const read = parseCrateGraph(graph, { services });
  return { crate: { ...read, suites: markUncheckable(read.suites, services) }, graph, files: new Set(files) };
}

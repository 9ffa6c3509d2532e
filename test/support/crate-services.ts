import type { CrateServiceType } from '../../src/crates/testing-service-catalog.js';

/** The CI services the app registers, as the crate parser is told of them (the order of the module). */
export const CRATE_SERVICES: readonly CrateServiceType[] = [
  { type: 'github', crateTerm: 'GithubService' },
  { type: 'travis', crateTerm: 'TravisService' },
  { type: 'jenkins', crateTerm: 'JenkinsService' },
];

/** The parser's options with those services. */
export const WITH_SERVICES = { services: CRATE_SERVICES } as const;

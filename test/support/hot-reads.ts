import { CheckStateRepository } from '../../src/test-monitoring/check-state.repository.js';
import type { TestApp } from './create-test-app.js';
import { SEEDED_VERSION, seededUuid } from './registry-seed.mjs';

/**
 * The hot reads of area B, as the query-plan test (test/e2e/query-plans.e2e-spec.ts) runs them
 * against a seeded registry: over HTTP with the owner's token (`path`, answered 200), or by
 * calling the app (`run`). Every statement they send must be served by indexes: add a new
 * read here and the test checks its plans on SQLite and MariaDB.
 */
export interface HotRead {
  name: string;
  /** A GET path, for the seeded workflow number `index`. */
  path?: (index: number) => string;
  run?: (t: TestApp) => Promise<unknown>;
}

const workflow = (index: number): string => seededUuid('workflow', index);

export const HOT_READS: HotRead[] = [
  { name: 'list page', path: () => '/users/current/workflows?limit=20' },
  { name: 'list page further on', path: () => '/users/current/workflows?limit=20&offset=40' },
  { name: 'list page without status', path: () => '/users/current/workflows?limit=20&status=false' },
  { name: 'workflow', path: (i) => `/workflows/${workflow(i)}` },
  {
    name: 'workflow with previous versions',
    path: (i) => `/workflows/${workflow(i)}?previous_versions=true`,
  },
  { name: 'workflow version', path: (i) => `/workflows/${workflow(i)}/versions/${SEEDED_VERSION}` },
  { name: 'versions', path: (i) => `/workflows/${workflow(i)}/versions` },
  { name: 'suites', path: (i) => `/workflows/${workflow(i)}/suites` },
  { name: 'status', path: (i) => `/workflows/${workflow(i)}/status` },
  { name: 'suite', path: (i) => `/suites/${seededUuid('suite', i)}` },
  { name: 'suite instances', path: (i) => `/suites/${seededUuid('suite', i)}/instances` },
  { name: 'suite status', path: (i) => `/suites/${seededUuid('suite', i)}/status` },
  { name: 'instance', path: (i) => `/instances/${seededUuid('instance', i)}` },
  { name: 'instance builds', path: (i) => `/instances/${seededUuid('instance', i)}/latest-builds` },
  { name: 'instance build', path: (i) => `/instances/${seededUuid('instance', i)}/builds/${i}1` },
  { name: 'download', path: (i) => `/workflows/${workflow(i)}/rocrate/${SEEDED_VERSION}/download` },
  { name: "the caller's API keys", path: () => '/users/current/apikeys' },
  {
    name: 'a request with an API key',
    run: async (t) => {
      const token = await t.login();
      const made = await t.http
        .post('/users/current/apikeys')
        .set('Authorization', `Bearer ${token}`)
        .send({ name: 'plan' })
        .expect(201);
      await t.http
        .get('/users/current')
        .set('Authorization', `ApiKey ${(made.body as { key: string }).key}`)
        .expect(200);
    },
  },
  {
    name: 'monitoring claims of due instances',
    run: (t) =>
      t.app
        .get(CheckStateRepository, { strict: false })
        .claimDue(new Date(Date.now() + 2 * 24 * 3600_000), 'plan-test', 10, 60_000),
  },
];

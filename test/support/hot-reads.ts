import { DataSource } from 'typeorm';
import { DeliveriesRepository } from '../../src/notifications/deliveries.repository.js';
import { GithubWebhooksService } from '../../src/notifications/github-webhooks.service.js';
import { GitlabWebhooksService } from '../../src/notifications/gitlab-webhooks.service.js';
import { NotificationsRepository } from '../../src/notifications/notifications.repository.js';
import { UnsubscribeLinks, type UnsubscribeList } from '../../src/notifications/unsubscribe-links.js';
import { BuildsRepository } from '../../src/test-monitoring/builds.repository.js';
import { CheckStateRepository } from '../../src/test-monitoring/check-state.repository.js';
import { RegisteredInstances } from '../../src/workflows/registered-instances.js';
import { FollowsRepository } from '../../src/repositories/follow/follows.repository.js';
import { StoredTestStatuses } from '../../src/workflows/stored-test-statuses.js';
import { VersionStatuses } from '../../src/test-monitoring/version-statuses.js';
import type { AuthUser } from '../../src/auth/auth-user.js';
import { AddressesRepository } from '../../src/orchestration/addresses.repository.js';
import { JobsRepository } from '../../src/orchestration/jobs.repository.js';
import { ManagedRunsRepository } from '../../src/managed-runs/managed-runs.repository.js';
import { QuotasService } from '../../src/orchestration/quotas.service.js';
import { RegistriesRepository } from '../../src/registries/registries.repository.js';
import { WorkflowsRepository } from '../../src/workflows/workflows.repository.js';
import type { TestApp } from './create-test-app.js';
import { SEEDED_MACHINES_OWNER, SEEDED_MAIN_WORKFLOW, SEEDED_VERSION, seededUuid } from './registry-seed.mjs';

/**
 * The hot reads of areas B and C, as the query-plan test (test/e2e/registry-scale.e2e-spec.ts) runs them
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
  {
    // API.md 17: a managed instance's check (its latest runs), one of its runs (its log) and a cancel.
    name: "a managed instance's runs: its latest ones, one of them, a cancel of one it lacks",
    run: async (t) => {
      const runs = t.app.get(ManagedRunsRepository, { strict: false });
      const [row] = await t.app
        .get(DataSource)
        .query<{ id: number | string }[]>('SELECT id FROM test_instances WHERE uuid = ?', [
          seededUuid('instance', 7),
        ]);
      const latest = await runs.latestOf(Number(row.id), 10);
      await runs.findOf(Number(row.id), latest[0].id);
      await runs.requestCancel(Number(row.id), 2_000_000_000, new Date());
    },
  },
  {
    // Runners' claim of due runs (claimDueRows on due_at), their sweep's read of the claims of their
    // working folders' runs, and the API's watch of changed ones.
    name: 'runners claiming due managed runs, their sweep, and the watch of changed ones',
    run: async (t) => {
      const runs = t.app.get(ManagedRunsRepository, { strict: false });
      const claimed = await runs.claimDue(new Date(), 'plan-runner', 5, 60_000);
      expect(claimed).toHaveLength(5);
      expect((await runs.claimsOf([...claimed.map((run) => run.id), 2_000_000_000])).size).toBe(5);
      await runs.changedSince(new Date(Date.now() - 30_000));
    },
  },
  { name: 'list page', path: () => '/users/current/workflows?limit=20' },
  { name: 'list page further on', path: () => '/users/current/workflows?limit=20&offset=40' },
  { name: 'list page without status', path: () => '/users/current/workflows?limit=20&status=false' },
  { name: 'public and own list page', path: () => '/workflows?limit=20' },
  { name: 'public and own list page further on', path: () => '/workflows?limit=20&offset=40&status=false' },
  { name: 'workflow', path: (i) => `/workflows/${workflow(i)}` },
  {
    name: 'workflow with previous versions',
    path: (i) => `/workflows/${workflow(i)}?previous_versions=true`,
  },
  { name: 'workflow version', path: (i) => `/workflows/${workflow(i)}/versions/${SEEDED_VERSION}` },
  { name: 'versions', path: (i) => `/workflows/${workflow(i)}/versions` },
  { name: 'suites', path: (i) => `/workflows/${workflow(i)}/suites` },
  { name: 'status', path: (i) => `/workflows/${workflow(i)}/status` },
  { name: 'badge', path: (i) => `/workflows/${workflow(i)}/badge.svg` },
  { name: 'history', path: (i) => `/workflows/${workflow(i)}/history` },
  { name: 'instance stats', path: (i) => `/instances/${seededUuid('instance', i)}/stats` },
  { name: 'status page', path: () => '/status' },
  { name: 'status page of a workflow', path: (i) => `/status/${workflow(i)}` },
  // The wall (API.md 5.4): the most urgent workflows and the counts by status, from the stored statuses' indexes.
  { name: "wall screen, an admin's (every workflow)", path: () => '/status/wall' },
  {
    name: "wall screen, anonymous (public ones) and a user's (their own and the public ones)",
    run: async (t) => {
      await t.http.get('/status/wall').expect(200);
      await t.http
        .get('/status/wall')
        .set('Authorization', `Bearer ${await t.userToken()}`)
        .expect(200);
    },
  },
  {
    name: "wall of a registry's token (the registry's and the public ones)",
    run: async (t) => {
      const stored = t.app.get(StoredTestStatuses, { strict: false });
      const viewer: AuthUser = {
        ...{ id: 1, username: 'plan', roles: ['user'], jti: 'plan', exp: 0, via: 'bearer' },
        registry: { id: 1, uuid: 'plan' },
      };
      await stored.latestIn(viewer, 'all_passing', 100);
      await stored.counts(viewer, ['all_failing', 'some_passing', 'not_available', 'all_passing']);
    },
  },
  {
    name: "a version's stored status written where builds are recorded (and a workflow's, when latest)",
    run: async (t) => {
      const dataSource = t.app.get(DataSource);
      const uuids = [1, 2, 3].map((i) => seededUuid('instance', i));
      const ids = (
        await dataSource.query<{ id: number | string }[]>(
          'SELECT id FROM test_instances WHERE uuid IN (?, ?, ?)',
          uuids,
        )
      ).map((row) => Number(row.id));
      await dataSource.transaction((tx) =>
        t.app.get(VersionStatuses, { strict: false }).buildsChanged(tx, ids),
      );
    },
  },
  { name: 'suite', path: (i) => `/suites/${seededUuid('suite', i)}` },
  { name: 'suite instances', path: (i) => `/suites/${seededUuid('suite', i)}/instances` },
  { name: 'suite status', path: (i) => `/suites/${seededUuid('suite', i)}/status` },
  { name: 'instance', path: (i) => `/instances/${seededUuid('instance', i)}` },
  { name: 'instance builds', path: (i) => `/instances/${seededUuid('instance', i)}/latest-builds` },
  { name: 'instance build', path: (i) => `/instances/${seededUuid('instance', i)}/builds/${i}1` },
  {
    // API.md 16: the changes route's read; the rest of that route asks the CI service.
    name: "an instance's last passing build before one of its builds",
    run: async (t) => {
      const [row] = await t.app
        .get(DataSource)
        .query<{ id: number | string }[]>('SELECT id FROM test_instances WHERE uuid = ?', [
          seededUuid('instance', 7),
        ]);
      await t.app.get(BuildsRepository, { strict: false }).lastPassingBefore(Number(row.id), new Date());
    },
  },
  { name: 'download', path: (i) => `/workflows/${workflow(i)}/rocrate/${SEEDED_VERSION}/download` },
  { name: 'crate metadata', path: (i) => `/workflows/${workflow(i)}/rocrate/${SEEDED_VERSION}/metadata` },
  { name: 'TRS tools page', path: () => '/ga4gh/trs/v2/tools?limit=20' },
  { name: 'TRS tools page further on', path: () => '/ga4gh/trs/v2/tools?limit=20&offset=40' },
  { name: 'TRS last tools page', path: () => '/ga4gh/trs/v2/tools?limit=20&offset=last' },
  { name: 'TRS tools by id', path: (i) => `/ga4gh/trs/v2/tools?id=${workflow(i)}` },
  { name: 'TRS tools by name', path: (i) => `/ga4gh/trs/v2/tools?name=seeded%20workflow%20${i}` },
  {
    name: 'TRS tools by descriptor type',
    path: () => `/ga4gh/trs/v2/tools?descriptorType=${SEEDED_MAIN_WORKFLOW.language}&limit=20`,
  },
  {
    name: 'TRS last tools page by descriptor type',
    path: () => `/ga4gh/trs/v2/tools?descriptorType=${SEEDED_MAIN_WORKFLOW.language}&limit=20&offset=last`,
  },
  { name: 'TRS tools by organization', path: () => '/ga4gh/trs/v2/tools?organization=admin&limit=20' },
  {
    name: 'TRS tools page, anonymous (public ones)',
    run: async (t) => {
      await t.http.get('/ga4gh/trs/v2/tools?limit=20').expect(200);
      await t.http.get('/ga4gh/trs/v2/tools?limit=20&offset=last').expect(200);
    },
  },
  {
    name: 'TRS tools page of a user (their own and the public ones)',
    run: async (t) => {
      const token = await t.userToken();
      for (const query of ['limit=20', 'limit=20&offset=last', 'limit=20&name=seeded%20workflow%207']) {
        await t.http.get(`/ga4gh/trs/v2/tools?${query}`).set('Authorization', `Bearer ${token}`).expect(200);
      }
    },
  },
  { name: 'TRS tool', path: (i) => `/ga4gh/trs/v2/tools/${workflow(i)}` },
  { name: 'TRS tool versions', path: (i) => `/ga4gh/trs/v2/tools/${workflow(i)}/versions` },
  { name: 'TRS tool version', path: (i) => `/ga4gh/trs/v2/tools/${workflow(i)}/versions/${SEEDED_VERSION}` },
  {
    name: 'TRS descriptor',
    path: (i) =>
      `/ga4gh/trs/v2/tools/${workflow(i)}/versions/${SEEDED_VERSION}/${SEEDED_MAIN_WORKFLOW.language}/descriptor`,
  },
  {
    name: 'TRS files',
    path: (i) =>
      `/api/ga4gh/v2/tools/${workflow(i)}/versions/${SEEDED_VERSION}/${SEEDED_MAIN_WORKFLOW.language}/files`,
  },
  {
    name: 'TRS tests',
    path: (i) =>
      `/ga4gh/trs/v2/tools/${workflow(i)}/versions/${SEEDED_VERSION}/${SEEDED_MAIN_WORKFLOW.language}/tests`,
  },
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
  { name: "the caller's notifications", path: () => '/users/current/notifications' },
  { name: "the caller's subscriptions", path: () => '/users/current/subscriptions' },
  { name: "the caller's channels", path: () => '/users/current/channels' },
  {
    name: "a mail's unsubscribe link: its page and its one click, for a workflow and for FOLLOW_FAILED",
    run: async (t) => {
      const token = await t.login();
      const auth = { Authorization: `Bearer ${token}` };
      const user = await t.http.get('/users/current').set(auth).expect(200);
      const made = await t.http
        .post('/users/current/channels')
        .set(auth)
        .send({ type: 'webhook', target: 'http://127.0.0.1:9/plan' })
        .expect(201);
      const lists: UnsubscribeList[] = [
        { kind: 'workflow', workflowUuid: workflow(1) },
        { kind: 'follow-failed' },
      ];
      for (const list of lists) {
        const link = t.app
          .get(UnsubscribeLinks, { strict: false })
          .linkFor(
            '',
            { userId: (user.body as { id: number }).id, channelId: (made.body as { id: number }).id, list },
            Date.now(),
          );
        await t.http.get(link).expect(200);
        await t.http.post(link).type('form').send('List-Unsubscribe=One-Click').expect(200);
      }
    },
  },
  {
    name: "a channel's delivery log",
    run: async (t) => {
      const token = await t.login();
      const made = await t.http
        .post('/users/current/channels')
        .set('Authorization', `Bearer ${token}`)
        .send({ type: 'webhook', target: 'http://127.0.0.1:9/plan' })
        .expect(201);
      await t.http
        .get(`/users/current/channels/${(made.body as { id: number }).id}/deliveries`)
        .set('Authorization', `Bearer ${token}`)
        .expect(200);
    },
  },
  {
    name: 'events raised where checks are recorded (facts, builds, subscribers, channels)',
    run: async (t) => {
      const dataSource = t.app.get(DataSource);
      const uuids = [1, 2, 3].map((i) => seededUuid('instance', i));
      const ids = (
        await dataSource.query<{ id: number | string }[]>(
          'SELECT id FROM test_instances WHERE uuid IN (?, ?, ?)',
          uuids,
        )
      ).map((row) => Number(row.id));
      const facts = await t.app.get(RegisteredInstances, { strict: false }).facts(undefined, ids);
      await dataSource.transaction(async (tx) => {
        await t.app.get(BuildsRepository, { strict: false }).latestFinished(tx, ids);
        await t.app.get(NotificationsRepository, { strict: false }).raise(
          tx,
          [...facts.values()].map((fact) => ({
            instanceId: fact.instanceId,
            workflowId: fact.workflowId,
            buildId: 'plan',
            event: 'BUILD_FAILED' as const,
            data: {
              workflow: { uuid: fact.workflowUuid, name: fact.name, version: fact.version },
              instance: { uuid: fact.instanceUuid, name: fact.instanceName },
              build: null,
            },
          })),
          new Date(),
        );
      });
    },
  },
  {
    name: 'outbox claims, depth and the retention sweep',
    run: async (t) => {
      const deliveries = t.app.get(DeliveriesRepository, { strict: false });
      await deliveries.claimDue(new Date(Date.now() + 3600_000), 'plan-test', 10, 60_000);
      await deliveries.outbox();
      await t.app.get(NotificationsRepository, { strict: false }).removeCreatedBefore(new Date(0));
      await deliveries.removeForgotten();
    },
  },
  {
    name: 'instances of a GitHub workflow (webhooks in)',
    run: (t) => t.app.get(GithubWebhooksService, { strict: false }).instancesWatching(['octo/repo/ci.yml']),
  },
  {
    name: 'instances of a GitLab project (webhooks in)',
    run: (t) =>
      t.app
        .get(GitlabWebhooksService, { strict: false })
        .instancesWatching(['https://gitlab.com/group/project', 'https://gitlab.com#42']),
  },
  {
    name: 'followed repositories: a webhook’s lookup, a reply’s view, poll and registration claims, the pause',
    run: async (t) => {
      const follows = t.app.get(FollowsRepository, { strict: false });
      const later = new Date(Date.now() + 2 * 24 * 3600_000);
      await follows.following('https://github.com', 'octo/repo');
      await follows.followOf(1);
      await follows.claimDuePolls(later, 'plan-test', 10, 60_000);
      await follows.claimDueRefs(later, 'plan-test', 10, 60_000);
      await follows.pausedUntil('https://api.github.com', later);
    },
  },
  { name: 'registries', path: () => '/registries' },
  {
    // What a registry's token lists (API.md 10.1): the registry's workflows, and one of its users'.
    name: "a registry's workflows and a registry user's workflows from it",
    run: async (t) => {
      const workflows = t.app.get(WorkflowsRepository, { strict: false });
      await workflows.listWorkflows({ registryId: 1 }, { limit: 20 });
      await workflows.listWorkflows({ ownerId: 1, registryId: 1 }, { limit: 20 });
    },
  },
  {
    // GA4GH TRS `?organization=` naming a registry (API.md 10.2): the registry by its name, then its public workflows.
    name: "TRS tools by a registry's name",
    run: async (t) => {
      await t.app.get(RegistriesRepository, { strict: false }).findByName('plan');
      const workflows = t.app.get(WorkflowsRepository, { strict: false });
      await workflows.searchWorkflows({ public: true }, { registryId: 1 }, { limit: 21 });
      await workflows.searchWorkflows({ public: true }, { registryId: 1 }, { limit: 20, fromEnd: true });
      // The same search for the registry's own token: its private workflows too.
      await workflows.searchWorkflows({ registryId: 1, public: true }, { registryId: 1 }, { limit: 21 });
      await workflows.searchWorkflows(
        { registryId: 1, public: true },
        { name: 'seeded workflow 3' },
        { limit: 21 },
      );
    },
  },
  {
    name: "a registry user's identity and link",
    run: async (t) => {
      const registries = t.app.get(RegistriesRepository, { strict: false });
      await registries.findIdentity(1, 'plan');
      await registries.findLink(1, 1);
    },
  },
  {
    // At start-up: the due times a longer interval planned, brought forward (nothing is that late here).
    name: 'due times planned under a longer interval, brought forward',
    run: async (t) => {
      const now = new Date();
      const limit = new Date(now.getTime() + 3650 * 24 * 3600_000);
      await t.app.get(CheckStateRepository, { strict: false }).bringForward(limit, now);
      await t.app.get(FollowsRepository, { strict: false }).bringForward(limit, now);
    },
  },
  {
    name: 'monitoring claims of due instances',
    run: (t) =>
      t.app
        .get(CheckStateRepository, { strict: false })
        .claimDue(new Date(Date.now() + 2 * 24 * 3600_000), 'plan-test', 10, 60_000),
  },
  {
    name: 'periodic re-runs: the intervals in use and the due instances of one and of the default',
    run: async (t) => {
      const states = t.app.get(CheckStateRepository, { strict: false });
      const now = new Date(Date.now() + 2 * 24 * 3600_000);
      const cutoff = new Date(now.getTime() - 30 * 24 * 3600_000);
      await states.rerunIntervalsInUse();
      await states.dueReruns({ own: true, days: 30 }, cutoff, now, 50);
      await states.dueReruns({ own: false, days: 30 }, cutoff, now, 50);
    },
  },
  {
    name: "a start's quota check: the nodes, vCPUs and RAM its owner holds",
    run: async (t) => {
      const jobs = t.app.get(JobsRepository, { strict: false });
      const refused = new Error('plan: refused');
      const start = {
        id: 'plan-quota-check',
        cloud: 'plan',
        ownerId: SEEDED_MACHINES_OWNER,
        ownerName: 'plan',
        request: { name: 'plan', image: 'plan', size: 'plan' },
        vcpus: 1,
        ramMib: 512,
        now: new Date(),
      };
      // Refused after the count, so nothing is recorded and the read can run again.
      await jobs
        .create(start, () => {
          throw refused;
        })
        .catch((error: unknown) => {
          if (error !== refused) {
            throw error;
          }
        });
    },
  },
  { name: 'usage over the default window', path: () => '/api/v1/usage' },
  {
    name: "a user's usage over a week (their own starts)",
    run: (t) => {
      const to = new Date();
      const from = new Date(to.getTime() - 7 * 24 * 3600_000);
      const owner = { id: SEEDED_MACHINES_OWNER, username: 'owner0', admin: false };
      return t.app.get(QuotasService, { strict: false }).usage(owner, from, to);
    },
  },
  { name: "a user's quota", path: () => '/api/v1/users/1/quota' },
  { name: 'key pairs of the dummy cloud', path: () => '/api/v1/keypairs' },
  {
    name: "a node's public address: the lookup, the attach, the release, the stop's record",
    run: async (t) => {
      const addresses = t.app.get(AddressesRepository, { strict: false });
      await addresses.find('plan-0', 'node-7');
      await addresses.attached('plan-0', 'node-7', '198.18.0.7');
      await addresses.remove('plan-1', 'node-missing');
      await t.app.get(JobsRepository, { strict: false }).markStopped('plan-1', 'node-missing', new Date());
    },
  },
];

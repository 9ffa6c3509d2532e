import { UserEntity } from '../../auth/entities/user.entity.js';
import {
  TestInstanceEntity,
  TestSuiteEntity,
  WorkflowEntity,
  WorkflowVersionEntity,
} from '../entities/registry.entities.js';
import { TestServiceEntity } from '../entities/test-service.entity.js';
import {
  toWorkflowResponse,
  toWorkflowSummaryResponse,
  type WorkflowSummaryView,
} from './workflow-response.dto.js';

const BASE = 'https://registry.example.org';

function user(): UserEntity {
  return Object.assign(new UserEntity(), { id: 7, username: 'alice' });
}

function version(id: number, label: string, registeredAt: string): WorkflowVersionEntity {
  return Object.assign(new WorkflowVersionEntity(), {
    id,
    uuid: `00000000-0000-4000-8000-00000000000${id}`,
    version: label,
    name: `name of ${label}`,
    rocLink: `https://example.org/${label}.zip`,
    registeredAt: new Date(registeredAt),
    submitter: user(),
    issues: [],
  });
}

function workflow(versions: WorkflowVersionEntity[]): WorkflowEntity {
  return Object.assign(new WorkflowEntity(), {
    id: 1,
    uuid: '11111111-1111-4111-8111-111111111111',
    createdAt: new Date('2024-01-01T00:00:00Z'),
    versions,
  });
}

function instance(): TestInstanceEntity {
  return Object.assign(new TestInstanceEntity(), {
    id: 3,
    uuid: '33333333-3333-4333-8333-333333333333',
    name: 'ci',
    managed: false,
    resource: 'repos/o/r/actions/workflows/ci.yml',
    rocInstance: '#ci',
    service: Object.assign(new TestServiceEntity(), {
      type: 'github',
      url: 'https://api.github.com',
      uuid: '44444444-4444-4444-8444-444444444444',
    }),
    suite: Object.assign(new TestSuiteEntity(), { uuid: '55555555-5555-4555-8555-555555555555' }),
  });
}

describe('toWorkflowResponse', () => {
  it('derives the latest version from registration order, whatever order the versions were loaded in', () => {
    const older = version(1, '1.0', '2024-02-01T00:00:00Z');
    const newer = version(2, '0.9-hotfix', '2024-03-01T10:20:30Z');
    const reply = toWorkflowResponse(
      { workflow: workflow([newer, older]), version: older, previous: [] },
      BASE,
    );
    expect(reply.name).toBe('name of 1.0');
    expect(reply.version.is_latest).toBe(false);
    expect(reply.meta).toEqual({
      base_url: BASE,
      resource: '/workflows/11111111-1111-4111-8111-111111111111',
      created: '2024-01-01T00:00:00.000Z',
      modified: '2024-03-01T10:20:30.000Z',
    });
    expect(reply.previous_versions).toEqual([]);
    expect(reply.version.ro_crate.metadata).toBeUndefined();
  });
});

describe('toWorkflowSummaryResponse', () => {
  it('shows the latest build with the build fields of API.md 2.6 once test monitoring reports one', () => {
    const view: WorkflowSummaryView = {
      workflow: workflow([version(1, '1.0', '2024-02-01T00:00:00Z')]),
      status: {
        aggregate: 'some_passing',
        latestBuild: {
          build: {
            buildId: '8765_2',
            status: 'failed',
            startedAt: new Date('2023-11-14T22:13:20.900Z'),
            durationSeconds: 312,
            url: 'https://github.com/o/r/actions/runs/8765',
          },
          instance: instance(),
          lastChecks: new Map([
            [3, { at: new Date('2023-11-15T00:00:00.000Z'), ok: false, error: 'GitHub answered 502' }],
          ]),
        },
      },
    };
    expect(toWorkflowSummaryResponse(view, 'https://lm.example.org')).toEqual({
      uuid: '11111111-1111-4111-8111-111111111111',
      name: 'name of 1.0',
      latest_version: '1.0',
      versions: ['1.0'],
      status: {
        aggregate_test_status: 'some_passing',
        latest_build: {
          build_id: '8765_2',
          suite_uuid: '55555555-5555-4555-8555-555555555555',
          instance: {
            uuid: '33333333-3333-4333-8333-333333333333',
            name: 'ci',
            managed: false,
            resource: 'repos/o/r/actions/workflows/ci.yml',
            roc_instance: '#ci',
            origin: 'crate',
            service: {
              type: 'github',
              url: 'https://api.github.com',
              uuid: '44444444-4444-4444-8444-444444444444',
            },
            last_check: { at: '2023-11-15T00:00:00.000Z', ok: false, error: 'GitHub answered 502' },
          },
          status: 'failed',
          timestamp: '1700000000',
          duration: 312,
          links: { origin: 'https://github.com/o/r/actions/runs/8765' },
        },
      },
    });
  });

  it('leaves the status out when it was not asked for', () => {
    const reply = toWorkflowSummaryResponse(
      {
        workflow: workflow([version(1, '1.0', '2024-02-01T00:00:00Z')]),
      },
      'https://lm.example.org',
    );
    expect(reply).not.toHaveProperty('status');
  });
});

import type { RecordedBuild } from '../test-monitoring/index.js';
import type { InstanceFacts } from '../workflows/index.js';
import { notificationData } from './notification-data.js';

const FACTS: InstanceFacts = {
  instanceId: 3,
  instanceUuid: '33333333-3333-4333-8333-333333333333',
  instanceName: 'managed',
  versionId: 2,
  version: '1.0',
  name: 'sort-and-change-case',
  workflowId: 1,
  workflowUuid: '11111111-1111-4111-8111-111111111111',
};

function build(url: string): RecordedBuild {
  return {
    buildId: 'm-7',
    status: 'failed',
    startedAt: new Date('2026-11-01T10:00:00Z'),
    durationSeconds: 4,
    url,
  };
}

describe('notificationData', () => {
  it("puts the base URL before a managed run's log path, so that mails and webhooks carry a link that works", () => {
    const data = notificationData(
      FACTS,
      build(`/instances/${FACTS.instanceUuid}/builds/m-7/logs`),
      'https://lm.example.org',
    );
    expect(data.build?.links.origin).toBe(
      `https://lm.example.org/instances/${FACTS.instanceUuid}/builds/m-7/logs`,
    );
  });

  it("keeps a CI service's own link as it is", () => {
    const data = notificationData(
      FACTS,
      build('https://github.com/o/r/actions/runs/8765'),
      'https://lm.example.org',
    );
    expect(data.build?.links.origin).toBe('https://github.com/o/r/actions/runs/8765');
  });
});

import { Global, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { VersionStatusReader } from './version-status.reader.js';
import {
  WORKFLOW_STATUS_SOURCE,
  type LastCheck,
  type VersionStatusSummary,
  type WorkflowStatusSource,
} from './workflow-status-source.js';

class FixedStatusSource implements WorkflowStatusSource {
  readonly asked: number[][] = [];

  summaries(versionIds: readonly number[]): Promise<Map<number, VersionStatusSummary>> {
    this.asked.push([...versionIds]);
    return Promise.resolve(new Map([[7, { aggregate: 'all_passing', latestBuild: null }]]));
  }

  lastChecks(): Promise<Map<number, LastCheck>> {
    return Promise.resolve(new Map());
  }
}

describe('VersionStatusReader', () => {
  it('reports nothing (so: not available) when the app has no status source', async () => {
    const moduleRef = await Test.createTestingModule({ providers: [VersionStatusReader] }).compile();
    const reader = moduleRef.get(VersionStatusReader);
    await expect(reader.summaries([1, 2])).resolves.toEqual(new Map());
  });

  it('asks the status source another module provides, once per call, and not for no versions', async () => {
    const source = new FixedStatusSource();
    @Global()
    @Module({
      providers: [{ provide: WORKFLOW_STATUS_SOURCE, useValue: source }],
      exports: [WORKFLOW_STATUS_SOURCE],
    })
    class MonitoringStandIn {}
    const moduleRef = await Test.createTestingModule({
      imports: [MonitoringStandIn],
      providers: [VersionStatusReader],
    }).compile();
    const reader = moduleRef.get(VersionStatusReader);
    await expect(reader.summaries([7, 8])).resolves.toEqual(
      new Map([[7, { aggregate: 'all_passing', latestBuild: null }]]),
    );
    await expect(reader.summaries([])).resolves.toEqual(new Map());
    expect(source.asked).toEqual([[7, 8]]);
  });
});

import { Global, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TestInstanceEntity } from './entities/registry.entities.js';
import { VersionStatusReader } from './version-status.reader.js';
import {
  WORKFLOW_STATUS_SOURCE,
  type LastCheck,
  type ListedStatusSummary,
  type VersionStatusSummary,
  type WorkflowStatusSource,
} from './workflow-status-source.js';

class FixedStatusSource implements WorkflowStatusSource {
  readonly asked: number[][] = [];
  readonly checksAsked: number[][] = [];

  summaries(versionIds: readonly number[]): Promise<Map<number, VersionStatusSummary>> {
    this.asked.push([...versionIds]);
    return Promise.resolve(new Map([[7, { aggregate: 'all_passing', latestBuild: null }]]));
  }

  listedSummaries(versionIds: readonly number[]): Promise<Map<number, ListedStatusSummary>> {
    this.asked.push([...versionIds]);
    return Promise.resolve(new Map());
  }

  lastChecks(instanceIds: readonly number[]): Promise<Map<number, LastCheck>> {
    this.checksAsked.push([...instanceIds]);
    return Promise.resolve(
      new Map(instanceIds.map((id): [number, LastCheck] => [id, { at: new Date(0), ok: true, error: null }])),
    );
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

  it('gives an instance registered as never checked a last check that says why, without asking monitoring for it', async () => {
    const source = new FixedStatusSource();
    const reader = new VersionStatusReader(source);
    const registered = new Date('2026-11-20T10:00:00Z');
    const instance = (id: number, uncheckedReason: string | null) =>
      Object.assign(new TestInstanceEntity(), { id, uncheckedReason });
    const checks = await reader.lastChecksOf(
      [instance(1, null), instance(2, 'the crate gives it no resource')],
      registered,
    );
    expect(checks).toEqual(
      new Map([
        [1, { at: new Date(0), ok: true, error: null }],
        [2, { at: registered, ok: false, error: 'never checked: the crate gives it no resource' }],
      ]),
    );
    expect(source.checksAsked).toEqual([[1]]);
  });
});

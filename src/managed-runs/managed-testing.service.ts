import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { Clock } from '../common/clock.js';
import { AppConfig } from '../config/app-config.js';
import type { CredentialKey } from '../config/testing-services-file.js';
import {
  RegisterTestingService,
  type Build,
  type BuildCheckRequest,
  type BuildCheckResult,
  type BuildDetailsResult,
  type BuildLogRequest,
  type BuildLogResult,
  type BuildStatus,
  type CancelRequest,
  type CancelResult,
  type ResourceTarget,
  type TestingService,
  type TriggerRequest,
  type TriggerResult,
} from '../test-monitoring/index.js';
import { mainDescriptorUrlOf } from '../trs/index.js';
import { RegisteredInstances } from '../workflows/index.js';
import { buildIdOf, runIdOf } from './entities/managed-run.entity.js';
import { ExecutorRegistry } from './executors/executor.registry.js';
import { ManagedRunsRepository, type StoredRun } from './managed-runs.repository.js';
import { RunLogs } from './run-logs.js';

/** The most runs one check lists (the largest page a check asks any service for). */
const MAX_LISTED = 100;

/**
 * Managed test instances (API.md 17) behind the same seam as the CI services: a trigger queues a
 * run, a check lists the instance's runs as builds, the log is the run's kept tail, a cancel asks
 * its runner to stop it. Runner processes (runner.ts) run the queue; this class never runs
 * workflow code. An instance gets its first run at its first check (right after registration).
 */
@RegisterTestingService()
@Injectable()
export class ManagedTestingService implements TestingService {
  readonly type = 'managed';
  readonly crateTerm = 'ManagedService';
  /** LifeMonitor's name for the service that runs tests itself. */
  readonly otherCrateTerms = ['LifeMonitorService'];
  readonly defaultResource: string;
  readonly managed = true;
  readonly settings: readonly CredentialKey[] = [];
  /** Instance uuids never change: read once per process, for the builds' log links. */
  private readonly uuids = new Map<number, string>();

  constructor(
    private readonly runs: ManagedRunsRepository,
    private readonly registered: RegisteredInstances,
    private readonly executors: ExecutorRegistry,
    private readonly logs: RunLogs,
    private readonly config: AppConfig,
    private readonly clock: Clock,
  ) {
    this.defaultResource = ExecutorRegistry.nameOf('');
  }

  /** An instance's resource names its executor; empty is the default one. */
  canonicalTarget(target: { url: string; resource: string }): { url: string; resource: string } {
    return { url: target.url, resource: ExecutorRegistry.nameOf(target.resource) };
  }

  resourceProblem(resource: string): string | undefined {
    const name = ExecutorRegistry.nameOf(resource);
    return this.executors.has(name)
      ? undefined
      : `'${name}' is not an executor of EXECUTORS_FILE (executors: ${this.executors.names().join(', ')})`;
  }

  async latestBuilds(request: BuildCheckRequest): Promise<BuildCheckResult> {
    if (request.instanceId === undefined) {
      return { kind: 'failed', reason: 'a managed instance is checked by its id' };
    }
    const instanceId = request.instanceId;
    let runs = await this.runs.latestOf(instanceId, Math.min(request.limit ?? 10, MAX_LISTED));
    if (runs.length === 0) {
      // A trigger or another copy's first check may queue it first: then that run is the first.
      const queued = await this.queue(instanceId, request.resource, request.now);
      if (queued !== undefined) {
        return { kind: 'failed', reason: queued };
      }
      runs = await this.runs.latestOf(instanceId, 1);
    }
    // What the stored builds were made of: each listed run's status with its change time (MariaDB's
    // DATETIME keeps whole seconds, so a run started and ended within one second changes only its status).
    const etag = createHash('sha1')
      .update(runs.map((run) => `${run.id}:${run.status}:${run.changedAt.getTime()}`).join(','))
      .digest('base64url');
    if (request.etag === etag) {
      return { kind: 'not_modified' };
    }
    const uuid = await this.uuidOf(instanceId);
    return { kind: 'builds', etag, builds: runs.map((run) => this.buildOf(run, uuid)) };
  }

  resourcePage(_target: ResourceTarget): string | undefined {
    return undefined;
  }

  /** A trigger while a run of the instance waits to start is that run's (API.md 17): no second is queued. */
  async triggerBuild(request: TriggerRequest): Promise<TriggerResult> {
    if (request.instanceId === undefined) {
      return { kind: 'unavailable', reason: 'a managed instance is started by its id' };
    }
    const problem = await this.queue(request.instanceId, request.resource, request.now);
    return problem === undefined
      ? { kind: 'triggered', how: 'build' }
      : { kind: 'unavailable', reason: problem };
  }

  async buildLog(request: BuildLogRequest): Promise<BuildLogResult> {
    const run = await this.runOf(request);
    if (!run) {
      return { kind: 'none', reason: `no run ${request.buildId} of this instance` };
    }
    const chunks = await this.logs.open(run.instanceId, run.id);
    if (!chunks) {
      return {
        kind: 'none',
        reason: run.status === 'queued' ? 'the run has not started yet' : 'its runner has written no log yet',
      };
    }
    return { kind: 'log', contentType: 'text/plain; charset=utf-8', chunks };
  }

  buildDetails(): Promise<BuildDetailsResult> {
    return Promise.resolve({
      kind: 'unavailable',
      reason: 'the managed service cannot tell what a build ran',
    });
  }

  async cancelBuild(request: CancelRequest): Promise<CancelResult> {
    const runId = runIdOf(request.buildId);
    if (request.instanceId === undefined || runId === undefined) {
      return { kind: 'none', reason: `no run ${request.buildId} of this instance` };
    }
    const now = request.now ?? new Date(this.clock.nowMs());
    return (await this.runs.requestCancel(request.instanceId, runId, now))
      ? { kind: 'cancelled' }
      : { kind: 'none', reason: `the run ${request.buildId} has ended or is not one of this instance` };
  }

  /**
   * Queues a run of the instance unless one waits to start already (ManagedRunsRepository.queue);
   * resolves why not when it cannot be queued.
   */
  private async queue(instanceId: number, resource: string, at?: Date): Promise<string | undefined> {
    const executor = ExecutorRegistry.nameOf(resource);
    if (!this.executors.has(executor)) {
      return `the executor '${executor}' is not in EXECUTORS_FILE`;
    }
    const source = await this.registered.runSource(instanceId);
    if (!source) {
      return 'the instance was deleted';
    }
    this.uuids.set(instanceId, source.instanceUuid);
    // A suite without a definition or engine is queued all the same: its run ends as an `error` naming it.
    await this.runs.queue(
      {
        instanceId,
        executor,
        engine: source.engine,
        archiveSha256: source.archiveSha256,
        definitionPath: source.definitionPath,
        // What a remote executor (wes) fetches: this service's TRS, so only at the address others reach it by.
        workflowUrl:
          this.config.publicBaseUrl === undefined
            ? null
            : (mainDescriptorUrlOf(this.config.publicBaseUrl, source) ?? null),
      },
      at ?? new Date(this.clock.nowMs()),
    );
    return undefined;
  }

  private async runOf(request: { instanceId?: number; buildId: string }): Promise<StoredRun | undefined> {
    const runId = runIdOf(request.buildId);
    if (request.instanceId === undefined || runId === undefined) {
      return undefined;
    }
    return this.runs.findOf(request.instanceId, runId);
  }

  private async uuidOf(instanceId: number): Promise<string | undefined> {
    if (!this.uuids.has(instanceId)) {
      const source = await this.registered.runSource(instanceId);
      if (source) {
        this.uuids.set(instanceId, source.instanceUuid);
      }
    }
    return this.uuids.get(instanceId);
  }

  private buildOf(run: StoredRun, instanceUuid: string | undefined): Build {
    const status = statusOf(run);
    const startedAt = run.startedAt ?? run.queuedAt;
    const build: Build = {
      buildId: buildIdOf(run.id),
      status,
      startedAt,
      durationSeconds:
        run.finishedAt && run.startedAt
          ? Math.max(0, Math.round((run.finishedAt.getTime() - run.startedAt.getTime()) / 1000))
          : 0,
      // Its page is its log (API.md 11's route), on this service: a path, as a check has no request
      // to tell this service's address; replies and notifications put their base before it.
      url: `/instances/${instanceUuid ?? ''}/builds/${buildIdOf(run.id)}/logs`,
    };
    if (status === 'failed' || status === 'error' || status === 'aborted') {
      build.ciFields = [
        `run: ${status === 'aborted' ? 'cancelled' : status}`,
        ...(run.exitCode === null ? [] : [`exit_code: ${run.exitCode}`]),
        ...(run.reason ? [`reason: ${run.reason}`] : []),
      ];
    }
    return build;
  }
}

/** A run's status in the build statuses' words (API.md 2.6); a cancelled run is `aborted`. */
function statusOf(run: StoredRun): BuildStatus {
  switch (run.status) {
    case 'queued':
      return 'waiting';
    case 'running':
      return 'running';
    case 'passed':
    case 'failed':
      return run.status;
    case 'error':
      return run.cancelRequested ? 'aborted' : 'error';
  }
}

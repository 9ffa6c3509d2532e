import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { In, MoreThanOrEqual, type Repository } from 'typeorm';
import { isUniqueViolation } from '../common/errors/unique-violation.js';
import { claimDueRows } from '../database/claim-due-rows.js';
import { retryOnDeadlock } from '../database/retry-on-deadlock.js';
import { ManagedRunnerEntity } from './entities/managed-runner.entity.js';
import { ManagedRunColumns, type RunStatus } from './entities/managed-run.entity.js';
import type { EngineAvailability } from './executors/executor.js';

/** The token under which managed_runs is injected: the API's or the runner's mapping of it. */
export const RUN_ROWS = Symbol('RUN_ROWS');

/** A run as it is queued (API.md 17): everything a runner needs, copied at queue time. */
export interface NewRun {
  instanceId: number;
  executor: string;
  engine: string | null;
  archiveSha256: string;
  definitionPath: string | null;
  workflowUrl: string | null;
}

export type StoredRun = ManagedRunColumns;

/** A run a runner claimed; `token` proves the claim on every write. */
export interface ClaimedRun extends StoredRun {
  readonly token: string;
}

/** How a run ended, as a runner records it. */
export interface RunEnd {
  status: Extract<RunStatus, 'passed' | 'failed' | 'error'>;
  reason: string;
  exitCode: number | null;
}

/** A run whose status changed, for the API's copies to check its instance (ManagedRunWatcher). */
export interface ChangedRun {
  id: number;
  instanceId: number;
  status: string;
  changedAt: Date;
}

/** What GET /executors shows of one runner. */
export interface RunnerReport {
  executor: string;
  engines: EngineAvailability[];
  seenAt: Date;
}

const OPEN: RunStatus[] = ['queued', 'running'];
/** The longest reason stored (the column's length). */
const REASON_LENGTH = 512;

/** All SQL of managed runs: the queue the API's copies fill and read, the claims runners take. */
@Injectable()
export class ManagedRunsRepository {
  private claims = 0;

  constructor(
    @Inject(RUN_ROWS) private readonly rows: Repository<ManagedRunColumns>,
    @InjectRepository(ManagedRunnerEntity) private readonly runners: Repository<ManagedRunnerEntity>,
  ) {}

  /**
   * Queues a run, due at once; resolves its id, or undefined when a run of the instance is queued
   * already (not started, no cancel asked for): that run is the one asked for, and no second is
   * queued. The unique `queued_instance_id` decides it in this one insert, so that callers racing on
   * one instance (a first check and a trigger, two copies of the service) queue one run between
   * them (migration 1795950000000).
   */
  async queue(run: NewRun, now: Date): Promise<number | undefined> {
    try {
      // InnoDB may pick one of several inserts waiting on the same key as a deadlock victim.
      const result = await retryOnDeadlock(() =>
        this.rows.insert({
          ...run,
          status: 'queued',
          queuedAt: now,
          changedAt: now,
          dueAt: now,
          attempts: 0,
          cancelRequested: false,
          queuedInstanceId: run.instanceId,
        }),
      );
      return Number(result.identifiers[0].id);
    } catch (error) {
      if (isUniqueViolation(error)) {
        return undefined;
      }
      throw error;
    }
  }

  /** An instance's latest runs, newest first (the instance's index). */
  latestOf(instanceId: number, limit: number): Promise<StoredRun[]> {
    return this.rows.find({ where: { instanceId }, order: { id: 'DESC' }, take: limit });
  }

  /** One run of an instance; undefined when it is not one of its runs. */
  async findOf(instanceId: number, runId: number): Promise<StoredRun | undefined> {
    return (await this.rows.findOne({ where: { id: runId, instanceId } })) ?? undefined;
  }

  /**
   * Asks a queued or running run to stop: a queued one no runner holds ends at once (`error`,
   * cancelled); a claimed one is stopped by its runner at its next renewal. False when the run
   * is not open (ended, or not the instance's).
   */
  async requestCancel(instanceId: number, runId: number, now: Date): Promise<boolean> {
    const asked = await this.rows.update(
      { id: runId, instanceId, status: In(OPEN) },
      // A run asked to stop no longer stands for a trigger: the next one queues a run again.
      { cancelRequested: true, changedAt: now, queuedInstanceId: null },
    );
    if ((asked.affected ?? 0) === 0) {
      return false;
    }
    await this.rows
      .createQueryBuilder()
      .update()
      .set({
        status: 'error',
        reason: 'cancelled before it started',
        finishedAt: now,
        changedAt: now,
        dueAt: null,
        claimOwner: null,
        claimUntil: null,
      })
      .where('id = :runId AND status = :queued', { runId, queued: 'queued' })
      .andWhere('(claim_until IS NULL OR claim_until < :now)', { now })
      .execute();
    return true;
  }

  /** Runs whose status changed at or after `since` (the changed_at index). */
  async changedSince(since: Date): Promise<ChangedRun[]> {
    const rows = await this.rows.find({
      select: { id: true, instanceId: true, status: true, changedAt: true },
      where: { changedAt: MoreThanOrEqual(since) },
    });
    return rows.map((row) => ({
      id: row.id,
      instanceId: row.instanceId,
      status: row.status,
      changedAt: row.changedAt,
    }));
  }

  /**
   * Claims up to `batch` runs due at `now` (queued, or open under a claim that ran out) for
   * `claimMs`, exactly once across runners (claimDueRows).
   */
  async claimDue(now: Date, owner: string, batch: number, claimMs: number): Promise<ClaimedRun[]> {
    const token = `${owner}#${++this.claims}`.slice(-64);
    const claimed = await claimDueRows(this.rows, { dueColumn: 'due_at', now, token, batch, claimMs });
    return claimed.map((row) => Object.assign(row, { token }));
  }

  /**
   * The claims that hold the runs of `ids` now, by run id (a runner's sweep of its work folder);
   * runs that ended, were handed back or do not exist are not in it. One read by primary key.
   */
  async claimsOf(ids: readonly number[]): Promise<Map<number, string>> {
    if (ids.length === 0) {
      return new Map();
    }
    const rows = await this.rows.find({
      select: { id: true, claimOwner: true },
      where: { id: In([...ids]) },
    });
    return new Map(
      rows.filter((row) => row.claimOwner !== null).map((row) => [row.id, row.claimOwner as string]),
    );
  }

  /** The run started (or started again) under this claim. False when the claim was lost. */
  async started(run: ClaimedRun, handle: string, now: Date): Promise<boolean> {
    const result = await this.rows.update(
      { id: run.id, claimOwner: run.token },
      {
        status: 'running',
        handle,
        startedAt: now,
        changedAt: now,
        attempts: run.attempts + 1,
        // Started: a trigger from now on asks for a run after this one.
        queuedInstanceId: null,
      },
    );
    return (result.affected ?? 0) > 0;
  }

  /**
   * Keeps the claim until `until`, unless a cancel was asked for or the claim was lost (it ran out
   * and another runner took the run): false then, and `cancelAsked` tells which.
   */
  async renew(run: ClaimedRun, until: Date): Promise<boolean> {
    const result = await this.rows.update(
      { id: run.id, claimOwner: run.token, cancelRequested: false },
      { claimUntil: until },
    );
    return (result.affected ?? 0) > 0;
  }

  /** Whether the run is still held by this claim and asked to stop (read after a failed renewal). */
  async cancelAsked(run: ClaimedRun): Promise<boolean> {
    const row = await this.rows.findOne({
      select: { id: true, cancelRequested: true, claimOwner: true },
      where: { id: run.id },
    });
    return row?.claimOwner === run.token && row.cancelRequested;
  }

  /**
   * Records how the run ended and lets it go: written only under this claim and only for an open
   * run, so that a run is never recorded twice. False when it was not written.
   */
  async finish(run: ClaimedRun, end: RunEnd, now: Date): Promise<boolean> {
    const result = await this.rows.update(
      { id: run.id, claimOwner: run.token, status: In(OPEN) },
      {
        status: end.status,
        reason: end.reason.slice(0, REASON_LENGTH),
        exitCode: end.exitCode,
        startedAt: run.startedAt ?? now,
        finishedAt: now,
        changedAt: now,
        dueAt: null,
        claimOwner: null,
        claimUntil: null,
        queuedInstanceId: null,
      },
    );
    return (result.affected ?? 0) > 0;
  }

  /** Gives the claim back (the runner stops): the run is due again for any runner at once. */
  async release(run: ClaimedRun): Promise<void> {
    await this.rows.update({ id: run.id, claimOwner: run.token }, { claimOwner: null, claimUntil: null });
  }

  /** Records what a runner's executor can run (GET /executors). */
  async reportRunner(
    owner: string,
    executor: string,
    engines: EngineAvailability[],
    now: Date,
  ): Promise<void> {
    // One row per runner and executor; the runner's id and the executor's name are longer together than the key.
    const id = createHash('sha256').update(`${owner}\n${executor}`).digest('hex').slice(0, 32);
    await this.runners.upsert({ id, executor, engines: JSON.stringify(engines), seenAt: now }, ['id']);
  }

  /** The runners seen since `since`, with what each can run. */
  async runnersSeenSince(since: Date): Promise<RunnerReport[]> {
    const rows = await this.runners.find({ where: { seenAt: MoreThanOrEqual(since) } });
    return rows.map((row) => ({
      executor: row.executor,
      engines: JSON.parse(row.engines) as EngineAvailability[],
      seenAt: row.seenAt,
    }));
  }

  /** Forgets runners not seen since `before`. */
  async forgetRunners(before: Date): Promise<void> {
    await this.runners.createQueryBuilder().delete().where('seen_at < :before', { before }).execute();
  }
}

import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Injectable, Logger } from '@nestjs/common';
import { ClaimTicker } from '../../common/claim-ticker.js';
import { Clock } from '../../common/clock.js';
import { AppConfig } from '../../config/app-config.js';
import { CrateStore } from '../../crates/index.js';
import { runLimitsOf, type Executor, type RunState } from '../executors/executor.js';
import { ExecutorRegistry } from '../executors/executor.registry.js';
import { leftoverFolders, parseWorkingFolderName } from '../executors/working-folder.js';
import { ManagedRunsRepository, type ClaimedRun, type RunEnd } from '../managed-runs.repository.js';
import { RunLogs } from '../run-logs.js';

/** About every second, and at once when a run ends: a queued run waits about a second for a free runner. */
const TICK_MS = 1_000;
/** How often a running run's executor is asked for its state. */
const POLL_MS = 250;
/** How often a running run's log tail is written for the log route. */
const LOG_FLUSH_MS = 5_000;
/** How often a runner says again what its executors can run (GET /executors). */
export const REPORT_MS = 60_000;
/**
 * Starts of one run before it ends as `error`: a run that kills its runner (or whose runners keep
 * dying) is not started without end.
 */
export const MAX_ATTEMPTS = 3;
/** Working folders a sweep looks at, at most (the rest at the next one). */
const SWEEP_BATCH = 1_000;

/**
 * A runner process's queue worker (API.md 17): claims queued runs exactly once across runners
 * (claimDueRows on `due_at`), at most RUN_CONCURRENCY at a time, submits each to its executor,
 * renews the claim while it runs (a cancel asked for shows there), writes its log tail, and records
 * how it ended under its claim, so that a run taken over by another runner is never recorded
 * twice. A run whose runner died is claimed again once the claim ran out: the executor tells
 * whether it still has it (`wes`) or not (`local`: it starts again).
 */
@Injectable()
export class RunQueueRunner extends ClaimTicker {
  protected readonly logger = new Logger(RunQueueRunner.name);
  private readonly active = new Map<number, Promise<void>>();
  private reportTimer?: NodeJS.Timeout;
  private sweeping?: Promise<void>;

  constructor(
    private readonly runs: ManagedRunsRepository,
    private readonly executors: ExecutorRegistry,
    private readonly store: CrateStore,
    private readonly logs: RunLogs,
    private readonly config: AppConfig,
    clock: Clock,
  ) {
    super(clock, TICK_MS);
  }

  /**
   * Says what each executor can run and sweeps the work folder before the first claim, then every
   * REPORT_MS.
   */
  protected override async beforeTicks(): Promise<void> {
    await this.report();
    await this.sweep();
    this.reportTimer = setInterval(() => {
      this.report().catch((error: unknown) =>
        this.logger.warn(`reporting the engines failed: ${String(error)}`),
      );
      void this.sweep();
    }, REPORT_MS);
    this.reportTimer.unref();
  }

  override onModuleDestroy(): void {
    clearInterval(this.reportTimer);
    super.onModuleDestroy();
  }

  /** Waits for the tick in flight, then gives back the claims of the runs in flight (see follow). */
  override async beforeApplicationShutdown(): Promise<void> {
    await super.beforeApplicationShutdown();
    await Promise.allSettled(this.active.values());
  }

  /** Runs in flight in this process. */
  get running(): number {
    return this.active.size;
  }

  protected async run(now: Date): Promise<number> {
    const free = this.config.managedRuns.concurrency - this.active.size;
    if (free <= 0) {
      return 0;
    }
    const claimed = await this.runs.claimDue(now, this.owner, free, this.config.managedRuns.claimMs);
    for (const run of claimed) {
      const done = this.follow(run)
        .catch((error: unknown) => {
          this.logger.error({ err: error }, `run m-${run.id} failed in its runner; its claim runs out`);
        })
        .finally(() => {
          this.active.delete(run.id);
          this.kick();
        });
      this.active.set(run.id, done);
    }
    return claimed.length;
  }

  private async report(): Promise<void> {
    const now = new Date(this.clock.nowMs());
    for (const name of this.executors.names()) {
      const engines = await this.executors.get(name).engines();
      await this.runs.reportRunner(this.owner, name, engines, now);
    }
    await this.runs.forgetRunners(new Date(now.getTime() - 10 * REPORT_MS));
  }

  /**
   * Removes the working folders in RUNNER_WORK_DIR that no live claim holds (leftoverFolders): those
   * of runners killed before they could remove them (SIGKILL, a crash). Runners on one machine may
   * share the folder, so a folder of a run another runner runs stays. One read of the runs' claims
   * for the lot. Never rejects; one sweep at a time.
   */
  private sweep(): Promise<void> {
    this.sweeping ??= this.sweepOnce()
      .catch((error: unknown) => this.logger.warn(`sweeping the working folders failed: ${String(error)}`))
      .finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  private async sweepOnce(): Promise<void> {
    const base = this.config.managedRuns.workDir;
    let names: string[];
    try {
      names = await readdir(base);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        return;
      }
      throw error;
    }
    // Listed before the claims are read: a folder is made only after its run was claimed, so its claim shows.
    const folders = names.filter((name) => parseWorkingFolderName(name) !== undefined).slice(0, SWEEP_BATCH);
    if (folders.length === 0) {
      return;
    }
    const ids = [...new Set(folders.map((name) => parseWorkingFolderName(name)!.runId))];
    const leftovers = leftoverFolders(folders, await this.runs.claimsOf(ids));
    await Promise.all(leftovers.map((name) => rm(join(base, name), { recursive: true, force: true })));
    if (leftovers.length > 0) {
      this.logger.log(
        `removed ${leftovers.length} working folder(s) no live claim holds: ${leftovers.join(', ')}`,
      );
    }
  }

  /** One claimed run, from its (re)start to its end or to the loss of its claim. */
  private async follow(run: ClaimedRun): Promise<void> {
    const now = (): Date => new Date(this.clock.nowMs());
    if (run.cancelRequested) {
      await this.end(run, { status: 'error', reason: 'cancelled before it started', exitCode: null });
      return;
    }
    let executor: Executor;
    try {
      executor = this.executors.get(run.executor);
    } catch {
      await this.end(run, {
        status: 'error',
        reason: `the executor '${run.executor}' is not in this runner's EXECUTORS_FILE`,
        exitCode: null,
      });
      return;
    }
    let handle = run.handle;
    // The run's earlier runner died: its executor may still have it (a remote run), else it starts again.
    if (handle !== null && (await executor.poll(handle)).state === 'lost') {
      handle = null;
      // The attempt that died may have left its working folder here: this claim replaced its.
      void this.sweep();
    }
    if (handle === null) {
      if (run.attempts >= MAX_ATTEMPTS) {
        await this.end(run, {
          status: 'error',
          reason: `the run was started ${run.attempts} times and no runner saw it end (its runner died each time)`,
          exitCode: null,
        });
        return;
      }
      handle = await executor.submit({
        runId: run.id,
        claim: run.token,
        archivePath: this.store.pathOf(run.archiveSha256),
        definitionPath: run.definitionPath ?? '',
        engine: run.engine ?? '',
        workflowUrl: run.workflowUrl,
        limits: runLimitsOf(this.config),
      });
      if (!(await this.runs.started(run, handle, now()))) {
        await executor.cancel(handle);
        await executor.release(handle);
        return;
      }
      run.startedAt = now();
    }
    const renewEvery = this.config.managedRuns.claimMs / 6;
    let renewedAt = this.clock.nowMs();
    let flushedAt = this.clock.nowMs();
    let cancelling = false;
    let state: RunState = await executor.poll(handle);
    // Until it ended (only an ended run's state has a reason).
    while (!('reason' in state)) {
      if (state.state === 'lost') {
        // The executor forgot a run it had (a remote service restarted): it starts again under a new claim.
        await this.runs.release(run);
        return;
      }
      if (this.isStopping) {
        // Handed back for another runner, at once (not after the claim ran out): a local run dies with this process.
        await this.runs.release(run);
        await executor.release(handle);
        return;
      }
      if (!cancelling && this.clock.nowMs() - renewedAt >= renewEvery) {
        renewedAt = this.clock.nowMs();
        if (!(await this.runs.renew(run, new Date(renewedAt + this.config.managedRuns.claimMs)))) {
          if (!(await this.runs.cancelAsked(run))) {
            // Another runner took the run over: it is its to record.
            this.logger.warn(`lost the claim on run m-${run.id}; stopping it here`);
            await executor.cancel(handle);
            await executor.release(handle);
            return;
          }
          cancelling = true;
          await executor.cancel(handle);
        }
      }
      if (this.clock.nowMs() - flushedAt >= LOG_FLUSH_MS) {
        flushedAt = this.clock.nowMs();
        await this.writeLog(run, executor, handle);
      }
      await sleep(POLL_MS);
      state = await executor.poll(handle);
    }
    await this.writeLog(run, executor, handle);
    const end: RunEnd = cancelling
      ? { status: 'error', reason: 'cancelled', exitCode: null }
      : { status: state.state, reason: state.reason, exitCode: state.exitCode };
    await this.end(run, end);
    await executor.release(handle);
  }

  private async writeLog(run: ClaimedRun, executor: Executor, handle: string): Promise<void> {
    const tail = await executor.logTail(handle, this.config.monitoring.maxLogBytes);
    await this.logs.write(run.instanceId, run.id, tail);
  }

  private async end(run: ClaimedRun, end: RunEnd): Promise<void> {
    if (await this.runs.finish(run, end, new Date(this.clock.nowMs()))) {
      this.logger.log(`run m-${run.id} ended ${end.status}: ${end.reason}`);
    } else {
      this.logger.warn(`run m-${run.id} ended here, but another runner holds it now: not recorded`);
    }
  }
}

import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { ManagedRunEntity } from '../../src/managed-runs/entities/managed-run.entity.js';
import { ManagedRunsRepository } from '../../src/managed-runs/managed-runs.repository.js';
import { RefreshScheduler } from '../../src/test-monitoring/refresh.scheduler.js';
import { LinkServer } from '../fakes/link-server.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import { managedCrate } from '../support/managed-crates.js';
import { startMariaDb, stopMariaDb } from '../support/mariadb-server.mjs';
import { endedRuns, startRunnerProcess, type RunnerProcess } from '../support/runner-process.js';
import { until } from '../support/until.js';

/**
 * Benchmark of the managed-run queue (issue 33, API.md 17): BENCH_RUNS (200) quick passing CWL
 * runs (real cwltool, `echo hello` checked by checksum) queued at once on one MariaDB, taken by two
 * built runner processes (`dist/src/runner.js`) with RUN_CONCURRENCY=2 each. Prints runs per
 * second (queued to the last one ended), the claim latency (queued → started, p50/p95; with every
 * run queued at once this is mostly the wait behind the runs before it, at the database's one
 * second resolution), how the runs split between the runners, duplicates and lost runs. Asserts
 * only correctness: no run started or recorded twice, none lost; never how fast.
 *
 * Run: npm run bench -- managed (starts its own throwaway MariaDB; runs as root with the run user
 * `wfrunner`, like the e2e tests of managed runs).
 */

const RUNS = Number(process.env.BENCH_RUNS ?? 200);
const RUNNERS = 2;
const CONCURRENCY = 2;
const RUNNER_USER = 'wfrunner';

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

describe('managed runs: two runner processes on one MariaDB', () => {
  let server: Awaited<ReturnType<typeof startMariaDb>>;
  let t: TestApp;
  let links: LinkServer;
  let workDir: string;
  let runners: RunnerProcess[] = [];

  beforeAll(async () => {
    execFileSync('id', ['-u', RUNNER_USER]);
    server = await startMariaDb();
    process.env.TEST_MARIADB_URL = server.rootUrl;
    process.env.TEST_DATABASE = 'mariadb';
    links = await LinkServer.start();
    workDir = mkdtempSync(join(tmpdir(), 'managed-bench-work-'));
    chmodSync(workDir, 0o711);
    t = await createTestApp({
      RUNNER_USER,
      RUNNER_WORK_DIR: workDir,
      RUN_TIMEOUT_SECONDS: '600',
      RUN_CLAIM_SECONDS: '60',
    });
  }, 120_000);

  afterAll(async () => {
    await Promise.all(runners.map((runner) => runner.stop('SIGKILL')));
    await t?.close();
    await links?.close();
    if (workDir) {
      rmSync(workDir, { recursive: true, force: true });
    }
    if (server) {
      await stopMariaDb(server.pid, server.dir);
      rmSync(server.dir, { recursive: true, force: true });
    }
  }, 60_000);

  it(
    `runs ${RUNS} queued runs exactly once`,
    async () => {
      const alice = await t.userToken(['user'], `alice_${randomUUID().slice(0, 8)}`);
      const path = `/passing-${randomUUID()}.crate.zip`;
      links.route(path, { kind: 'bytes', body: managedCrate('passing') });
      const created = await t.http
        .post('/users/current/workflows')
        .set('Authorization', `Bearer ${alice}`)
        .send({ roc_link: links.url(path), version: '1.0' });
      expect(created.status).toBe(201);
      // The first check queues the instance's first run: its archive and definition are the bench's.
      await t.app.get(RefreshScheduler).tick();
      const runs = t.app.get(DataSource).getRepository(ManagedRunEntity);
      const [first] = await runs.find({ order: { id: 'ASC' }, take: 1 });

      runners = await Promise.all(
        Array.from({ length: RUNNERS }, () =>
          startRunnerProcess({ ...t.env, LOG_LEVEL: 'info', RUN_CONCURRENCY: String(CONCURRENCY) }),
        ),
      );
      await until(
        'the first run to end',
        async () => (await runs.findOneBy({ id: first.id }))?.dueAt === null,
        {
          timeoutMs: 120_000,
          everyMs: 200,
        },
      );

      const repository = t.app.get(ManagedRunsRepository);
      const queuedAt = new Date();
      const startMs = Date.now();
      const ids: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        ids.push(
          await repository.queue(
            {
              instanceId: first.instanceId,
              executor: 'local',
              engine: 'cwltool',
              archiveSha256: first.archiveSha256,
              definitionPath: first.definitionPath,
              workflowUrl: null,
            },
            queuedAt,
          ),
        );
      }
      const pending = async (): Promise<number> =>
        runs
          .createQueryBuilder('r')
          .where('r.id >= :from', { from: ids[0] })
          .andWhere('r.due_at IS NOT NULL')
          .getCount();
      let lastPending = RUNS;
      let lastProgressMs = Date.now();
      // Waits while runs keep ending; gives up (and counts the rest as lost) after ten minutes without one.
      await until(
        `${RUNS} runs to end`,
        async () => {
          const now = await pending();
          if (now !== lastPending) {
            lastPending = now;
            lastProgressMs = Date.now();
          }
          return now === 0 || Date.now() - lastProgressMs > 600_000;
        },
        { timeoutMs: 4 * 3600_000, everyMs: 200 },
      );
      const seconds = (Date.now() - startMs) / 1000;

      const rows = await runs.createQueryBuilder('r').where('r.id IN (:...ids)', { ids }).getMany();
      const ended = runners.map((runner) => endedRuns(runner.output()).filter((id) => ids.includes(id)));
      const endings = new Map<number, number>();
      for (const id of ended.flat()) {
        endings.set(id, (endings.get(id) ?? 0) + 1);
      }
      const duplicates = new Set([
        ...rows.filter((row) => row.attempts !== 1).map((row) => row.id),
        ...[...endings].filter(([, count]) => count > 1).map(([id]) => id),
      ]);
      const notRecorded = runners.reduce(
        (sum, runner) =>
          sum + (runner.output().match(/another runner holds it now: not recorded/g)?.length ?? 0),
        0,
      );
      const lost = rows.filter((row) => row.dueAt !== null || !endings.has(row.id));
      const notPassed = rows.filter((row) => row.dueAt === null && row.status !== 'passed');
      // The first runs found every slot free: their latency is the pickup itself (the tick, the claim, the start).
      const idle = rows
        .filter((row) => row.id < ids[0] + RUNNERS * CONCURRENCY && row.startedAt !== null)
        .map((row) => (row.startedAt!.getTime() - row.queuedAt.getTime()) / 1000)
        .sort((a, b) => a - b);
      const latencies = rows
        .filter((row) => row.startedAt !== null)
        .map((row) => (row.startedAt!.getTime() - row.queuedAt.getTime()) / 1000)
        .sort((a, b) => a - b);

      process.stdout.write(
        [
          `managed runs: ${RUNS} runs, ${RUNNERS} runner processes x RUN_CONCURRENCY=${CONCURRENCY}, MariaDB, cwltool (echo hello, checked by checksum)`,
          `  wall time            ${seconds.toFixed(1)} s (queued at once → last run ended)`,
          `  runs per second      ${(RUNS / seconds).toFixed(2)}`,
          `  claim latency        p50 ${percentile(latencies, 50)} s, p95 ${percentile(latencies, 95)} s, max ${latencies.at(-1)} s (queued → started, 1 s resolution)`,
          `  idle claim latency   ${idle.join(' s, ')} s (the first ${RUNNERS * CONCURRENCY} runs, every slot free)`,
          `  runs per runner      ${ended.map((list) => list.length).join(' / ')}`,
          `  ended not passed     ${notPassed.length}${notPassed.length > 0 ? ` (${[...new Set(notPassed.map((row) => row.reason))].join('; ')})` : ''}`,
          `  duplicates           ${duplicates.size} (started twice or recorded twice); 'not recorded' lines ${notRecorded}`,
          `  lost runs            ${lost.length}`,
          '',
        ].join('\n'),
      );
      expect([...duplicates]).toEqual([]);
      expect(notRecorded).toBe(0);
      expect(lost.map((row) => row.id)).toEqual([]);
    },
    4 * 3600_000,
  );
});

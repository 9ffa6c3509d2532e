import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { ManagedRunEntity } from '../../src/managed-runs/entities/managed-run.entity.js';
import { ManagedRunsRepository } from '../../src/managed-runs/managed-runs.repository.js';
import { BuildEntity } from '../../src/test-monitoring/entities/build.entity.js';
import { RefreshScheduler } from '../../src/test-monitoring/refresh.scheduler.js';
import { LinkServer } from '../fakes/link-server.js';
import { createTestApp, startApp, type TestApp } from '../support/create-test-app.js';
import { managedCrate } from '../support/managed-crates.js';
import { startMariaDb, stopMariaDb } from '../support/mariadb-server.mjs';
import { endedRuns, startRunnerProcess, type RunnerProcess } from '../support/runner-process.js';
import { until } from '../support/until.js';

/**
 * Benchmark of the managed-run queue (issue 33, API.md 17): BENCH_RUNS (200) quick passing CWL
 * runs (real cwltool, `echo hello` checked by checksum), one on each of as many managed instances of
 * one suite (added half through each of two copies of the service on one MariaDB), queued by the
 * instances' first checks as both copies' schedulers tick, and taken by two built runner processes
 * (`dist/src/runner.js`) with RUN_CONCURRENCY=2 each. Prints runs per minute (first checks to the
 * last run ended), the queue's claim latency (queued → started, p50/p99; with every run queued at
 * once this is mostly the wait behind the runs before it, at the database's one second resolution),
 * the SQL statements per run that the copies and the runners sent (MariaDB's global `Questions`
 * counter over the runs, less the bench's own polls), how the runs split between the runners,
 * duplicates and lost runs. Asserts only correctness: every run started and recorded exactly once,
 * none lost; never how fast.
 *
 * Run: npm run bench -- managed (starts its own throwaway MariaDB; runs as root with the run user
 * `wfrunner`, like the e2e tests of managed runs). BENCH_RUNS=20 runs fewer.
 */

const RUNS = Number(process.env.BENCH_RUNS ?? 200);
const RUNNERS = 2;
const CONCURRENCY = 2;
const RUNNER_USER = 'wfrunner';
/** How often the bench asks how many runs are still open. */
const POLL_MS = 500;

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function questions(dataSource: DataSource): Promise<number> {
  const rows = await dataSource.query<{ Value: string }[]>("SHOW GLOBAL STATUS LIKE 'Questions'");
  return Number(rows[0].Value);
}

describe('managed runs: two copies of the service and two runner processes on one MariaDB', () => {
  let server: Awaited<ReturnType<typeof startMariaDb>>;
  let t: TestApp;
  let second: NestExpressApplication | undefined;
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
    second = await startApp(t.env);
  }, 120_000);

  afterAll(async () => {
    await Promise.all(runners.map((runner) => runner.stop('SIGKILL')));
    await second?.close();
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
      const { port } = second!.getHttpServer().address() as AddressInfo;
      const copies = [t.http, request(`http://127.0.0.1:${port}`)];
      const alice = await t.userToken(['user'], `alice_${randomUUID().slice(0, 8)}`);
      const path = `/passing-${randomUUID()}.crate.zip`;
      links.route(path, { kind: 'bytes', body: managedCrate('passing') });
      const created = await t.http
        .post('/users/current/workflows')
        .set('Authorization', `Bearer ${alice}`)
        .send({ roc_link: links.url(path), version: '1.0' });
      expect(created.status).toBe(201);
      const workflow = (created.body as { uuid: string }).uuid;
      // The first check queues the crate's instance's first run: the runners' warm-up.
      await t.app.get(RefreshScheduler).tick();
      const dataSource = t.app.get(DataSource);
      const runs = dataSource.getRepository(ManagedRunEntity);
      const [first] = await runs.find({ order: { id: 'ASC' }, take: 1 });

      runners = await Promise.all(
        Array.from({ length: RUNNERS }, () =>
          startRunnerProcess({ ...t.env, LOG_LEVEL: 'info', RUN_CONCURRENCY: String(CONCURRENCY) }),
        ),
      );
      await until(
        'the first run to end',
        async () => (await runs.findOneBy({ id: first.id }))?.dueAt === null,
        { timeoutMs: 120_000, everyMs: 200 },
      );

      // Counts the runs each copy queues (its own repository's queue, called as it is).
      const queuedBy = [0, 0];
      [t.app, second!].forEach((copy, i) => {
        const repository = copy.get(ManagedRunsRepository, { strict: false });
        const queue = repository.queue.bind(repository);
        repository.queue = (...args) => {
          queuedBy[i] += 1;
          return queue(...args);
        };
      });
      // One managed instance per run, added half through each copy, once the warm-up's build was recorded
      // (its recheck ticks a copy, which would check the instances added by then).
      await until(
        'the warm-up build to be recorded',
        async () =>
          (await dataSource.getRepository(BuildEntity).countBy({ instanceId: first.instanceId })) > 0,
        { timeoutMs: 60_000, everyMs: 200 },
      );
      const suites = await t.http
        .get(`/workflows/${workflow}/suites`)
        .set('Authorization', `Bearer ${alice}`)
        .expect(200);
      const suite = (suites.body as { items: { uuid: string }[] }).items[0].uuid;
      const instances: string[] = [];
      for (let i = 0; i < RUNS; i++) {
        const added = await copies[i % 2]
          .post(`/suites/${suite}/instances`)
          .set('Authorization', `Bearer ${alice}`)
          .send({
            name: `bench ${i}`,
            service: { type: 'managed', url: 'https://lifemonitor.example.org' },
            resource: 'local',
            managed: true,
          });
        expect(added.status).toBe(201);
        instances.push((added.body as { uuid: string }).uuid);
      }

      let ownStatements = 1;
      const questionsBefore = await questions(dataSource);
      const startMs = Date.now();
      // Their first checks queue their runs: both copies tick at once, each checking the instances it claims.
      const schedulers = [t.app.get(RefreshScheduler), second!.get(RefreshScheduler)];
      const queuedRuns = async (): Promise<number> => {
        ownStatements += 1;
        return runs.createQueryBuilder('r').where('r.id > :first', { first: first.id }).getCount();
      };
      while ((await queuedRuns()) < RUNS) {
        const cycles = await Promise.all(schedulers.map((scheduler) => scheduler.tick()));
        if (cycles.every((cycle) => cycle === undefined)) {
          // Both copies were ticking already (a recheck): their cycles end shortly.
          await sleep(100);
        }
      }
      const ids = (
        await runs
          .createQueryBuilder('r')
          .select('r.id', 'id')
          .where('r.id > :first', { first: first.id })
          .orderBy('r.id', 'ASC')
          .getRawMany<{ id: number | string }>()
      ).map((row) => Number(row.id));
      ownStatements += 1;
      const pending = async (): Promise<number> => {
        ownStatements += 1;
        return runs
          .createQueryBuilder('r')
          .where('r.id IN (:...ids)', { ids })
          .andWhere('r.due_at IS NOT NULL')
          .getCount();
      };
      let lastPending = ids.length;
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
        { timeoutMs: 4 * 3600_000, everyMs: POLL_MS },
      );
      const seconds = (Date.now() - startMs) / 1000;
      const statements = (await questions(dataSource)) - questionsBefore - ownStatements;

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
      const perInstance = new Map<number, number>();
      for (const row of rows) {
        perInstance.set(row.instanceId, (perInstance.get(row.instanceId) ?? 0) + 1);
      }
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
          `managed runs: ${RUNS} runs, 2 copies of the service, ${RUNNERS} runner processes x RUN_CONCURRENCY=${CONCURRENCY}, MariaDB, cwltool (echo hello, checked by checksum)`,
          `  queued               ${ids.length} runs on ${perInstance.size} instances, by the instances' first checks, queued by copy ${queuedBy.join(' / ')}`,
          `  wall time            ${seconds.toFixed(1)} s (first checks → last run ended)`,
          `  runs per minute      ${((ids.length / seconds) * 60).toFixed(1)}`,
          `  claim latency        p50 ${percentile(latencies, 50)} s, p99 ${percentile(latencies, 99)} s, max ${latencies.at(-1)} s (queued → started, 1 s resolution)`,
          `  idle claim latency   ${idle.join(' s, ')} s (the first ${RUNNERS * CONCURRENCY} runs, every slot free)`,
          `  statements per run   ${(statements / ids.length).toFixed(1)} (MariaDB global Questions over the runs, both copies and both runners, less the bench's own ${ownStatements}: ${statements} in all)`,
          `  runs per runner      ${ended.map((list) => list.length).join(' / ')}`,
          `  ended not passed     ${notPassed.length}${notPassed.length > 0 ? ` (${[...new Set(notPassed.map((row) => row.reason))].join('; ')})` : ''}`,
          `  duplicates           ${duplicates.size} (started twice or recorded twice); 'not recorded' lines ${notRecorded}`,
          `  lost runs            ${lost.length}`,
          '',
        ].join('\n'),
      );
      expect(ids).toHaveLength(RUNS);
      expect([...perInstance.values()].every((count) => count === 1)).toBe(true);
      expect([...duplicates]).toEqual([]);
      expect(notRecorded).toBe(0);
      expect(lost.map((row) => row.id)).toEqual([]);
    },
    4 * 3600_000,
  );
});

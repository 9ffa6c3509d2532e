import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AppConfig } from '../../src/config/app-config.js';
import { CREDENTIAL_KEYS, type TestingServiceCredentials } from '../../src/config/testing-services-file.js';
import {
  BUILD_STATUSES,
  LogStreamError,
  RegisterTestingService,
  TRIGGER_HOWS,
  type Build,
  type BuildCheckResult,
  type BuildLogResult,
  type TestingService,
  type TriggerResult,
} from '../../src/test-monitoring/testing-services/testing-service.js';
import { serviceTypeOf } from '../../src/crates/ro-crate-parser.js';
import type { FakeServer } from '../fakes/fake-server.js';
import { buildsOf, clientConfig } from '../support/testing-service-spec.js';

/** The three kinds of build every service can be told to hold, oldest first. */
export type ContractBuild = 'passed' | 'failed' | 'running';

/** An instance as the contract asks about it: its resource, and its id where the service reads by it (managed). */
export type ContractTarget = string | { resource: string; instanceId?: number };

export interface ContractOptions {
  /**
   * The service keeps its builds itself (managed instances: runs in the database, run by runners)
   * instead of asking a CI service over HTTP: no upstream to fail or rate-limit it, no credentials
   * to start a build, and an instance's first check starts its first build.
   */
  ownBuilds?: boolean;
}

export interface TestingServiceContractSubject {
  readonly service: TestingService;
  /** The loopback fake speaking the service's protocol (with ownBuilds: the one behind its runners). */
  readonly fake: FakeServer;
  /**
   * Gives the fake one job/repository/workflow with these builds (oldest first, numbered from 1)
   * and returns the instance `resource` that names it.
   */
  seed(builds: readonly ContractBuild[]): ContractTarget | Promise<ContractTarget>;
  /** A `resource` of the right shape that the fake does not know (a 404). */
  readonly unknownResource: ContractTarget;
  /** A `resource` the client must refuse without asking the service. */
  readonly malformedResource: ContractTarget;
  /** Credentials the fake takes for starting builds (and reading logs). */
  credentials(): TestingServiceCredentials;
  /**
   * Gives the fake one build with this log and returns its resource and build id; absent for a
   * service whose class serves no logs (it must say so, `unavailable`).
   */
  readonly seedLog?: (
    log: string,
  ) =>
    | { resource: string; instanceId?: number; buildId: string }
    | Promise<{ resource: string; instanceId?: number; buildId: string }>;
  readonly dispose: () => Promise<void>;
}

const TEST_TERMS = 'https://w3id.org/ro/terms/test#';

/**
 * What every TestingService must do, whatever the CI service behind it (docs/extending.md). A
 * client spec calls this with a function giving a fresh subject for each test: the client under
 * the 1 s upstream timeout of test/support/testing-service-spec.ts, and its own started fake.
 */
export function testingServiceContract(
  label: string,
  createSubject: () => Promise<TestingServiceContractSubject>,
  options: ContractOptions = {},
): void {
  // A case that does not apply to the subject is not registered at all: a skipped test in the
  // report would read as one that could not run.
  const notApplicable = (..._case: Parameters<typeof it>): void => undefined;
  /** What only a service asking a CI over HTTP does (its trouble, its rate limits, its credentials). */
  const remoteIt = options.ownBuilds ? notApplicable : it;
  /** What only a service running the builds itself does. */
  const ownIt = options.ownBuilds ? it : notApplicable;
  const targetOf = (target: ContractTarget): { resource: string; instanceId?: number } =>
    typeof target === 'string' ? { resource: target } : target;

  describe(`TestingService contract: ${label}`, () => {
    let subject: TestingServiceContractSubject;
    let service: TestingService;

    beforeEach(async () => {
      subject = await createSubject();
      service = subject.service;
    });

    afterEach(async () => {
      await subject.dispose();
    });

    const check = (
      target: ContractTarget,
      extra: { etag?: string; limit?: number; now?: Date } = {},
    ): Promise<BuildCheckResult> =>
      service.latestBuilds({ serviceUrl: subject.fake.url, ...targetOf(target), ...extra });

    it('says what it is: a type that is its crate term lower-cased without "Service", and its settings', () => {
      expect(service.type).toMatch(/^[a-z0-9-]+$/);
      expect(service.crateTerm).toMatch(/^[A-Z][A-Za-z0-9]*Service$/);
      expect(serviceTypeOf(`${TEST_TERMS}${service.crateTerm}`)).toBe(service.type);
      for (const setting of service.settings) {
        expect(CREDENTIAL_KEYS).toContain(setting);
      }
    });

    it('is marked for registration', () => {
      expect(Reflect.getMetadata(RegisterTestingService.KEY, service.constructor)).toBeDefined();
    });

    it('reports the builds newest first, normalised, with unique ids and their pages', async () => {
      const resource = await subject.seed(['passed', 'failed', 'running']);
      const result = await check(resource);
      const builds = buildsOf(result);
      expect(builds.map((build) => build.status)).toEqual(['running', 'failed', 'passed']);
      for (const build of builds) {
        expectBuildShape(build);
      }
      expect(new Set(builds.map((build) => build.buildId)).size).toBe(3);
      expect(builds[0].durationSeconds).toBe(0);
      expect(builds[1].startedAt.getTime()).toBeGreaterThanOrEqual(builds[2].startedAt.getTime());
    });

    remoteIt('reports a repository without builds as a success with none', async () => {
      await expect(check(await subject.seed([]))).resolves.toMatchObject({ kind: 'builds', builds: [] });
    });

    ownIt("starts an instance's first build at its first check, and reports it waiting", async () => {
      const target = await subject.seed([]);
      const builds = buildsOf(await check(target));
      expect(builds.map((build) => build.status)).toEqual(['waiting']);
      expectBuildShape(builds[0]);
      expect(buildsOf(await check(target))).toHaveLength(1);
    });

    it('asks for no more than the limit, the newest ones', async () => {
      const resource = await subject.seed(['passed', 'failed', 'passed', 'running']);
      const builds = buildsOf(await check(resource, { limit: 2 }));
      expect(builds.map((build) => build.status)).toEqual(['running', 'passed']);
    });

    it('sends the ETag back and takes "not modified" for an unchanged answer', async () => {
      const resource = await subject.seed(['passed']);
      const first = await check(resource);
      expect(first.kind).toBe('builds');
      const etag = first.kind === 'builds' ? first.etag : undefined;
      expect(etag).toEqual(expect.any(String));
      await expect(check(resource, { etag })).resolves.toEqual({ kind: 'not_modified' });
    });

    it('fails (never rejects) for an unknown resource', async () => {
      await expect(check(subject.unknownResource)).resolves.toMatchObject({
        kind: 'failed',
        reason: expect.any(String),
      });
    });

    remoteIt('fails (never rejects) for a 5xx, a timeout and a reset connection', async () => {
      const resource = await subject.seed(['passed']);
      for (const mode of [{ kind: 'status', status: 503 }, { kind: 'hang' }, { kind: 'reset' }] as const) {
        subject.fake.fail(mode);
        await expect(check(resource)).resolves.toMatchObject({ kind: 'failed', reason: expect.any(String) });
        subject.fake.heal();
      }
    });

    it('refuses a malformed resource without sending a request', async () => {
      subject.fake.resetLog();
      await expect(check(subject.malformedResource)).resolves.toMatchObject({ kind: 'failed' });
      expect(subject.fake.requests).toHaveLength(0);
    });

    describe('the web page of a resource', () => {
      remoteIt('is an http(s) page, told without a request', async () => {
        const resource = await subject.seed(['passed']);
        subject.fake.resetLog();
        const page = service.resourcePage({ serviceUrl: subject.fake.url, ...targetOf(resource) });
        expect(new URL(page ?? '').protocol).toMatch(/^https?:$/);
        expect(subject.fake.requests).toHaveLength(0);
      });

      ownIt('is none: its builds are pages of this service (their logs)', async () => {
        const resource = await subject.seed(['passed']);
        expect(service.resourcePage({ serviceUrl: subject.fake.url, ...targetOf(resource) })).toBeUndefined();
      });
    });

    describe('starting a build', () => {
      const trigger = (
        target: ContractTarget,
        credentials?: TestingServiceCredentials,
      ): Promise<TriggerResult> =>
        service.triggerBuild({ serviceUrl: subject.fake.url, ...targetOf(target), credentials });

      ownIt(
        'starts one without credentials (it needs none), and the next check finds it, newest',
        async () => {
          expect(service.settings).toEqual([]);
          const resource = await subject.seed(['passed']);
          const before = buildsOf(await check(resource));
          await expect(trigger(resource)).resolves.toEqual({ kind: 'triggered', how: expect.any(String) });
          const after = buildsOf(await check(resource));
          expect(after).toHaveLength(before.length + 1);
          expect(after[0].status).toBe('waiting');
        },
      );

      remoteIt(
        'sends nothing without credentials for the service URL, and says which setting gives them',
        async () => {
          const resource = await subject.seed(['passed']);
          subject.fake.resetLog();
          const result = await trigger(resource);
          expect(result).toEqual({ kind: 'unavailable', reason: expect.stringContaining(subject.fake.url) });
          expect(result.kind === 'unavailable' ? result.reason : '').toMatch(/TESTING_SERVICES_FILE/);
          expect(subject.fake.requests).toHaveLength(0);
          const elsewhere = { ...subject.credentials(), url: 'https://ci.elsewhere.example' };
          await expect(trigger(resource, elsewhere)).resolves.toMatchObject({ kind: 'unavailable' });
          expect(subject.fake.requests).toHaveLength(0);
        },
      );

      it('starts one with credentials, and the next check finds it, newest', async () => {
        const resource = await subject.seed(['passed', 'failed']);
        const before = buildsOf(await check(resource));
        const result = await trigger(resource, subject.credentials());
        expect(result).toEqual({ kind: 'triggered', how: expect.any(String) });
        expect(TRIGGER_HOWS).toContain(result.kind === 'triggered' ? result.how : '');
        const after = buildsOf(await check(resource));
        expect(after).toHaveLength(before.length + 1);
        expect(before.map((build) => build.buildId)).not.toContain(after[0].buildId);
      });

      it('starts one for a periodic re-run of the latest build (a re-run or a fresh build), and the next check finds it', async () => {
        const resource = await subject.seed(['passed', 'failed']);
        const before = buildsOf(await check(resource));
        const result = await service.triggerBuild({
          serviceUrl: subject.fake.url,
          ...targetOf(resource),
          credentials: subject.credentials(),
          latestBuildId: before[0].buildId,
          rerun: true,
        });
        expect(result).toEqual({ kind: 'triggered', how: expect.any(String) });
        const after = buildsOf(await check(resource));
        expect(after).toHaveLength(before.length + 1);
        expect(before.map((build) => build.buildId)).not.toContain(after[0].buildId);
      });

      it('refuses a malformed resource without sending a request', async () => {
        subject.fake.resetLog();
        await expect(trigger(subject.malformedResource, subject.credentials())).resolves.toMatchObject({
          kind: 'unavailable',
        });
        expect(subject.fake.requests).toHaveLength(0);
      });

      remoteIt(
        'answers upstream trouble as values: a 5xx refused, a hang a timeout, a 429 a pause',
        async () => {
          const resource = await subject.seed(['passed']);
          subject.fake.fail({ kind: 'status', status: 503 });
          await expect(trigger(resource, subject.credentials())).resolves.toMatchObject({
            kind: 'refused',
            reason: expect.stringMatching(/503/),
          });
          subject.fake.heal();
          subject.fake.fail({ kind: 'hang' });
          await expect(trigger(resource, subject.credentials())).resolves.toMatchObject({ kind: 'timeout' });
          subject.fake.heal();
          subject.fake.limitRate({ status: 429, retryAfterSeconds: 60 });
          const now = new Date();
          await expect(
            service.triggerBuild({
              serviceUrl: subject.fake.url,
              ...targetOf(resource),
              credentials: subject.credentials(),
              now,
            }),
          ).resolves.toMatchObject({ kind: 'rate_limited', until: new Date(now.getTime() + 60_000) });
        },
      );
    });

    describe('reading a build log', () => {
      const read = (target: ContractTarget, buildId: string, signal = new AbortController().signal) =>
        service.buildLog({
          serviceUrl: subject.fake.url,
          ...targetOf(target),
          buildId,
          credentials: subject.credentials(),
          signal,
        });

      it('serves the whole log in order, a build without one is none, or says it serves no logs', async () => {
        if (!subject.seedLog) {
          subject.fake.resetLog();
          await expect(read(await subject.seed(['passed']), '1')).resolves.toMatchObject({
            kind: 'unavailable',
          });
          expect(subject.fake.requests).toHaveLength(0);
          return;
        }
        const text = Array.from({ length: 2000 }, (_, line) => `line ${line}: ${'x'.repeat(line % 70)}`).join(
          '\n',
        );
        const { buildId, ...resource } = await subject.seedLog(text);
        const result = await read(resource, buildId);
        expect(result).toMatchObject({ kind: 'log', contentType: expect.stringMatching(/^text\/plain/) });
        expect((await whole(result)).toString('utf8')).toBe(text);
        await expect(read(resource, '987654')).resolves.toMatchObject({ kind: 'none' });
      });

      remoteIt('answers upstream trouble as values, and a log broken off as a LogStreamError', async () => {
        if (!subject.seedLog) {
          return;
        }
        const { buildId, ...resource } = await subject.seedLog('a log\n');
        subject.fake.fail({ kind: 'status', status: 500 });
        await expect(read(resource, buildId)).resolves.toMatchObject({ kind: 'refused' });
        subject.fake.heal();
        subject.fake.fail({ kind: 'hang' });
        await expect(read(resource, buildId)).resolves.toMatchObject({ kind: 'timeout' });
        subject.fake.heal();
        const aborted = new AbortController();
        aborted.abort();
        const result = await read(resource, buildId, aborted.signal);
        if (result.kind === 'log') {
          await expect(whole(result)).rejects.toBeInstanceOf(LogStreamError);
        } else {
          expect(result.kind).toBe('refused');
        }
      });
    });

    remoteIt('pauses on a 429 until its Retry-After', async () => {
      const resource = await subject.seed(['passed']);
      subject.fake.limitRate({ status: 429, retryAfterSeconds: 60 });
      const now = new Date();
      const result = await check(resource, { now });
      expect(result).toEqual({ kind: 'rate_limited', until: new Date(now.getTime() + 60_000) });
    });
  });
}

/**
 * A subject around a fake: starts it, gives the client the settings of the client specs, and stops
 * and cleans everything in `dispose`.
 */
export async function subjectWithFake(
  fake: FakeServer,
  build: (config: AppConfig) => Omit<TestingServiceContractSubject, 'fake' | 'dispose'>,
): Promise<TestingServiceContractSubject> {
  await fake.start();
  const dataDir = mkdtempSync(join(tmpdir(), 'service-contract-'));
  return {
    ...build(clientConfig(dataDir)),
    fake,
    dispose: async () => {
      await fake.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Every chunk of a log, joined (the contract's logs are small). */
async function whole(result: BuildLogResult): Promise<Buffer> {
  if (result.kind !== 'log') {
    throw new Error(`expected a log, got ${JSON.stringify(result)}`);
  }
  const chunks: Buffer[] = [];
  for await (const chunk of result.chunks) {
    // Copied: a chunk is valid only until the next is asked for.
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks);
}

function expectBuildShape(build: Build): void {
  expect(build.buildId).toMatch(/^\S+$/);
  expect(BUILD_STATUSES).toContain(build.status);
  expect(Number.isNaN(build.startedAt.getTime())).toBe(false);
  expect(Number.isInteger(build.durationSeconds) && build.durationSeconds >= 0).toBe(true);
  // A page on the CI service, or a path on this one (which the views make absolute), never one
  // that leaves the site (`//host`, `/\host`).
  if (build.url.startsWith('/')) {
    expect(build.url).toMatch(/^\/(?![/\\])\S*$/);
  } else {
    expect(new URL(build.url).protocol).toMatch(/^https?:$/);
  }
}

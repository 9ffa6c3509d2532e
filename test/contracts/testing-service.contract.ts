import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AppConfig } from '../../src/config/app-config.js';
import { CREDENTIAL_KEYS } from '../../src/config/testing-services-file.js';
import {
  BUILD_STATUSES,
  RegisterTestingService,
  type Build,
  type BuildCheckResult,
  type TestingService,
} from '../../src/test-monitoring/testing-services/testing-service.js';
import { serviceTypeOf } from '../../src/workflows/crate/ro-crate-parser.js';
import type { FakeServer } from '../fakes/fake-server.js';
import { buildsOf, clientConfig } from '../support/testing-service-spec.js';

/** The three kinds of build every service can be told to hold, oldest first. */
export type ContractBuild = 'passed' | 'failed' | 'running';

export interface TestingServiceContractSubject {
  readonly service: TestingService;
  /** The loopback fake speaking the service's protocol. */
  readonly fake: FakeServer;
  /**
   * Gives the fake one job/repository/workflow with these builds (oldest first, numbered from 1)
   * and returns the instance `resource` that names it.
   */
  seed(builds: readonly ContractBuild[]): string;
  /** A `resource` of the right shape that the fake does not know (a 404). */
  readonly unknownResource: string;
  /** A `resource` the client must refuse without asking the service. */
  readonly malformedResource: string;
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
): void {
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
      resource: string,
      extra: { etag?: string; limit?: number } = {},
    ): Promise<BuildCheckResult> =>
      service.latestBuilds({ serviceUrl: subject.fake.url, resource, ...extra });

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
      const resource = subject.seed(['passed', 'failed', 'running']);
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

    it('reports a repository without builds as a success with none', async () => {
      await expect(check(subject.seed([]))).resolves.toMatchObject({ kind: 'builds', builds: [] });
    });

    it('asks for no more than the limit, the newest ones', async () => {
      const resource = subject.seed(['passed', 'failed', 'passed', 'running']);
      const builds = buildsOf(await check(resource, { limit: 2 }));
      expect(builds.map((build) => build.status)).toEqual(['running', 'passed']);
    });

    it('sends the ETag back and takes "not modified" for an unchanged answer', async () => {
      const resource = subject.seed(['passed']);
      const first = await check(resource);
      expect(first.kind).toBe('builds');
      const etag = first.kind === 'builds' ? first.etag : undefined;
      expect(etag).toEqual(expect.any(String));
      await expect(check(resource, { etag })).resolves.toEqual({ kind: 'not_modified' });
    });

    it('fails (never rejects) for an unknown resource, a 5xx, a timeout and a reset connection', async () => {
      await expect(check(subject.unknownResource)).resolves.toMatchObject({ kind: 'failed' });
      const resource = subject.seed(['passed']);
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

    it('pauses on a 429 until its Retry-After', async () => {
      const resource = subject.seed(['passed']);
      subject.fake.limitRate({ status: 429, retryAfterSeconds: 60 });
      const now = new Date();
      const result = await service.latestBuilds({ serviceUrl: subject.fake.url, resource, now });
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

function expectBuildShape(build: Build): void {
  expect(build.buildId).toMatch(/^\S+$/);
  expect(BUILD_STATUSES).toContain(build.status);
  expect(Number.isNaN(build.startedAt.getTime())).toBe(false);
  expect(Number.isInteger(build.durationSeconds) && build.durationSeconds >= 0).toBe(true);
  expect(new URL(build.url).protocol).toMatch(/^https?:$/);
}

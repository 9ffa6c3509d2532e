import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type AppConfig } from '../../src/config/app-config.js';
import type {
  Build,
  BuildCheckRequest,
  BuildCheckResult,
  TestingService,
} from '../../src/test-monitoring/testing-services/testing-service.js';
import type { FakeServer } from '../fakes/fake-server.js';

/** The settings the CI client specs run with: loopback fakes allowed, a 1 s upstream timeout. */
export function clientConfig(dataDir: string, env: Record<string, string> = {}): AppConfig {
  return loadConfig({
    DATA_DIR: dataDir,
    JWT_SECRET: 'x'.repeat(40),
    ALLOW_PRIVATE_NETWORK_LINKS: 'true',
    UPSTREAM_TIMEOUT_SECONDS: '1',
    ...env,
  });
}

/** The builds of a check that must have succeeded; any other outcome fails the test with what it was. */
export function buildsOf(result: BuildCheckResult): Build[] {
  if (result.kind !== 'builds') {
    throw new Error(`expected builds, got ${JSON.stringify(result)}`);
  }
  return result.builds;
}

/** What a client spec works with: a started fake, the client under clientConfig, and check helpers. */
export interface ClientSpec<F extends FakeServer, S extends TestingService> {
  readonly fake: F;
  readonly service: S;
  /** A folder of the spec's own, removed after it. */
  readonly dataDir: string;
  configWith(env?: Record<string, string>): AppConfig;
  check(overrides?: Partial<BuildCheckRequest>): Promise<BuildCheckResult>;
  builds(overrides?: Partial<BuildCheckRequest>): Promise<Build[]>;
}

/**
 * The set-up every client spec shares: a data folder and the fake for the whole file (started
 * before, stopped and removed after), the fake healed and its log cleared before each test, and
 * `check` asking `service` for `resource` on the fake (at `serviceUrl(fake)`).
 */
export function clientSpec<F extends FakeServer, S extends TestingService>(options: {
  name: string;
  fake: F;
  service: (config: AppConfig) => S;
  resource: string;
  serviceUrl?: (fake: F) => string;
}): ClientSpec<F, S> {
  const dataDir = mkdtempSync(join(tmpdir(), `${options.name}-spec-`));
  const { fake } = options;
  const configWith = (env: Record<string, string> = {}): AppConfig => clientConfig(dataDir, env);
  const service = options.service(configWith());
  const check = (overrides: Partial<BuildCheckRequest> = {}): Promise<BuildCheckResult> =>
    service.latestBuilds({
      serviceUrl: options.serviceUrl?.(fake) ?? fake.url,
      resource: options.resource,
      ...overrides,
    });

  beforeAll(async () => {
    await fake.start();
  });

  afterAll(async () => {
    await fake.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  beforeEach(() => {
    fake.heal();
    fake.resetLog();
    fake.requiredAuthorization = undefined;
  });

  return {
    fake,
    service,
    dataDir,
    configWith,
    check,
    builds: async (overrides) => buildsOf(await check(overrides)),
  };
}

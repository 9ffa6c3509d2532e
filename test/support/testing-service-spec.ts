import { loadConfig, type AppConfig } from '../../src/config/app-config.js';
import type { Build, BuildCheckResult } from '../../src/test-monitoring/testing-services/testing-service.js';

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

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ADMIN, baseTestEnv, createTestDatabase, testDatabase } from './create-test-app.js';
import { startServiceProcess, type ServiceProcess } from './service-process.js';

/** How long to wait (`until`) for the copies: they poll every few seconds and share the work. */
export const COPIES_WAIT = { timeoutMs: 60_000 };

/**
 * Two copies of the built service on one database and one DATA_DIR, for the suites that prove
 * something happens once however many copies run (checks, notifications, re-runs, follows, leases,
 * quotas). MariaDB only: several copies on one SQLite file is not a supported deployment.
 */
export class ServiceCopies {
  /** The copies started so far, in order. */
  readonly all: ServiceProcess[] = [];

  private constructor(
    readonly dataDir: string,
    private readonly database: { url: string; drop(): Promise<void> },
  ) {}

  /** A fresh data directory and database for the copies; refuses to run on the SQLite project. */
  static async prepare(name: string): Promise<ServiceCopies> {
    if (testDatabase() !== 'mariadb') {
      throw new Error('this suite runs on the MariaDB project only (see jest.config.js)');
    }
    const dataDir = mkdtempSync(join(tmpdir(), `${name}-`));
    return new ServiceCopies(dataDir, await createTestDatabase(dataDir));
  }

  /** The settings every copy starts with: the test environment on this database, then `settings`. */
  env(settings: Record<string, string> = {}): Record<string, string> {
    return { ...baseTestEnv(this.dataDir, this.database.url), ...settings };
  }

  /**
   * Starts two copies with the same settings, each ready before the next starts (the first
   * applies the migrations; the second finds them applied).
   */
  async start(settings: Record<string, string> = {}): Promise<[ServiceProcess, ServiceProcess]> {
    const env = this.env(settings);
    const first = await startServiceProcess(env);
    this.all.push(first);
    const second = await startServiceProcess(env);
    this.all.push(second);
    return [first, second];
  }

  /** A token of the test environment's admin, signed in at the first copy (any copy accepts it). */
  async adminToken(): Promise<string> {
    const reply = await fetch(`${this.all[0].url}/api/v1/auth`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(ADMIN),
    });
    if (reply.status !== 200) {
      throw new Error(`the admin's sign-in answered ${reply.status}: ${await reply.text()}`);
    }
    return ((await reply.json()) as { token: string }).token;
  }

  /** Stops every copy, then drops the database and removes the data directory. */
  async close(): Promise<void> {
    for (const copy of this.all) {
      await copy.stop();
    }
    await this.database.drop();
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}

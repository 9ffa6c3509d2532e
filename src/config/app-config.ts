import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import ipaddr from 'ipaddr.js';
import { loadClouds, type CloudSettings } from './clouds-file.js';
import { ConfigError } from './config-error.js';
import { EnvSchema } from './env.schema.js';
import { loadIdentityProviders, type IdentityProviderSettings } from './identity-providers-file.js';
import { loadExecutors, type ExecutorSettings } from './executors-file.js';
import { refusePlaceholderSecrets } from './placeholder-secrets.js';
import { loadTestingServices, type TestingServiceCredentials } from './testing-services-file.js';
import { loadFailurePatterns, type FailurePatternSetting } from './failure-patterns-file.js';

export type DatabaseSettings =
  { readonly type: 'sqlite'; readonly path: string } | { readonly type: 'mariadb'; readonly url: string };

/**
 * Every setting of the service, validated once at start-up. Provided as a class token so
 * that services inject it by type; nothing else reads `process.env`.
 */
export class AppConfig {
  readonly environment!: 'development' | 'production' | 'test';
  readonly production!: boolean;
  readonly port!: number;
  readonly dataDir!: string;
  readonly logLevel!: string;
  readonly publicBaseUrl?: string;
  /**
   * The service knows its pages are reached over HTTPS (COOKIE_SECURE=true, or an https://
   * PUBLIC_BASE_URL): only then may it tell browsers to upgrade every http:// subresource.
   */
  readonly servedOverHttps!: boolean;
  /** Value for Express `trust proxy`. */
  readonly trustProxy!: boolean | number | string;
  readonly shutdownTimeoutMs!: number;
  /** Longest wait for one database call before it fails as unavailable (503). */
  readonly databaseTimeoutMs!: number;
  /** How long start-up keeps trying to reach the database before it stops, naming DATABASE_URL. */
  readonly databaseStartupTimeoutMs!: number;
  readonly metricsToken?: string;
  readonly database!: DatabaseSettings;
  readonly auth!: {
    readonly jwtSecret: string;
    readonly jwtExpiresInSeconds: number;
    readonly cookieSecure: boolean;
    readonly rateLimit: number;
    readonly adminUsername?: string;
    readonly adminPassword?: string;
    /** The sign-in providers of IDENTITY_PROVIDERS_FILE (API.md 15), in its order; none without it. */
    readonly identityProviders: readonly IdentityProviderSettings[];
  };
  readonly registry!: {
    readonly maxCrateBytes: number;
    readonly maxUncompressedBytes: number;
    readonly downloadTimeoutMs: number;
    readonly allowPrivateNetworkLinks: boolean;
    /** GITHUB_API_URL without trailing slashes, and GITHUB_TOKEN: for repository links (API.md 7.1). */
    readonly github: { readonly apiUrl: string; readonly token?: string };
  };
  readonly monitoring!: {
    readonly refreshIntervalSeconds: number;
    readonly upstreamTimeoutMs: number;
    /** The services of TESTING_SERVICES_FILE, in its order. */
    readonly services: readonly TestingServiceCredentials[];
    /** Tokens from the environment by variable name (`GITHUB_TOKEN`), for the CI service class that reads one. */
    readonly serviceTokens: Readonly<Record<string, string>>;
    /** RERUN_INTERVAL_DAYS: the re-run interval of workflows that set none; undefined: none for them. */
    readonly rerunIntervalDays?: number;
    /** MAX_LOG_BYTES: the tail of a build log served. */
    readonly maxLogBytes: number;
    /** FAILURE_PATTERNS_FILE's rows, in its order (the failure classifier compiles and checks them). */
    readonly failurePatterns: readonly FailurePatternSetting[];
    /** STALE_AFTER_DAYS: a newest build older than this makes a status stale (API.md 16). */
    readonly staleAfterDays: number;
  };
  readonly notifications!: {
    readonly maxBuildAgeDays: number;
    readonly retentionDays: number;
    /** Undefined: no e-mail channel. */
    readonly smtpUrl?: string;
    readonly mailFrom: string;
    readonly githubWebhookSecret?: string;
    readonly gitlabWebhookSecret?: string;
    /** ALLOW_PRIVATE_NETWORK_LINKS, for webhook and Slack targets. */
    readonly allowPrivateTargets: boolean;
  };
  /** Managed test instances (API.md 17): their executors and the limits of a runner's runs. */
  readonly managedRuns!: {
    /** EXECUTORS_FILE's executors (always one named `local`). */
    readonly executors: readonly ExecutorSettings[];
    readonly timeoutSeconds: number;
    readonly memoryMib: number;
    readonly maxOutputBytes: number;
    readonly maxProcesses: number;
    readonly concurrency: number;
    readonly claimMs: number;
    readonly runnerUser?: string;
    readonly workDir: string;
  };
  readonly orchestration!: {
    /** Undefined without CLOUDS_FILE: one cloud named `default`, of the provider type that serves it. */
    readonly clouds?: readonly CloudSettings[];
    readonly assignmentFacilityUrl?: string;
    readonly upstreamTimeoutMs: number;
    /** QUOTA_MAX_*: the quota of a user who has none of their own; undefined is no limit. */
    readonly defaultQuota: {
      readonly maxNodes?: number;
      readonly maxVcpus?: number;
      readonly maxRamMib?: number;
    };
  };
}

/**
 * Reads `.env` into the environment without overriding what is set already. In development
 * (NODE_ENV unset), a checkout without `.env` uses `.env.example`, so `npm start` on a fresh
 * clone has its documented defaults and admin. Under NODE_ENV=test nothing is read: a
 * developer's `.env` must not change what the tests run with. Returns the file read, if any.
 */
export function loadDotEnv(env: NodeJS.ProcessEnv = process.env, dir = '.'): string | undefined {
  const environment = env.NODE_ENV || 'development';
  const candidates =
    environment === 'development' ? ['.env', '.env.example'] : environment === 'production' ? ['.env'] : [];
  const file = candidates.map((candidate) => join(dir, candidate)).find((path) => existsSync(path));
  if (file) {
    process.loadEnvFile(file);
  }
  return file;
}

/** Validates the environment; throws ConfigError naming the first bad setting. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const raw = Object.fromEntries(
    Object.entries(env).filter(([, value]) => value !== undefined && value !== ''),
  );
  const schema = plainToInstance(EnvSchema, raw, { exposeDefaultValues: true });
  const errors = validateSync(schema, { skipMissingProperties: false });
  if (errors.length > 0) {
    const first = errors[0];
    const detail = Object.values(first.constraints ?? {})[0] ?? 'is not valid';
    throw new ConfigError(first.property, detail.replace(new RegExp(`^${first.property} `), ''));
  }
  const production = schema.NODE_ENV === 'production';
  const dataDir = resolve(schema.DATA_DIR);
  if (production && !schema.JWT_SECRET) {
    throw new ConfigError('JWT_SECRET', 'is required when NODE_ENV=production');
  }
  if (production) {
    refusePlaceholderSecrets(raw);
  }
  if (Boolean(schema.ADMIN_USERNAME) !== Boolean(schema.ADMIN_PASSWORD)) {
    throw new ConfigError(
      schema.ADMIN_USERNAME ? 'ADMIN_PASSWORD' : 'ADMIN_USERNAME',
      'must be set together',
    );
  }
  const config: AppConfig = {
    environment: schema.NODE_ENV as AppConfig['environment'],
    production,
    port: schema.PORT,
    dataDir,
    logLevel: schema.LOG_LEVEL,
    publicBaseUrl: schema.PUBLIC_BASE_URL?.replace(/\/+$/, ''),
    servedOverHttps: schema.COOKIE_SECURE || /^https:\/\//i.test(schema.PUBLIC_BASE_URL ?? ''),
    trustProxy: parseTrustProxy(schema.TRUST_PROXY),
    shutdownTimeoutMs: schema.SHUTDOWN_TIMEOUT_SECONDS * 1000,
    databaseTimeoutMs: schema.DATABASE_TIMEOUT_SECONDS * 1000,
    databaseStartupTimeoutMs: schema.DATABASE_STARTUP_TIMEOUT_SECONDS * 1000,
    metricsToken: schema.METRICS_TOKEN,
    database: parseDatabaseUrl(schema.DATABASE_URL ?? `sqlite:${join(dataDir, 'app.sqlite')}`),
    auth: {
      jwtSecret: schema.JWT_SECRET ?? generatedSecret(dataDir),
      jwtExpiresInSeconds: schema.JWT_EXPIRES_IN,
      cookieSecure: schema.COOKIE_SECURE,
      rateLimit: schema.AUTH_RATE_LIMIT,
      adminUsername: schema.ADMIN_USERNAME,
      adminPassword: schema.ADMIN_PASSWORD,
      identityProviders: loadIdentityProviders(schema.IDENTITY_PROVIDERS_FILE, env),
    },
    registry: {
      maxCrateBytes: schema.MAX_CRATE_BYTES,
      maxUncompressedBytes: schema.MAX_CRATE_UNCOMPRESSED_BYTES,
      downloadTimeoutMs: schema.DOWNLOAD_TIMEOUT_SECONDS * 1000,
      allowPrivateNetworkLinks: schema.ALLOW_PRIVATE_NETWORK_LINKS,
      github: { apiUrl: schema.GITHUB_API_URL.replace(/\/+$/, ''), token: schema.GITHUB_TOKEN },
    },
    monitoring: {
      refreshIntervalSeconds: schema.REFRESH_INTERVAL_SECONDS,
      upstreamTimeoutMs: schema.UPSTREAM_TIMEOUT_SECONDS * 1000,
      services: loadTestingServices(schema.TESTING_SERVICES_FILE, env),
      serviceTokens: schema.GITHUB_TOKEN ? { GITHUB_TOKEN: schema.GITHUB_TOKEN } : {},
      rerunIntervalDays: schema.RERUN_INTERVAL_DAYS,
      maxLogBytes: schema.MAX_LOG_BYTES,
      failurePatterns: loadFailurePatterns(schema.FAILURE_PATTERNS_FILE, env),
      staleAfterDays: schema.STALE_AFTER_DAYS,
    },
    notifications: {
      maxBuildAgeDays: schema.MAX_BUILD_AGE_DAYS,
      retentionDays: schema.NOTIFICATION_RETENTION_DAYS,
      smtpUrl: schema.SMTP_URL,
      mailFrom: schema.MAIL_FROM ?? 'workflow-infra-service@localhost',
      githubWebhookSecret: schema.GITHUB_WEBHOOK_SECRET,
      gitlabWebhookSecret: schema.GITLAB_WEBHOOK_SECRET,
      allowPrivateTargets: schema.ALLOW_PRIVATE_NETWORK_LINKS,
    },
    managedRuns: {
      executors: loadExecutors(schema.EXECUTORS_FILE, env),
      timeoutSeconds: schema.RUN_TIMEOUT_SECONDS,
      memoryMib: schema.RUN_MEMORY_MIB,
      maxOutputBytes: schema.RUN_MAX_OUTPUT_BYTES,
      maxProcesses: schema.RUN_MAX_PROCESSES,
      concurrency: schema.RUN_CONCURRENCY,
      claimMs: schema.RUN_CLAIM_SECONDS * 1000,
      runnerUser: schema.RUNNER_USER,
      workDir: resolve(schema.RUNNER_WORK_DIR ?? join(dataDir, 'runs')),
    },
    orchestration: {
      clouds: loadClouds(schema.CLOUDS_FILE, env),
      assignmentFacilityUrl: schema.ASSIGNMENT_FACILITY_URL?.replace(/\/+$/, ''),
      upstreamTimeoutMs: schema.UPSTREAM_TIMEOUT_SECONDS * 1000,
      defaultQuota: {
        maxNodes: schema.QUOTA_MAX_NODES,
        maxVcpus: schema.QUOTA_MAX_VCPUS,
        maxRamMib: schema.QUOTA_MAX_RAM_MIB,
      },
    },
  };
  return deepFreeze(Object.assign(new AppConfig(), config));
}

function parseDatabaseUrl(url: string): DatabaseSettings {
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length);
    return { type: 'sqlite', path: path === ':memory:' || isAbsolute(path) ? path : resolve(path) };
  }
  try {
    const parsed = new URL(url);
    if (!parsed.hostname || parsed.pathname.length < 2) {
      throw new Error('missing host or database name');
    }
  } catch (error) {
    throw new ConfigError('DATABASE_URL', `is not a valid mysql:// URL (${(error as Error).message})`);
  }
  return { type: 'mariadb', url: url.replace(/^mariadb:/, 'mysql:') };
}

const TRUST_PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * Checks TRUST_PROXY here: Express only parses it on the first request, and then fails with a
 * message that does not name the setting.
 */
function parseTrustProxy(value: string): boolean | number | string {
  const trimmed = value.trim().toLowerCase();
  if (trimmed === 'true') {
    return true;
  }
  if (trimmed === 'false' || trimmed === '') {
    return false;
  }
  if (/^\d+$/.test(trimmed)) {
    return Number(trimmed);
  }
  const entries = trimmed.split(',').map((entry) => entry.trim());
  const bad = entries.find((entry) => !isTrustedProxyEntry(entry));
  if (bad !== undefined) {
    throw new ConfigError(
      'TRUST_PROXY',
      `'${bad}' is not loopback, linklocal, uniquelocal, an IP address or a CIDR subnet ` +
        '(the setting is true, false, a hop count or a comma-separated list of those)',
    );
  }
  return entries.join(',');
}

function isTrustedProxyEntry(entry: string): boolean {
  if (TRUST_PROXY_NAMES.has(entry)) {
    return true;
  }
  if (!entry.includes('/')) {
    return ipaddr.isValid(entry);
  }
  try {
    ipaddr.parseCIDR(entry);
    return true;
  } catch {
    return false;
  }
}

/**
 * Outside production a secret is generated once and kept, so tokens survive restarts. The
 * file appears complete or not at all: it is written under a temporary name and linked into
 * place, because two copies starting together could otherwise read it while still empty.
 */
function generatedSecret(dataDir: string): string {
  const file = join(dataDir, 'jwt-secret');
  const temporary = join(dataDir, `.jwt-secret-${process.pid}-${randomBytes(6).toString('hex')}`);
  try {
    mkdirSync(dataDir, { recursive: true });
    if (!existsSync(file)) {
      writeFileSync(temporary, randomBytes(48).toString('base64url'), { mode: 0o600, flag: 'wx' });
      try {
        linkSync(temporary, file);
      } catch (error) {
        // Another copy linked its secret first: use that one.
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
          throw error;
        }
      }
    }
    const secret = readFileSync(file, 'utf8').trim();
    if (!secret) {
      throw new Error('the file is empty (delete it to have a new secret generated)');
    }
    return secret;
  } catch (error) {
    throw new ConfigError(
      'DATA_DIR',
      `cannot keep the generated JWT secret in ${file}: ${(error as Error).message}`,
    );
  } finally {
    rmSync(temporary, { force: true });
  }
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) {
      deepFreeze(inner);
    }
  }
  return value;
}

import { Transform } from 'class-transformer';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  IsUrl,
  Matches,
  Max,
  Min,
  MinLength,
} from 'class-validator';

const toBoolean = ({ value }: { value: unknown }): unknown => {
  if (typeof value !== 'string') {
    return value;
  }
  const lower = value.trim().toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(lower)) {
    return true;
  }
  if (['false', '0', 'no', 'off', ''].includes(lower)) {
    return false;
  }
  return value;
};

/**
 * An integer setting between `min` and `max`. Every way of getting it wrong (not a number, a unit
 * suffix, a fraction, out of range) gives the same message, which states the range and the unit;
 * Number() would also have turned `''`, `0x10` or `1e3` into numbers.
 */
function IntegerSetting(min: number, max: number, unit?: string): PropertyDecorator {
  const message = `must be an integer between ${min} and ${max}${unit ? ` (${unit}, without a unit suffix)` : ''}`;
  return applyDecorators(
    Transform(({ value }: { value: unknown }) =>
      typeof value === 'string' && /^\s*-?\d{1,16}\s*$/.test(value) ? Number(value) : value,
    ),
    IsInt({ message }),
    Min(min, { message }),
    Max(max, { message }),
  );
}

/** Like Nest's: applies property decorators in order (class-validator has no such helper). */
function applyDecorators(...decorators: PropertyDecorator[]): PropertyDecorator {
  return (target, key) => decorators.forEach((decorator) => decorator(target, key));
}

const TIB = 1024 ** 4;

const HTTP_URL = { require_protocol: true, protocols: ['http', 'https'], require_tld: false };

/**
 * The raw environment, as strings turned into typed values. Each property name is the
 * setting's own name so that a validation failure names exactly what the operator set.
 */
export class EnvSchema {
  @IsOptional()
  @IsIn(['development', 'production', 'test'])
  NODE_ENV: string = 'development';

  @IntegerSetting(0, 65535)
  PORT: number = 3000;

  /** Unset: `sqlite:<DATA_DIR>/app.sqlite`, so the database lives with the rest of the data. */
  @IsOptional()
  @IsString()
  @Matches(/^(sqlite:.+|mysql:\/\/.+|mariadb:\/\/.+)$/, {
    message: 'must be sqlite:<path> or mysql://user:pass@host:port/db',
  })
  DATABASE_URL?: string;

  @IsString()
  @MinLength(1)
  DATA_DIR: string = './data';

  @IsOptional()
  @IsString()
  @MinLength(32, { message: 'must be at least 32 characters' })
  JWT_SECRET?: string;

  @IntegerSetting(60, 30 * 24 * 3600, 'seconds')
  JWT_EXPIRES_IN: number = 3600;

  @IsOptional()
  @IsString()
  @Matches(/^[A-Za-z0-9_.@-]{1,256}$/, { message: 'must be 1-256 letters, digits or _.@-' })
  ADMIN_USERNAME?: string;

  @IsOptional()
  @IsString()
  @MinLength(8, { message: 'must be at least 8 characters' })
  ADMIN_PASSWORD?: string;

  @IsOptional()
  @IsUrl(HTTP_URL)
  PUBLIC_BASE_URL?: string;

  @IsOptional()
  @IsString()
  CLOUDS_FILE?: string;

  @IsOptional()
  @IsString()
  TESTING_SERVICES_FILE?: string;

  /** Extra failure patterns (API.md 16), tried before the built-in table. */
  @IsOptional()
  @IsString()
  FAILURE_PATTERNS_FILE?: string;

  @IsOptional()
  @IsString()
  IDENTITY_PROVIDERS_FILE?: string;

  @IsOptional()
  @IsString()
  GITHUB_TOKEN?: string;

  /** GitHub's API for `roc_link`s naming a repository (API.md 7.1); a GitHub Enterprise `…/api/v3` too. */
  @IsUrl(HTTP_URL)
  GITHUB_API_URL: string = 'https://api.github.com';

  @IntegerSetting(0, 7 * 24 * 3600, 'seconds')
  REFRESH_INTERVAL_SECONDS: number = 300;

  @Transform(toBoolean)
  @IsBoolean()
  ALLOW_PRIVATE_NETWORK_LINKS: boolean = false;

  @IntegerSetting(1, TIB, 'bytes')
  MAX_CRATE_BYTES: number = 100 * 1024 * 1024;

  @IntegerSetting(1, TIB, 'bytes')
  MAX_CRATE_UNCOMPRESSED_BYTES: number = 1024 * 1024 * 1024;

  @IntegerSetting(1, 3600, 'seconds')
  DOWNLOAD_TIMEOUT_SECONDS: number = 60;

  @IntegerSetting(1, 600, 'seconds')
  UPSTREAM_TIMEOUT_SECONDS: number = 15;

  @IsOptional()
  @IsUrl(HTTP_URL)
  ASSIGNMENT_FACILITY_URL?: string;

  /** Default per-user quotas of area C (API.md 13); unset: no limit. */
  @IsOptional()
  @IntegerSetting(0, 1_000_000)
  QUOTA_MAX_NODES?: number;

  @IsOptional()
  @IntegerSetting(0, 1_000_000)
  QUOTA_MAX_VCPUS?: number;

  @IsOptional()
  @IntegerSetting(0, 1_000_000_000, 'MiB')
  QUOTA_MAX_RAM_MIB?: number;

  @Transform(toBoolean)
  @IsBoolean()
  COOKIE_SECURE: boolean = false;

  @IntegerSetting(1, 100000)
  AUTH_RATE_LIMIT: number = 10;

  @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  LOG_LEVEL: string = 'info';

  /** Express `trust proxy`: false, true, a hop count, or a comma-separated list of addresses/subnets. */
  @IsString()
  TRUST_PROXY: string = 'false';

  @IsOptional()
  @IsString()
  @MinLength(16, { message: 'must be at least 16 characters' })
  METRICS_TOKEN?: string;

  @IntegerSetting(1, 300, 'seconds')
  SHUTDOWN_TIMEOUT_SECONDS: number = 25;

  /** Longest wait for one database call (a connection, a pooled connection, a query) before 503. */
  @IntegerSetting(1, 300, 'seconds')
  DATABASE_TIMEOUT_SECONDS: number = 10;

  /** How long start-up keeps trying to reach a MariaDB/MySQL server that does not answer. */
  @IntegerSetting(1, 3600, 'seconds')
  DATABASE_STARTUP_TIMEOUT_SECONDS: number = 30;

  /** The default interval of periodic re-runs (API.md 11), in days; unset: no re-runs but a workflow's own. */
  @IsOptional()
  @IntegerSetting(1, 365, 'days')
  RERUN_INTERVAL_DAYS?: number;

  /** The tail of a build log served (API.md 11). */
  @IntegerSetting(1024, 1024 ** 3, 'bytes')
  MAX_LOG_BYTES: number = 1024 * 1024;

  /** TESTS_STOPPED after this many days without a finished build (API.md 6.2). */
  @IntegerSetting(1, 3650, 'days')
  MAX_BUILD_AGE_DAYS: number = 30;

  /** A status whose newest build is older than this is stale; TRS `verified` looks no further back (API.md 16). */
  @IntegerSetting(1, 3650, 'days')
  STALE_AFTER_DAYS: number = 30;

  /** Notifications are kept this long (API.md 6.3). */
  @IntegerSetting(1, 3650, 'days')
  NOTIFICATION_RETENTION_DAYS: number = 90;

  /** `smtp://user:pass@host:port` or `smtps://…`; e-mail channels are refused while unset. */
  @IsOptional()
  @Matches(/^smtps?:\/\/[^\s/]+/, { message: 'must be an smtp:// or smtps:// URL' })
  SMTP_URL?: string;

  @IsOptional()
  @IsString()
  MAIL_FROM?: string;

  /** Executors of managed test instances (API.md 17); unset: `local` only. */
  @IsOptional()
  @IsString()
  EXECUTORS_FILE?: string;

  /** Limits of one managed run (API.md 17): wall time, memory (address space), output. */
  @IntegerSetting(1, 7 * 24 * 3600, 'seconds')
  RUN_TIMEOUT_SECONDS: number = 3600;

  @IntegerSetting(64, 1024 * 1024, 'MiB')
  RUN_MEMORY_MIB: number = 4096;

  @IntegerSetting(1024, TIB, 'bytes')
  RUN_MAX_OUTPUT_BYTES: number = 100 * 1024 * 1024;

  /** Runs one runner process works on at a time. */
  @IntegerSetting(1, 256)
  RUN_CONCURRENCY: number = 1;

  /**
   * How long a runner's claim on a run lasts unrenewed (it renews it every sixth of that): a runner
   * that died leaves its run to another after it, and a cancel reaches a run within a sixth of it.
   */
  @IntegerSetting(2, 3600, 'seconds')
  RUN_CLAIM_SECONDS: number = 60;

  /** Processes (threads) one run may have at a time (RLIMIT_NPROC of its user). */
  @IntegerSetting(8, 100_000)
  RUN_MAX_PROCESSES: number = 256;

  /**
   * The unprivileged user the runner runs workflows as (a name or a uid); unset: the runner's own
   * user, allowed only when that is not root.
   */
  @IsOptional()
  @IsString()
  @Matches(/^[a-z_][a-z0-9_-]{0,31}$|^\d{1,10}$/, { message: 'must be a user name or a numeric uid' })
  RUNNER_USER?: string;

  /** Where a runner makes each run's working folder; unset: `<DATA_DIR>/runs`. */
  @IsOptional()
  @IsString()
  RUNNER_WORK_DIR?: string;

  /** The secret of incoming GitHub webhooks; they are refused (401) while unset. */
  @IsOptional()
  @IsString()
  @MinLength(8, { message: 'must be at least 8 characters' })
  GITHUB_WEBHOOK_SECRET?: string;

  /** The secret token of incoming GitLab webhooks (`X-Gitlab-Token`); they are refused (401) while unset. */
  @IsOptional()
  @IsString()
  @MinLength(8, { message: 'must be at least 8 characters' })
  GITLAB_WEBHOOK_SECRET?: string;
}

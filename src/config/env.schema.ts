import { Transform, Type } from 'class-transformer';
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

const HTTP_URL = { require_protocol: true, protocols: ['http', 'https'], require_tld: false };

/**
 * The raw environment, as strings turned into typed values. Each property name is the
 * setting's own name so that a validation failure names exactly what the operator set.
 */
export class EnvSchema {
  @IsOptional()
  @IsIn(['development', 'production', 'test'])
  NODE_ENV: string = 'development';

  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(65535)
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

  @Type(() => Number)
  @IsInt()
  @Min(60)
  @Max(30 * 24 * 3600)
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

  @IsOptional()
  @IsString()
  GITHUB_TOKEN?: string;

  @Type(() => Number)
  @IsInt()
  @Min(0)
  REFRESH_INTERVAL_SECONDS: number = 300;

  @Transform(toBoolean)
  @IsBoolean()
  ALLOW_PRIVATE_NETWORK_LINKS: boolean = false;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  MAX_CRATE_BYTES: number = 100 * 1024 * 1024;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  MAX_CRATE_UNCOMPRESSED_BYTES: number = 1024 * 1024 * 1024;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(3600)
  DOWNLOAD_TIMEOUT_SECONDS: number = 60;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(600)
  UPSTREAM_TIMEOUT_SECONDS: number = 15;

  @IsOptional()
  @IsUrl(HTTP_URL)
  ASSIGNMENT_FACILITY_URL?: string;

  @Transform(toBoolean)
  @IsBoolean()
  COOKIE_SECURE: boolean = false;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100000)
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

  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(300)
  SHUTDOWN_TIMEOUT_SECONDS: number = 25;

  /** Longest wait for one database call (a connection, a pooled connection, a query) before 503. */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(300)
  DATABASE_TIMEOUT_SECONDS: number = 10;
}

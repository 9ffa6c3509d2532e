import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsISO8601, IsOptional, Matches, ValidateBy } from 'class-validator';
import { ON_EXPIRY } from '../entities/vm-lease.entity.js';
import { MAX_LEASE_SECONDS, MIN_LEASE_SECONDS } from '../lease-rules.js';

interface LeaseFields {
  ttl_seconds?: unknown;
  expires_at?: unknown;
}

const TTL_RANGE = `ttl_seconds must be an integer from ${MIN_LEASE_SECONDS} to ${MAX_LEASE_SECONDS}`;
const TIME_ZONED = 'expires_at must be an ISO 8601 date and time with a time zone';

function ttlProblem(object: LeaseFields, required: boolean): string | undefined {
  const { ttl_seconds: ttl, expires_at: at } = object;
  const given = Number(ttl !== undefined) + Number(at !== undefined);
  if (required ? given !== 1 : given > 1) {
    return required
      ? 'exactly one of ttl_seconds and expires_at is required'
      : 'give at most one of ttl_seconds and expires_at';
  }
  if (
    ttl !== undefined &&
    !(
      typeof ttl === 'number' &&
      Number.isInteger(ttl) &&
      ttl >= MIN_LEASE_SECONDS &&
      ttl <= MAX_LEASE_SECONDS
    )
  ) {
    return TTL_RANGE;
  }
  return undefined;
}

/**
 * `ttl_seconds`, which also checks the pair: at most one (`required`: exactly one) of `ttl_seconds`
 * and `expires_at`. Not optional in class-validator's sense, so the pair is checked when it is absent.
 */
export function LeaseTtl(required: boolean): PropertyDecorator {
  return applyDecorators(
    ValidateBy({
      name: 'leaseTtl',
      validator: {
        validate: (_value: unknown, args): boolean =>
          ttlProblem(args?.object as LeaseFields, required) === undefined,
        defaultMessage: (args): string => ttlProblem(args?.object as LeaseFields, required) ?? TTL_RANGE,
      },
    }),
    ApiPropertyOptional({
      type: 'integer',
      minimum: MIN_LEASE_SECONDS,
      maximum: MAX_LEASE_SECONDS,
      example: 3600,
      description: `The lease ends this many seconds from now (${required ? 'exactly' : 'at most'} one of ttl_seconds and expires_at)`,
    }),
  );
}

/** `expires_at`: ISO 8601 with a time zone; later than now and at most a year ahead (checked by the service). */
export function LeaseExpiresAt(): PropertyDecorator {
  return applyDecorators(
    IsOptional(),
    IsISO8601({ strict: true }, { message: TIME_ZONED }),
    Matches(/T.*(Z|[+-]\d\d:?\d\d)$/, { message: TIME_ZONED }),
    ApiPropertyOptional({
      type: String,
      format: 'date-time',
      example: '2026-12-01T18:00:00Z',
      description: 'The lease ends at this time: later than now, at most a year ahead, with a time zone',
    }),
  );
}

/** `on_expiry`: what happens when the lease ends. */
export function OnExpiryMember(): PropertyDecorator {
  return applyDecorators(
    IsOptional(),
    IsIn(ON_EXPIRY, { message: `on_expiry must be one of ${ON_EXPIRY.join(', ')}` }),
    ApiPropertyOptional({
      enum: ON_EXPIRY,
      default: 'release',
      example: 'poweroff',
      description:
        'What happens when the lease ends (only with ttl_seconds or expires_at): release (the assignment ends), ' +
        'poweroff (the node is powered off and the assignment ends), destroy (the node is destroyed, which ends ' +
        'the assignment)',
    }),
  );
}

import { applyDecorators, ValidationPipe } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import {
  IsBoolean,
  IsInt,
  IsOptional,
  IsString,
  IsUrl,
  IsUUID,
  Length,
  Max,
  Min,
  type ValidationError,
} from 'class-validator';
import { DomainError, type FieldError } from './errors/domain-error.js';

/**
 * The one validation pipe of every area: unknown members are dropped (clients of the
 * original send extras), types are never coerced (a number is not a string), and the
 * failures become a DomainError each area's filter renders in its own shape.
 */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    transform: true,
    forbidUnknownValues: false,
    transformOptions: { enableImplicitConversion: false },
    exceptionFactory: (errors) => {
      const fields = flatten(errors);
      return new DomainError(
        'invalid_input',
        fields.map((f) => f.message).join('; ') || 'Invalid request',
        fields,
      );
    },
  });
}

function flatten(errors: ValidationError[], parent = ''): FieldError[] {
  return errors.flatMap((error) => {
    const field = parent ? `${parent}.${error.property}` : error.property;
    const own = Object.values(error.constraints ?? {}).map((message) => ({ field, message }));
    return [...own.slice(0, 1), ...flatten(error.children ?? [], field)];
  });
}

/** A required string of `min`..`max` characters. */
export function RequiredText(
  min: number,
  max: number,
  example: string,
  description?: string,
): PropertyDecorator {
  return applyDecorators(
    IsString(),
    Length(min, max),
    ApiProperty({ type: String, minLength: min, maxLength: max, example, description }),
  );
}

/** An optional string of `min`..`max` characters. */
export function OptionalText(
  min: number,
  max: number,
  example: string,
  description?: string,
): PropertyDecorator {
  return applyDecorators(
    IsOptional(),
    IsString(),
    Length(min, max),
    ApiPropertyOptional({ type: String, minLength: min, maxLength: max, example, description }),
  );
}

/** An http(s) URL (hosts without a TLD such as `localhost` are accepted; the address guard decides reachability). */
export function IsHttpUrl(example: string, description?: string): PropertyDecorator {
  return applyDecorators(
    IsString(),
    IsUrl(
      { require_protocol: true, protocols: ['http', 'https'], require_tld: false, require_host: true },
      { message: ({ property }) => `${property} must be an http or https URL` },
    ),
    ApiProperty({ type: String, format: 'uri', example, description }),
  );
}

/**
 * Any 8-4-4-4-12 hexadecimal string, whatever its version and variant bits: registries mint
 * their own (WorkflowHub's are version 0, `86da0a30-d2cd-013a-a07d-000c29a94011`), and a
 * workflow keeps the uuid its registry gave it.
 */
export function IsAnyUuid(): PropertyDecorator {
  return IsUUID('loose', { message: ({ property }) => `${property} must be a UUID` });
}

/**
 * A path parameter holding a UUID (of any version, as {@link IsAnyUuid}); `example` names a thing
 * of the document's examples (EXAMPLE).
 */
export function IsUuidParam(description: string, example: string): PropertyDecorator {
  return applyDecorators(IsAnyUuid(), ApiProperty({ type: String, format: 'uuid', description, example }));
}

/** A query flag: `true`/`false` (also `1`/`0`), anything else stays as sent and fails validation. */
export function ToBoolean(): PropertyDecorator {
  return Transform(({ value }: { value: unknown }) => {
    if (value === 'true' || value === '1' || value === true) {
      return true;
    }
    if (value === 'false' || value === '0' || value === false) {
      return false;
    }
    return value;
  });
}

/** A query integer: digits become a number, anything else stays as sent and fails validation. */
export function ToInteger(): PropertyDecorator {
  return Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value,
  );
}

/** An optional query flag (`true`/`false`, `1`/`0`); anything else is a 400 naming the parameter. */
export function OptionalQueryFlag(description: string, defaultValue: boolean): PropertyDecorator {
  return applyDecorators(
    IsOptional(),
    ToBoolean(),
    IsBoolean({ message: ({ property }) => `${property} must be true or false` }),
    ApiPropertyOptional({ type: Boolean, default: defaultValue, description }),
  );
}

/** An optional query integer within `min`..`max`; anything else is a 400 naming the parameter and the range. */
export function OptionalQueryInt(min: number, max: number, description: string): PropertyDecorator {
  const message = ({ property }: { property: string }): string =>
    `${property} must be an integer from ${min} to ${max}`;
  return applyDecorators(
    IsOptional(),
    ToInteger(),
    IsInt({ message }),
    Min(min, { message }),
    Max(max, { message }),
    ApiPropertyOptional({ type: Number, minimum: min, maximum: max, description }),
  );
}

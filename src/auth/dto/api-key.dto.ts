import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsISO8601, IsOptional, Matches, Min } from 'class-validator';
import { RequiredText } from '../../common/validation.js';
import type { ApiKeyEntity } from '../entities/api-key.entity.js';
import { EXAMPLE } from '../../common/openapi-examples.js';

const EXPIRES_AT = 'expires_at must be an ISO 8601 date and time with its zone (Z or ±hh:mm)';

export class CreateApiKeyDto {
  @RequiredText(1, 128, 'ci-nightly', 'What the key is for, to recognise it in the list')
  name!: string;

  @IsOptional()
  @IsISO8601({ strict: true, strictSeparator: true }, { message: EXPIRES_AT })
  // A time without its zone would be read in the server's zone: ambiguous, so refused.
  @Matches(/T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i, { message: EXPIRES_AT })
  @ApiPropertyOptional({
    type: String,
    format: 'date-time',
    example: '2027-06-30T00:00:00Z',
    description:
      'When the key stops working (in the future; whole seconds). Without it the key works until revoked.',
  })
  expires_at?: string;
}

export class ApiKeyIdParam {
  @Type(() => Number)
  @IsInt({ message: 'id must be a positive integer' })
  @Min(1, { message: 'id must be a positive integer' })
  @ApiProperty({ example: EXAMPLE.apiKeyId })
  id!: number;
}

export class ApiKeyDto {
  @ApiProperty({ example: 3 })
  id!: number;

  @ApiProperty({ example: 'ci-nightly' })
  name!: string;

  @ApiProperty({
    example: 'wfk_Q2xpZW50',
    description: 'The first 12 characters of the key, to recognise it; the rest is never shown again',
  })
  prefix!: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-24T00:15:00.000Z' })
  created!: string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, example: '2027-06-30T00:00:00.000Z' })
  expires_at!: string | null;
}

export class CreatedApiKeyDto extends ApiKeyDto {
  @ApiProperty({
    example: 'wfk_Q2xpZW50c2VjcmV0LXNob3duLW9uY2Utb25seS14eXo',
    description:
      'The key, shown this once: send it as `Authorization: ApiKey <key>` or `X-API-Key: <key>`. Only a hash is kept.',
  })
  key!: string;
}

export class ApiKeyListDto {
  @ApiProperty({ type: ApiKeyDto, isArray: true })
  items!: ApiKeyDto[];
}

export function toApiKeyResponse(row: ApiKeyEntity): ApiKeyDto {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    created: row.createdAt.toISOString(),
    expires_at: row.expiresAt === null ? null : row.expiresAt.toISOString(),
  };
}

import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMinSize, IsArray, IsIn, IsInt, IsOptional, IsString, Length, Min } from 'class-validator';
import {
  CHANNEL_TYPES,
  MAX_SECRET_LENGTH,
  MAX_TARGET_LENGTH,
  type ChannelEntity,
  type ChannelType,
} from '../entities/channel.entity.js';
import { EVENT_NAMES, type EventName } from '../events.js';
import { epochSeconds } from '../notification-data.js';
import { EXAMPLE } from '../../common/openapi-examples.js';

export class CreateChannelDto {
  @IsIn(CHANNEL_TYPES, { message: `type must be one of ${CHANNEL_TYPES.join(', ')}` })
  @ApiProperty({ enum: CHANNEL_TYPES, example: 'webhook' })
  type!: ChannelType;

  @IsString()
  @Length(1, MAX_TARGET_LENGTH)
  @ApiProperty({
    maxLength: MAX_TARGET_LENGTH,
    description: 'An http(s) URL (webhook, slack) or an e-mail address (email)',
    example: 'https://hooks.example.org/ci',
  })
  target!: string;

  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @ApiPropertyOptional({
    enum: EVENT_NAMES,
    isArray: true,
    default: ['ALL'],
    example: ['BUILD_FAILED', 'BUILD_RECOVERED'],
  })
  events?: unknown[];

  @IsOptional()
  @IsString()
  @Length(8, MAX_SECRET_LENGTH)
  @ApiPropertyOptional({
    minLength: 8,
    maxLength: MAX_SECRET_LENGTH,
    writeOnly: true,
    description: 'webhook only: the key of X-Signature-256 (HMAC-SHA256 of the body); never shown again',
    example: 'a-long-random-secret',
  })
  secret?: string;
}

export class ChannelIdParam {
  @Type(() => Number)
  @IsInt({ message: 'id must be an integer' })
  @Min(1, { message: 'id must be an integer' })
  @ApiProperty({ type: Number, description: 'The channel id', example: EXAMPLE.channelId })
  id!: number;
}

export class ChannelDto {
  @ApiProperty({ example: 3 })
  id!: number;

  @ApiProperty({ enum: CHANNEL_TYPES, example: 'webhook' })
  type!: ChannelType;

  @ApiProperty({ example: 'https://hooks.example.org/ci' })
  target!: string;

  @ApiProperty({ enum: EVENT_NAMES, isArray: true, example: ['ALL'] })
  events!: EventName[];

  @ApiProperty({
    description: 'Whether the channel has a signing secret (the secret itself is never shown)',
    example: true,
  })
  has_secret!: boolean;

  @ApiProperty({ description: 'Seconds since the epoch, as a decimal string', example: '1700000000' })
  created!: string;
}

export class ChannelListDto {
  @ApiProperty({ type: [ChannelDto] })
  items!: ChannelDto[];
}

export class DeliveryAttemptDto {
  @ApiProperty({ description: 'When the attempt was made, ISO 8601', example: '2026-11-24T00:00:00.000Z' })
  time!: string;

  @ApiProperty({
    format: 'uuid',
    description: 'The delivery (X-Delivery)',
    example: '9a1f6f62-7d1a-4d7e-9c8b-0e0d2f1c3b4a',
  })
  delivery!: string;

  @ApiProperty({
    enum: ['sent', 'error', 'failed'],
    description: 'failed: the last attempt, after 24 h of errors',
    example: 'error',
  })
  status!: string;

  @ApiProperty({
    type: Number,
    nullable: true,
    description: "The receiver's HTTP status or SMTP reply code",
    example: 503,
  })
  status_code!: number | null;

  @ApiProperty({ type: String, nullable: true, example: 'the receiver answered 503' })
  error!: string | null;
}

export class DeliveryLogDto {
  @ApiProperty({ type: [DeliveryAttemptDto], description: 'The last 100 attempts, newest first' })
  items!: DeliveryAttemptDto[];
}

export function toChannelResponse(row: ChannelEntity): ChannelDto {
  return {
    id: row.id,
    type: row.type,
    target: row.target,
    events: row.events,
    has_secret: row.secret !== null,
    created: epochSeconds(row.createdAt),
  };
}

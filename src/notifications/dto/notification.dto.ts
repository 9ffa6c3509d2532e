import type { SchemaObject } from '@nestjs/swagger';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsBoolean, ValidateNested } from 'class-validator';
import { IsAnyUuid } from '../../common/validation.js';
import { EVENT_NAMES, type RaisedEvent } from '../events.js';
import { EXAMPLE } from '../../common/openapi-examples.js';

const UUID_EXAMPLE = EXAMPLE.notificationUuid;
/** Uuids one request may name. */
export const MAX_ITEMS = 1000;

export class NotificationWorkflowDto {
  @ApiProperty({ format: 'uuid', example: '1d8a9c84-8b1c-4bfa-a9c5-52b6b1b9cd67' })
  uuid!: string;

  @ApiProperty({ example: 'sort-and-change-case' })
  name!: string;

  @ApiProperty({ example: '1.0' })
  version!: string;
}

export class NotificationInstanceDto {
  @ApiProperty({ format: 'uuid', example: '5b2d2f0e-1a51-4a0a-8e0c-1f1d3c0d9a21' })
  uuid!: string;

  @ApiProperty({ type: String, nullable: true, example: 'test1_1' })
  name!: string | null;
}

export class NotificationBuildLinksDto {
  @ApiProperty({ example: 'https://github.com/octo/repo/actions/runs/8765' })
  origin!: string;
}

export class NotificationBuildDto {
  @ApiProperty({ example: '8765_1' })
  build_id!: string;

  @ApiProperty({ example: 'failed' })
  status!: string;

  @ApiProperty({ description: "The build's start, seconds since the epoch", example: '1700000000' })
  timestamp!: string;

  @ApiProperty({ type: NotificationBuildLinksDto })
  links!: NotificationBuildLinksDto;
}

export class NotificationRepositoryDto {
  @ApiProperty({ example: 'nf-core/demo' })
  full_name!: string;

  @ApiProperty({ format: 'uri', example: 'https://github.com/nf-core/demo' })
  url!: string;
}

export class NotificationRefDto {
  @ApiProperty({ enum: ['tag', 'branch'], example: 'tag' })
  type!: 'tag' | 'branch';

  @ApiProperty({ example: 'v2.0.0' })
  name!: string;

  @ApiProperty({ type: String, nullable: true, example: '4f1c2b0e9d8a7c6b5a4f3e2d1c0b9a8f7e6d5c4b' })
  commit!: string | null;
}

export class NotificationDataDto {
  @ApiProperty({ type: NotificationWorkflowDto })
  workflow!: NotificationWorkflowDto;

  @ApiProperty({ type: NotificationInstanceDto, nullable: true, description: 'null for FOLLOW_FAILED' })
  instance!: NotificationInstanceDto | null;

  @ApiProperty({
    type: NotificationBuildDto,
    nullable: true,
    description:
      'null for TESTS_STOPPED and SCHEDULE_DISABLED of an instance that has no finished build, and for FOLLOW_FAILED',
  })
  build!: NotificationBuildDto | null;

  @ApiPropertyOptional({
    type: NotificationRepositoryDto,
    description: 'FOLLOW_FAILED: the followed GitHub repository',
  })
  repository?: NotificationRepositoryDto;

  @ApiPropertyOptional({
    type: NotificationRefDto,
    nullable: true,
    description:
      'FOLLOW_FAILED: the tag or branch whose version could not be registered; null when the repository is gone',
  })
  ref?: NotificationRefDto | null;

  @ApiPropertyOptional({
    description: 'FOLLOW_FAILED: why, as the registration was refused or GitHub answered',
    example:
      'the GitHub repository nf-core/demo has no ro-crate-metadata.json at its root (ref v2.0.0, commit 4f1c2b0)',
  })
  error?: string;
}

export class NotificationDto {
  @ApiProperty({ format: 'uuid', example: UUID_EXAMPLE })
  uuid!: string;

  @ApiProperty({ description: 'Seconds since the epoch, as a decimal string', example: '1700000000' })
  created!: string;

  @ApiProperty({ type: String, nullable: true, description: 'When it was marked read', example: null })
  read!: string | null;

  @ApiProperty({ type: String, nullable: true, description: 'When it was e-mailed', example: null })
  emailed!: string | null;

  @ApiProperty({ enum: EVENT_NAMES.filter((name) => name !== 'ALL'), example: 'BUILD_FAILED' })
  event!: RaisedEvent;

  @ApiProperty({ type: NotificationDataDto })
  data!: NotificationDataDto;
}

export class NotificationListDto {
  @ApiProperty({ type: [NotificationDto] })
  items!: NotificationDto[];
}

export class NotificationReadItem {
  @IsAnyUuid()
  @ApiProperty({ format: 'uuid', example: UUID_EXAMPLE })
  uuid!: string;

  @IsBoolean({ message: 'read must be true or false' })
  @ApiProperty({ type: Boolean, example: true, description: 'true marks it read, false unread again' })
  read!: boolean;
}

export class MarkNotificationsDto {
  @IsArray()
  @ArrayMaxSize(MAX_ITEMS)
  @ValidateNested({ each: true })
  @Type(() => NotificationReadItem)
  @ApiProperty({ type: [NotificationReadItem] })
  items!: NotificationReadItem[];
}

export class NotificationUuidParam {
  @IsAnyUuid()
  @ApiProperty({ format: 'uuid', description: 'The notification uuid', example: EXAMPLE.notificationUuid })
  uuid!: string;
}

/** The body of `user-notifications-patch`: a JSON array of notification uuids. */
export const DELETE_NOTIFICATIONS_BODY: SchemaObject = {
  type: 'array',
  items: { type: 'string', format: 'uuid' },
  maxItems: MAX_ITEMS,
  example: [UUID_EXAMPLE],
};

import type { SchemaObject } from '@nestjs/swagger';
import { ApiProperty } from '@nestjs/swagger';
import { EVENT_NAMES, type EventName } from '../events.js';
import type { SubscriptionEntity } from '../entities/subscription.entity.js';
import { epochSeconds } from '../notification-data.js';

const UUID_EXAMPLE = '1d8a9c84-8b1c-4bfa-a9c5-52b6b1b9cd67';

export class SubscriberDto {
  @ApiProperty({ example: 7 })
  id!: number;

  @ApiProperty({ example: 'alice' })
  username!: string;
}

export class SubscribedResourceDto {
  @ApiProperty({ format: 'uuid', example: UUID_EXAMPLE })
  uuid!: string;

  @ApiProperty({ enum: ['workflow'], example: 'workflow' })
  type!: 'workflow';
}

/** A subscription as LifeMonitor shows it. */
export class SubscriptionDto {
  @ApiProperty({ type: SubscriberDto })
  user!: SubscriberDto;

  @ApiProperty({ type: SubscribedResourceDto })
  resource!: SubscribedResourceDto;

  @ApiProperty({ description: 'Seconds since the epoch, as a decimal string', example: '1700000000' })
  created!: string;

  @ApiProperty({ description: 'Seconds since the epoch, as a decimal string', example: '1700000000' })
  modified!: string;

  @ApiProperty({ enum: EVENT_NAMES, isArray: true, example: ['ALL'] })
  events!: EventName[];
}

export class SubscriptionListDto {
  @ApiProperty({ type: [SubscriptionDto] })
  items!: SubscriptionDto[];
}

export function toSubscriptionResponse(
  row: SubscriptionEntity,
  user: { id: number; username: string },
): SubscriptionDto {
  return {
    user: { id: user.id, username: user.username },
    resource: { uuid: row.workflowUuid, type: 'workflow' },
    created: epochSeconds(row.createdAt),
    modified: epochSeconds(row.modifiedAt),
    events: row.events,
  };
}

/** The body of `user-workflow-subscribe-events`: a JSON array of event names. */
export const SUBSCRIBE_EVENTS_BODY: SchemaObject = {
  type: 'array',
  items: { type: 'string', enum: [...EVENT_NAMES] },
  minItems: 1,
  example: ['BUILD_FAILED', 'BUILD_RECOVERED'],
};

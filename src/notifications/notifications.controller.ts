import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Put } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBody,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type { AuthUser } from '../auth/auth-user.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { RequireScope } from '../auth/scopes.js';
import { RegistryReads } from '../workflows/index.js';
import { parseUuids } from './channel-rules.js';
import {
  DELETE_NOTIFICATIONS_BODY,
  MarkNotificationsDto,
  MAX_ITEMS,
  NotificationListDto,
  NotificationUuidParam,
} from './dto/notification.dto.js';
import { toNotificationView } from './notification-data.js';
import { NotificationsService } from './notifications.service.js';
import { TAGS } from '../common/api-tags.js';
import { invalidMemberExample } from '../common/dto/error-bodies.dto.js';
import { ProblemDto } from '../common/dto/error-bodies.dto.js';

/** The caller's notifications (API.md 6.3, LifeMonitor's operations). */
@RegistryReads()
@ApiTags(TAGS.subscriptions)
@Controller('users/current/notifications')
export class NotificationsController {
  constructor(private readonly notifications: NotificationsService) {}

  @Get()
  @RequireScope('user.profile')
  @ApiOperation({
    operationId: 'user-notifications-get',
    summary: "The caller's notifications, newest first",
    description:
      'One per event of a subscribed workflow (`BUILD_FAILED`, `BUILD_RECOVERED`, `TESTS_STOPPED`, ' +
      '`SCHEDULE_DISABLED`), kept for ' +
      '`NOTIFICATION_RETENTION_DAYS`. Needs a token.',
  })
  @ApiOkResponse({ type: NotificationListDto, description: "The caller's notifications, newest first" })
  async list(@CurrentUser() user: AuthUser): Promise<NotificationListDto> {
    return { items: (await this.notifications.list(user)).map(toNotificationView) };
  }

  @Put()
  @HttpCode(204)
  @ApiOperation({
    operationId: 'user-notifications-put',
    summary: 'Mark notifications read (or unread)',
    description: `\`{"items": [{"uuid", "read": true}]}\`, at most ${MAX_ITEMS} items; uuids that are not the caller's change nothing. Needs a token.`,
  })
  @ApiNoContentResponse({ description: 'Marked' })
  @ApiBadRequestResponse({
    type: ProblemDto,
    description: 'Not `{"items": [...]}`, more than 1000 items, or an item without a uuid',
    example: invalidMemberExample('items.0.uuid', 'items.0.uuid must be a UUID'),
  })
  async mark(@Body() body: MarkNotificationsDto, @CurrentUser() user: AuthUser): Promise<void> {
    await this.notifications.mark(user, body.items);
  }

  @Patch()
  @HttpCode(204)
  @ApiOperation({
    operationId: 'user-notifications-patch',
    summary: 'Delete notifications',
    description: `The body is a JSON array of notification uuids (at most ${MAX_ITEMS}); uuids that are not the caller's are skipped. Needs a token.`,
  })
  @ApiBody({ schema: DELETE_NOTIFICATIONS_BODY })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiBadRequestResponse({
    type: ProblemDto,
    description: 'Not a JSON array of uuids, or more than 1000 of them',
    example: invalidMemberExample('uuids', 'uuids must be a JSON array of notification uuids'),
  })
  async deleteMany(@Body() body: unknown, @CurrentUser() user: AuthUser): Promise<void> {
    await this.notifications.deleteMany(user, parseUuids(body, 'uuids', MAX_ITEMS));
  }

  @Delete(':uuid')
  @HttpCode(204)
  @ApiOperation({
    operationId: 'user-notifications-delete',
    summary: 'Delete one notification',
    description: 'Needs a token.',
  })
  @ApiNoContentResponse({ description: 'Deleted' })
  async deleteOne(@Param() { uuid }: NotificationUuidParam, @CurrentUser() user: AuthUser): Promise<void> {
    await this.notifications.deleteOne(user, uuid);
  }
}

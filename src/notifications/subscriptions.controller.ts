import { Body, Controller, Get, HttpCode, Param, Post, Put, Res } from '@nestjs/common';
import {
  ApiBody,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type { Response } from 'express';
import type { AuthUser } from '../auth/auth-user.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { RequireScope } from '../auth/scopes.js';
import { RegistryReads, WorkflowUuidParam } from '../workflows/index.js';
import { parseEvents } from './channel-rules.js';
import {
  SUBSCRIBE_EVENTS_BODY,
  SubscriptionDto,
  SubscriptionListDto,
  toSubscriptionResponse,
} from './dto/subscription.dto.js';
import { SubscriptionsService } from './subscriptions.service.js';
import { TAGS } from '../common/api-tags.js';

/** Subscriptions to a workflow's events (API.md 6.1, LifeMonitor's operations). */
@RegistryReads()
@ApiTags(TAGS.subscriptions)
@Controller()
export class SubscriptionsController {
  constructor(private readonly subscriptions: SubscriptionsService) {}

  @Post('workflows/:wf_uuid/subscribe')
  @ApiOperation({
    operationId: 'user-workflow-subscribe',
    summary: "Subscribe the caller to all of a workflow's events",
    description:
      'Subscribes the caller to `["ALL"]` (an existing subscription is set to `ALL`). Any workflow the caller can see. ' +
      'Needs a token.',
  })
  @ApiCreatedResponse({ type: SubscriptionDto, description: 'The subscription' })
  async subscribe(
    @Param() { wf_uuid }: WorkflowUuidParam,
    @CurrentUser() user: AuthUser,
  ): Promise<SubscriptionDto> {
    const { subscription } = await this.subscriptions.subscribe(user, wf_uuid, ['ALL']);
    return toSubscriptionResponse(subscription, user);
  }

  @Put('workflows/:wf_uuid/subscribe')
  @HttpCode(201)
  @ApiOperation({
    operationId: 'user-workflow-subscribe-events',
    summary: 'Set the events the caller is subscribed to for a workflow',
    description:
      'The body is a JSON array of event names: `ALL`, `BUILD_FAILED`, `BUILD_RECOVERED`, `TESTS_STOPPED`, ' +
      '`SCHEDULE_DISABLED`. ' +
      '201 with the subscription when it is new, 204 when an existing one was updated. Needs a token.',
  })
  @ApiBody({ schema: SUBSCRIBE_EVENTS_BODY })
  @ApiCreatedResponse({ type: SubscriptionDto, description: 'A new subscription' })
  @ApiNoContentResponse({ description: 'The existing subscription now has these events' })
  async setEvents(
    @Param() { wf_uuid }: WorkflowUuidParam,
    @Body() body: unknown,
    @CurrentUser() user: AuthUser,
    @Res({ passthrough: true }) response: Response,
  ): Promise<SubscriptionDto | undefined> {
    const { created, subscription } = await this.subscriptions.subscribe(
      user,
      wf_uuid,
      parseEvents(body, 'events'),
    );
    if (!created) {
      response.status(204);
      return undefined;
    }
    return toSubscriptionResponse(subscription, user);
  }

  @Post('workflows/:wf_uuid/unsubscribe')
  @HttpCode(204)
  @ApiOperation({
    operationId: 'user-workflow-unsubscribe',
    summary: "Unsubscribe the caller from a workflow's events",
    description: 'Succeeds also when the caller was not subscribed. Needs a token.',
  })
  @ApiNoContentResponse({ description: 'Not subscribed (any more)' })
  async unsubscribe(@Param() { wf_uuid }: WorkflowUuidParam, @CurrentUser() user: AuthUser): Promise<void> {
    await this.subscriptions.unsubscribe(user, wf_uuid);
  }

  @Get('users/current/subscriptions')
  @RequireScope('user.workflow.read')
  @ApiOperation({
    operationId: 'user-subscriptions-get',
    summary: "The caller's subscriptions",
    description: 'Oldest first. Needs a token.',
  })
  @ApiOkResponse({ type: SubscriptionListDto, description: "The caller's subscriptions" })
  async list(@CurrentUser() user: AuthUser): Promise<SubscriptionListDto> {
    const rows = await this.subscriptions.list(user);
    return { items: rows.map((row) => toSubscriptionResponse(row, user)) };
  }
}

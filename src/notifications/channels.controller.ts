import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { applyDecorators } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type { AuthUser } from '../auth/auth-user.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { RegistryReads } from '../workflows/index.js';
import { ChannelsService } from './channels.service.js';
import {
  ChannelDto,
  ChannelIdParam,
  ChannelListDto,
  CreateChannelDto,
  DeliveryLogDto,
  toChannelResponse,
} from './dto/channel.dto.js';
import { TAGS } from '../common/api-tags.js';
import { invalidMemberExample, problemExample } from '../common/dto/error-bodies.dto.js';
import { EXAMPLE } from '../common/openapi-examples.js';
import { ProblemDto } from '../common/dto/error-bodies.dto.js';

/** The 400 and 404 of a channel id in the path, with the bodies the service sends. */
function ApiChannelIdErrors(): MethodDecorator {
  return applyDecorators(
    ApiBadRequestResponse({
      type: ProblemDto,
      description: 'The id is not a positive integer',
      example: invalidMemberExample('id', 'id must be an integer'),
    }),
    ApiNotFoundResponse({
      type: ProblemDto,
      description: 'The caller has no channel with this id',
      example: problemExample(404, `No channel ${EXAMPLE.channelId}`),
    }),
  );
}

/** The caller's delivery channels (API.md 6.4). */
@RegistryReads()
@ApiTags(TAGS.channels)
@Controller('users/current/channels')
export class ChannelsController {
  constructor(private readonly channels: ChannelsService) {}

  @Get()
  @ApiOperation({
    operationId: 'user-channels-get',
    summary: "The caller's delivery channels",
    description: 'Secrets are never shown (`has_secret` says whether there is one). Needs a token.',
  })
  @ApiOkResponse({ type: ChannelListDto, description: "The caller's channels" })
  async list(@CurrentUser() user: AuthUser): Promise<ChannelListDto> {
    return { items: (await this.channels.list(user)).map(toChannelResponse) };
  }

  @Post()
  @ApiOperation({
    operationId: 'user-channels-post',
    summary: 'Add a delivery channel',
    description:
      '`webhook`: a signed JSON POST (`X-Signature-256`, `X-Event`, `X-Delivery`); `slack`: an incoming-webhook ' +
      '`{"text"}` (Slack, Matrix hookshot); `email`: a mail through `SMTP_URL` (refused with 400 when that is not ' +
      'configured; each mail carries a one-click unsubscribe link, `List-Unsubscribe` and `List-Unsubscribe-Post` of ' +
      'RFC 8058, whose POST needs no token: see docs/api.md 6.4). URL targets on private or reserved addresses are ' +
      'refused unless `ALLOW_PRIVATE_NETWORK_LINKS`. ' +
      'Needs a token.',
  })
  @ApiCreatedResponse({ type: ChannelDto, description: 'The new channel' })
  @ApiBadRequestResponse({
    type: ProblemDto,
    description: 'A bad type, target, events or secret; an e-mail channel without SMTP_URL; a private target',
    example: invalidMemberExample('type', 'type must be one of webhook, slack, email'),
  })
  async create(@Body() body: CreateChannelDto, @CurrentUser() user: AuthUser): Promise<ChannelDto> {
    return toChannelResponse(
      await this.channels.create(user, {
        type: body.type,
        target: body.target,
        events: body.events,
        secret: body.secret,
      }),
    );
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({
    operationId: 'user-channels-delete',
    summary: 'Remove a delivery channel',
    description: 'Its pending deliveries and its delivery log go with it. Needs a token.',
  })
  @ApiNoContentResponse({ description: 'Removed' })
  @ApiChannelIdErrors()
  async delete(@Param() { id }: ChannelIdParam, @CurrentUser() user: AuthUser): Promise<void> {
    await this.channels.delete(user, id);
  }

  @Get(':id/deliveries')
  @ApiOperation({
    operationId: 'user-channel-deliveries-get',
    summary: "A channel's delivery log",
    description: 'The last 100 delivery attempts, newest first. Needs a token.',
  })
  @ApiOkResponse({
    type: DeliveryLogDto,
    description: 'The latest delivery attempts through the channel, newest first',
  })
  @ApiChannelIdErrors()
  async deliveries(@Param() { id }: ChannelIdParam, @CurrentUser() user: AuthUser): Promise<DeliveryLogDto> {
    const attempts = await this.channels.deliveries(user, id);
    return {
      items: attempts.map((attempt) => ({
        time: attempt.attemptedAt.toISOString(),
        delivery: attempt.deliveryUuid,
        status: attempt.outcome,
        status_code: attempt.statusCode,
        error: attempt.error,
      })),
    };
  }
}

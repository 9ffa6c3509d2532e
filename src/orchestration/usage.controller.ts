import { Controller, Get, Query, UseFilters } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { ApiAuth } from '../auth/api-auth.decorator.js';
import { TAGS } from '../common/api-tags.js';
import type { AuthUser } from '../auth/auth-user.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { Roles } from '../auth/roles.decorator.js';
import { EnvelopeFilter } from '../common/filters/envelope.filter.js';
import { callerOf } from './caller.js';
import { Operation } from './cloud-route.decorators.js';
import { ApiEnvelopeErrors } from './dto/api-envelope-errors.decorator.js';
import { toUsageRowDto, UsageQueryDto, UsageReplyDto } from './dto/machines.dto.js';
import { QuotasService } from './quotas.service.js';

/** Area C: `GET /api/v1/usage` (API.md 13). HTTP only. */
@ApiTags(TAGS.usage)
@ApiAuth()
@ApiEnvelopeErrors(401, 403)
@UseFilters(EnvelopeFilter)
@Roles('agent')
@Controller('api/v1')
export class UsageController {
  constructor(private readonly quotas: QuotasService) {}

  @Get('usage')
  @Operation(
    'usage-get',
    'Node-hours and vCPU-hours per user and cloud, the nodes held now, the quota',
    false,
    'From the service’s own records of the nodes it started (from start to stop; running nodes up to now), over ' +
      '`from`..`to` (ISO 8601; default the last 30 days). A user sees their own rows, an admin everybody’s.',
  )
  @ApiOkResponse({ type: UsageReplyDto, description: 'One row per user and cloud' })
  @ApiEnvelopeErrors({
    status: 400,
    description: 'from or to is not ISO 8601, or from is not before to',
    message: 'from must be before to',
  })
  async usage(@Query() query: UsageQueryDto, @CurrentUser() user: AuthUser): Promise<UsageReplyDto> {
    const result = await this.quotas.usage(
      callerOf(user),
      query.from === undefined ? undefined : new Date(query.from),
      query.to === undefined ? undefined : new Date(query.to),
    );
    return {
      status: 'ok',
      from: result.from.toISOString(),
      to: result.to.toISOString(),
      usage: result.rows.map(toUsageRowDto),
    };
  }
}

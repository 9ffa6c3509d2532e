import { Controller, Get, Header, Req, UseFilters } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiOkResponse,
  ApiOperation,
  ApiPayloadTooLargeResponse,
  ApiUnauthorizedResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { Request } from 'express';
import { METRICS_SCHEME } from '../auth/api-auth.decorator.js';
import { Public } from '../auth/public.decorator.js';
import { ProblemDto, problemExample } from '../common/dto/error-bodies.dto.js';
import { ProblemDetailsFilter } from '../common/filters/problem-details.filter.js';
import { MetricsService } from './metrics.service.js';
import { MetricsAccess } from './metrics-access.js';
import { TAGS } from '../common/api-tags.js';

@Public()
@UseFilters(ProblemDetailsFilter)
@ApiTags(TAGS.service)
@Controller('metrics')
export class MetricsController {
  constructor(
    private readonly metrics: MetricsService,
    private readonly access: MetricsAccess,
  ) {}

  @Get()
  @Header('Content-Type', 'text/plain; version=0.0.4; charset=utf-8')
  @Header('Cache-Control', 'no-store')
  @ApiOperation({
    operationId: 'metrics-get',
    summary: 'Prometheus metrics (text format)',
    description:
      'Open when `METRICS_TOKEN` is unset; otherwise needs `Authorization: Bearer <METRICS_TOKEN>` (not a user ' +
      "token: a generated client passes it as this call's own `auth`).",
  })
  @ApiBearerAuth(METRICS_SCHEME)
  @ApiOkResponse({
    description: 'Prometheus text exposition format',
    content: { 'text/plain': { schema: { type: 'string' }, example: 'refresh_cycles_total 0\n' } },
  })
  @ApiUnauthorizedResponse({
    type: ProblemDto,
    description: 'METRICS_TOKEN is set and was not sent',
    example: problemExample(401, 'The metrics need `Authorization: Bearer <METRICS_TOKEN>`'),
  })
  @ApiPayloadTooLargeResponse({ type: ProblemDto, description: 'A request body over the limit' })
  async render(@Req() request: Request): Promise<string> {
    this.access.check(request.headers.authorization);
    return this.metrics.registry.metrics();
  }
}

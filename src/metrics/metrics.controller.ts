import { Controller, Get, Header, Headers, UseFilters } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { Public } from '../auth/public.decorator.js';
import { ProblemDto } from '../common/dto/error-bodies.dto.js';
import { ProblemDetailsFilter } from '../common/filters/problem-details.filter.js';
import { MetricsService } from './metrics.service.js';
import { MetricsAccess } from './metrics-access.js';

@ApiTags('operations')
@Public()
@UseFilters(ProblemDetailsFilter)
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
    summary:
      'Prometheus metrics (text format); needs `Authorization: Bearer <METRICS_TOKEN>` when that is set',
  })
  @ApiBearerAuth('metrics')
  @ApiOkResponse({ description: 'Prometheus text exposition format', content: { 'text/plain': {} } })
  @ApiUnauthorizedResponse({ type: ProblemDto })
  async render(@Headers('authorization') authorization?: string): Promise<string> {
    this.access.check(authorization);
    return this.metrics.registry.metrics();
  }
}

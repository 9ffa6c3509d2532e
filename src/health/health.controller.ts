import {
  Catch,
  Controller,
  Get,
  HttpException,
  UseFilters,
  type ArgumentsHost,
  type ExceptionFilter,
} from '@nestjs/common';
import {
  ApiOkResponse,
  ApiOperation,
  ApiPayloadTooLargeResponse,
  ApiServiceUnavailableResponse,
} from '@nestjs/swagger';
import { ProblemDto } from '../common/dto/error-bodies.dto.js';
import {
  HealthCheck,
  HealthCheckService,
  HealthIndicatorService,
  TypeOrmHealthIndicator,
  type HealthCheckResult,
  type HealthIndicatorResult,
} from '@nestjs/terminus';
import type { Response } from 'express';
import { DataSource } from 'typeorm';
import { Public } from '../auth/public.decorator.js';
import { toProblem } from '../common/errors/problem.js';

/** Terminus answers 503 with its own report; probes and operators read that report, so it passes through. */
@Catch()
class HealthReportFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    const response = host.switchToHttp().getResponse<Response>();
    if (exception instanceof HttpException) {
      response.status(exception.getStatus()).json(exception.getResponse());
      return;
    }
    response.status(503).json({ status: 'error', error: { message: toProblem(exception).message } });
  }
}

@Public()
// Refused by the body parser before routing, so in area B's shape like any other path outside /api/v1.
@ApiPayloadTooLargeResponse({ type: ProblemDto, description: 'The request body is larger than 1 MiB' })
@UseFilters(HealthReportFilter)
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly database: TypeOrmHealthIndicator,
    private readonly indicators: HealthIndicatorService,
    private readonly dataSource: DataSource,
  ) {}

  @Get('live')
  @HealthCheck()
  @ApiOperation({ operationId: 'health-live', summary: 'The process is up' })
  @ApiOkResponse({ description: 'Up' })
  live(): Promise<HealthCheckResult> {
    return this.health.check([]);
  }

  @Get('ready')
  @HealthCheck()
  @ApiOperation({
    operationId: 'health-ready',
    summary: 'The database answers and every migration is applied',
  })
  @ApiOkResponse({ description: 'Ready' })
  @ApiServiceUnavailableResponse({ description: 'Not ready; the body says which check failed' })
  ready(): Promise<HealthCheckResult> {
    return this.health.check([
      () => this.database.pingCheck('database', { timeout: 3000 }),
      () => this.migrations(),
    ]);
  }

  private async migrations(): Promise<HealthIndicatorResult<'migrations'>> {
    const check = this.indicators.check('migrations');
    try {
      return (await this.dataSource.showMigrations())
        ? check.down({ message: 'migrations are pending' })
        : check.up();
    } catch (error) {
      return check.down({ message: (error as Error).message });
    }
  }
}

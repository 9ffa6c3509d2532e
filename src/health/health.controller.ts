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
  ApiTags,
} from '@nestjs/swagger';
import { ProblemDto } from '../common/dto/error-bodies.dto.js';
import {
  HealthCheck,
  HealthCheckService,
  HealthIndicatorService,
  type HealthCheckResult,
  type HealthIndicatorResult,
} from '@nestjs/terminus';
import type { Response } from 'express';
import { DataSource } from 'typeorm';
import { Public } from '../auth/public.decorator.js';
import { toProblem } from '../common/errors/problem.js';
import { TAGS } from '../common/api-tags.js';

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

/**
 * Terminus documents its routes itself only where its `require('@nestjs/swagger')` of an ES module
 * works: on Node 22.12 and later, not on Node 20. The document would then differ by Node (a 503
 * on /health/live, a schema without an example); the operations here say what they answer.
 */
const HEALTH_CHECK = { noCache: true, swaggerDocumentation: false };

@Public()
// Refused by the body parser before routing, so in area B's shape like any other path outside /api/v1.
@ApiPayloadTooLargeResponse({ type: ProblemDto, description: 'A request body over the limit' })
@UseFilters(HealthReportFilter)
@ApiTags(TAGS.service)
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
    private readonly dataSource: DataSource,
  ) {}

  @Get('live')
  @HealthCheck(HEALTH_CHECK)
  @ApiOperation({ operationId: 'health-live', summary: 'The process is up' })
  @ApiOkResponse({ description: 'Up' })
  live(): Promise<HealthCheckResult> {
    return this.health.check([]);
  }

  @Get('ready')
  @HealthCheck(HEALTH_CHECK)
  @ApiOperation({
    operationId: 'health-ready',
    summary: 'The database answers and every migration is applied',
  })
  @ApiOkResponse({ description: 'Ready' })
  @ApiServiceUnavailableResponse({ description: 'Not ready; the body says which check failed' })
  ready(): Promise<HealthCheckResult> {
    return this.health.check([() => this.database(), () => this.migrations()]);
  }

  /**
   * Each check answers within READY_CHECK_MS whatever the database does (a stopped server
   * holds a query for ever); the body says what failed, never where the database is (the
   * route is public): the cause goes to the log, once per outage, from src/database.
   */
  private async database(): Promise<HealthIndicatorResult<'database'>> {
    const check = this.indicators.check('database');
    const answered = await within(READY_CHECK_MS, this.dataSource.query('SELECT 1'));
    return answered ? check.up() : check.down({ message: 'the database does not answer' });
  }

  private async migrations(): Promise<HealthIndicatorResult<'migrations'>> {
    const check = this.indicators.check('migrations');
    let pending: boolean | undefined;
    const answered = await within(
      READY_CHECK_MS,
      this.dataSource.showMigrations().then((result) => (pending = result)),
    );
    if (!answered) {
      return check.down({ message: 'the database does not answer' });
    }
    return pending ? check.down({ message: 'migrations are pending' }) : check.up();
  }
}

/** Below the 3 s within which /health/ready must answer, leaving room for the reply. */
const READY_CHECK_MS = 2500;

/** True when `work` succeeded within `ms`; false when it failed or is still running (it is left to finish). */
function within(ms: number, work: Promise<unknown>): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    work.then(
      () => {
        clearTimeout(timer);
        resolve(true);
      },
      () => {
        clearTimeout(timer);
        resolve(false);
      },
    );
  });
}

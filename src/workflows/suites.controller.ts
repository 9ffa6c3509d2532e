import { Controller, Get, Param } from '@nestjs/common';
import { ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { CurrentViewer, OptionalAuth, type Viewer } from '../auth/optional-auth.decorator.js';
import { TestInstanceListDto, TestSuiteDto, toSuiteResponse } from './dto/suite-response.dto.js';
import { SuiteUuidParam } from './dto/workflow-requests.dto.js';
import { RegistryReads } from './registry-reads.decorator.js';
import { WorkflowsService } from './workflows.service.js';

/** Test suites, by uuid. */
@RegistryReads()
@OptionalAuth()
@Controller('suites')
export class SuitesController {
  constructor(private readonly workflows: WorkflowsService) {}

  @Get(':suite_uuid')
  @ApiOperation({
    operationId: 'suites-get-by-uuid',
    summary: 'A test suite with its definition and instances',
  })
  @ApiOkResponse({ type: TestSuiteDto })
  async get(@Param() { suite_uuid }: SuiteUuidParam, @CurrentViewer() user: Viewer): Promise<TestSuiteDto> {
    return toSuiteResponse(await this.workflows.suite(suite_uuid, user));
  }

  @Get(':suite_uuid/instances')
  @ApiOperation({ operationId: 'suites-get-instances', summary: 'The test instances of a suite' })
  @ApiOkResponse({ type: TestInstanceListDto })
  async instances(
    @Param() { suite_uuid }: SuiteUuidParam,
    @CurrentViewer() user: Viewer,
  ): Promise<TestInstanceListDto> {
    const suite = await this.workflows.suite(suite_uuid, user);
    return { items: toSuiteResponse(suite).instances };
  }
}

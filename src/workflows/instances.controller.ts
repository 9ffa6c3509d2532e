import { Controller, Get, Param } from '@nestjs/common';
import { ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { CurrentViewer, OptionalAuth, type Viewer } from '../auth/optional-auth.decorator.js';
import { TestInstanceDto, toInstanceResponse } from './dto/suite-response.dto.js';
import { InstanceUuidParam } from './dto/workflow-requests.dto.js';
import { RegistryReads } from './registry-reads.decorator.js';
import { WorkflowsService } from './workflows.service.js';

/** Test instances, by uuid. */
@RegistryReads()
@OptionalAuth()
@Controller('instances')
export class InstancesController {
  constructor(private readonly workflows: WorkflowsService) {}

  @Get(':instance_uuid')
  @ApiOperation({ operationId: 'instances-get-by-id', summary: 'A test instance with its service' })
  @ApiOkResponse({ type: TestInstanceDto })
  async get(
    @Param() { instance_uuid }: InstanceUuidParam,
    @CurrentViewer() user: Viewer,
  ): Promise<TestInstanceDto> {
    return toInstanceResponse(await this.workflows.instance(instance_uuid, user));
  }
}

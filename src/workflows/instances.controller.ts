import { Body, Controller, Delete, Get, HttpCode, Param, Put } from '@nestjs/common';
import {
  ApiBody,
  ApiForbiddenResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type { AuthUser } from '../auth/auth-user.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { CurrentViewer, OptionalAuth, type Viewer } from '../auth/optional-auth.decorator.js';
import { ProblemDto } from '../common/dto/error-bodies.dto.js';
import { TestInstanceDto, toInstanceResponse } from './dto/suite-response.dto.js';
import { UpdateInstanceDto } from './dto/instance-requests.dto.js';
import { InstanceUuidParam } from './dto/workflow-requests.dto.js';
import { InstancesService } from './instances.service.js';
import { RegistryReads } from './registry-reads.decorator.js';
import { WorkflowsService } from './workflows.service.js';
import { TAGS } from '../common/api-tags.js';
import { problemExample } from '../common/dto/error-bodies.dto.js';
import { EXAMPLE } from '../common/openapi-examples.js';
import { RequireScope } from '../auth/scopes.js';

const FORBIDDEN = {
  type: ProblemDto,
  description: 'The workflow is public, but the caller is neither its owner nor an admin',
  example: problemExample(
    403,
    `Only the owner of the workflow ${EXAMPLE.workflowUuid} or an admin may change it`,
  ),
};

/** Test instances, by uuid: reads open to anybody for public workflows, writes for the owner and admins. */
@RegistryReads()
@ApiTags(TAGS.suites)
@Controller('instances')
export class InstancesController {
  constructor(
    private readonly workflows: WorkflowsService,
    private readonly instances: InstancesService,
  ) {}

  @Get(':instance_uuid')
  @OptionalAuth()
  @RequireScope('workflow.read')
  @ApiOperation({ operationId: 'instances-get-by-id', summary: 'A test instance with its service' })
  @ApiOkResponse({ type: TestInstanceDto, description: 'The test instance' })
  async get(
    @Param() { instance_uuid }: InstanceUuidParam,
    @CurrentViewer() user: Viewer,
  ): Promise<TestInstanceDto> {
    const view = await this.workflows.instance(instance_uuid, user);
    return toInstanceResponse(view.instance, view.lastChecks);
  }

  @Put(':instance_uuid')
  @RequireScope('workflow.write')
  @ApiOperation({
    operationId: 'instances-put',
    summary: 'Rename an instance, or point it at another resource of its service',
    description:
      "Owner or admin; any instance, the crate's own included (the stored crate stays as registered, the " +
      'instance keeps `origin: crate`). A new resource forgets the builds of the old one and makes a check due at once.',
  })
  @ApiBody({
    type: UpdateInstanceDto,
    examples: { rename: { summary: 'A new name', value: { name: 'nightly on GitHub Actions' } } },
  })
  @ApiOkResponse({ type: TestInstanceDto, description: 'The instance as changed' })
  @ApiForbiddenResponse(FORBIDDEN)
  async update(
    @Param() { instance_uuid }: InstanceUuidParam,
    @Body() body: UpdateInstanceDto,
    @CurrentUser() user: AuthUser,
  ): Promise<TestInstanceDto> {
    const view = await this.instances.update(instance_uuid, body, user);
    return toInstanceResponse(view.instance, view.lastChecks);
  }

  @Delete(':instance_uuid')
  @HttpCode(204)
  @RequireScope('workflow.write')
  @ApiOperation({
    operationId: 'instances-delete-by-id',
    summary: 'Delete an instance, with its builds and monitoring',
    description:
      "Owner or admin; any instance, the crate's own included (the stored crate stays as registered).",
  })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiForbiddenResponse(FORBIDDEN)
  async remove(@Param() { instance_uuid }: InstanceUuidParam, @CurrentUser() user: AuthUser): Promise<void> {
    await this.instances.remove(instance_uuid, user);
  }
}

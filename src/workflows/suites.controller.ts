import { Body, Controller, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import {
  ApiCreatedResponse,
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
import { AddInstanceDto } from './dto/instance-requests.dto.js';
import { UpdateSuiteDto } from './dto/register-workflow.dto.js';
import {
  TestInstanceDto,
  TestInstanceListDto,
  TestSuiteDto,
  toInstanceResponse,
  toSuiteResponse,
} from './dto/suite-response.dto.js';
import { SuiteUuidParam } from './dto/workflow-requests.dto.js';
import { InstancesService } from './instances.service.js';
import { RegistryReads } from './registry-reads.decorator.js';
import { WorkflowsService } from './workflows.service.js';
import { TAGS } from '../common/api-tags.js';
import { problemExample } from '../common/dto/error-bodies.dto.js';
import { EXAMPLE } from '../common/openapi-examples.js';
import { RequireScope } from '../auth/scopes.js';

/** Test suites, by uuid: reads open to anybody for public workflows; adding an instance is for the owner and admins. */
@RegistryReads()
@ApiTags(TAGS.suites)
@Controller('suites')
export class SuitesController {
  constructor(
    private readonly workflows: WorkflowsService,
    private readonly instancesOfSuites: InstancesService,
  ) {}

  @Get(':suite_uuid')
  @OptionalAuth()
  @RequireScope('workflow.read')
  @ApiOperation({
    operationId: 'suites-get-by-uuid',
    summary: 'A test suite with its definition and instances',
  })
  @ApiOkResponse({ type: TestSuiteDto, description: 'The test suite, with its instances' })
  async get(@Param() { suite_uuid }: SuiteUuidParam, @CurrentViewer() user: Viewer): Promise<TestSuiteDto> {
    const view = await this.workflows.suite(suite_uuid, user);
    return toSuiteResponse(view.suite, view.lastChecks);
  }

  @Put(':suite_uuid')
  @HttpCode(204)
  @RequireScope('workflow.write')
  @ApiOperation({
    operationId: 'suites-put',
    summary: 'Rename a test suite (owner or admin, or the registry the workflow came from)',
  })
  @ApiNoContentResponse({ description: 'Updated' })
  @ApiForbiddenResponse({
    type: ProblemDto,
    description: 'The workflow is public, but the caller is neither its owner nor an admin',
    example: problemExample(
      403,
      `Only the owner of the workflow ${EXAMPLE.workflowUuid} or an admin may change it`,
    ),
  })
  async update(
    @Param() { suite_uuid }: SuiteUuidParam,
    @Body() body: UpdateSuiteDto,
    @CurrentUser() user: AuthUser,
  ): Promise<void> {
    await this.workflows.updateSuite(suite_uuid, body.name, user);
  }

  @Get(':suite_uuid/instances')
  @OptionalAuth()
  @RequireScope('workflow.read')
  @ApiOperation({ operationId: 'suites-get-instances', summary: 'The test instances of a suite' })
  @ApiOkResponse({ type: TestInstanceListDto, description: 'The instances of the suite' })
  async instances(
    @Param() { suite_uuid }: SuiteUuidParam,
    @CurrentViewer() user: Viewer,
  ): Promise<TestInstanceListDto> {
    const view = await this.workflows.suite(suite_uuid, user);
    return { items: toSuiteResponse(view.suite, view.lastChecks).instances };
  }

  @Post(':suite_uuid/instances')
  @RequireScope('workflow.write')
  @ApiOperation({
    operationId: 'suites-post-instance',
    summary: 'Add a test instance to a suite (owner or admin)',
    description:
      'The checks of registration apply: a service type this deployment knows, an http(s) URL that is not on a ' +
      'private address (unless ALLOW_PRIVATE_NETWORK_LINKS), a resource the service can check (in any form the ' +
      'crate may use). The instance has `managed` true for a service that runs the tests itself (`managed`, API.md 17) and false for a CI, `roc_instance: null` and `origin: api`, and is due for a check at once.',
  })
  @ApiCreatedResponse({
    type: TestInstanceDto,
    description: 'The new instance; its first check is due at once',
  })
  @ApiForbiddenResponse({
    type: ProblemDto,
    description: 'The workflow is public, but the caller is neither its owner nor an admin',
    example: problemExample(
      403,
      `Only the owner of the workflow ${EXAMPLE.workflowUuid} or an admin may change it`,
    ),
  })
  async addInstance(
    @Param() { suite_uuid }: SuiteUuidParam,
    @Body() body: AddInstanceDto,
    @CurrentUser() user: AuthUser,
  ): Promise<TestInstanceDto> {
    const view = await this.instancesOfSuites.add(
      suite_uuid,
      {
        name: body.name,
        serviceType: body.service.type,
        serviceUrl: body.service.url,
        resource: body.resource,
        managed: body.managed,
      },
      user,
    );
    return toInstanceResponse(view.instance, view.lastChecks);
  }
}

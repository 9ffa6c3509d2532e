import {
  applyDecorators,
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Post,
  Query,
  Req,
  UseFilters,
} from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiExtraModels,
  ApiForbiddenResponse,
  ApiGatewayTimeoutResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiBadGatewayResponse,
  ApiBody,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import type { Request } from 'express';
import { ApiAuth } from '../auth/api-auth.decorator.js';
import type { AuthUser } from '../auth/auth-user.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { Public } from '../auth/public.decorator.js';
import { Roles } from '../auth/roles.decorator.js';
import { RequireScope } from '../auth/scopes.js';
import { TAGS } from '../common/api-tags.js';
import { ProblemDto } from '../common/dto/error-bodies.dto.js';
import { ProblemDetailsFilter } from '../common/filters/problem-details.filter.js';
import { AppConfig } from '../config/app-config.js';
import { baseUrlOf } from '../common/base-url.js';
import { ListedVersionDto, RegisteredWorkflowDto, RegistryWorkflowListDto } from '../workflows/index.js';
import {
  CreatedRegistryDto,
  CreateRegistryDto,
  RegistryDto,
  RegistryIndexDto,
  RegistryIndexItemDto,
  RegistryListDto,
  RegistryListQuery,
  RegistryUserListDto,
  RegistryUuidParam,
  RegistryWorkflowParams,
  SubmitRegistryWorkflowDto,
  submissionExample,
  toRegistryResponse,
} from './dto/registry.dto.js';
import { toIndexItem, toRegistryList, toRegistryUsers, toSubmission } from './dto/registry-replies.js';
import { insufficientScope, REGISTRY_ERRORS } from './openapi-errors.js';
import { RegistriesService } from './registries.service.js';

/** A route that needs a token (the others of this controller are public). */
const Authenticated = (): MethodDecorator =>
  applyDecorators(ApiAuth(), ApiUnauthorizedResponse({ type: ProblemDto, description: 'No valid token' }));

/**
 * Registries (API.md 10.1): listed for anybody, made and revoked by admins; `current` is the registry
 * whose client token came; a user reads and registers from a registry they linked.
 */
@ApiBadRequestResponse(REGISTRY_ERRORS.badInput)
@ApiExtraModels(ListedVersionDto)
@UseFilters(ProblemDetailsFilter)
@ApiTags(TAGS.registries)
@Controller('registries')
export class RegistriesController {
  constructor(
    private readonly registries: RegistriesService,
    private readonly config: AppConfig,
  ) {}

  @Get()
  @Public()
  @ApiOperation({
    operationId: 'workflow-registries-get',
    summary: 'The registries, for anybody (no secrets)',
  })
  @ApiOkResponse({ type: RegistryListDto, description: 'The registries' })
  async list(): Promise<RegistryListDto> {
    return { items: (await this.registries.list()).map(toRegistryResponse) };
  }

  @Post()
  @Authenticated()
  @Roles('admin')
  @ApiOperation({
    operationId: 'workflow-registries-post',
    summary: 'Make a registry and its OAuth2 client (admin); the client secret is shown this once',
  })
  @ApiCreatedResponse({
    type: CreatedRegistryDto,
    description: 'Created; the client secret is shown this once',
  })
  @ApiForbiddenResponse(REGISTRY_ERRORS.notAdmin)
  @ApiConflictResponse(REGISTRY_ERRORS.nameTaken)
  async create(@Body() body: CreateRegistryDto): Promise<CreatedRegistryDto> {
    const { registry, clientSecret } = await this.registries.create(body);
    return { ...toRegistryResponse(registry), client_id: registry.clientId, client_secret: clientSecret };
  }

  // The `current` routes come before `:registry_uuid`, which would take 'current' for a uuid.
  @Get('current')
  @Authenticated()
  @RequireScope('registry.info')
  @ApiOperation({
    operationId: 'workflow-registries-get-current',
    summary: 'The registry whose client token came (scope registry.info)',
  })
  @ApiOkResponse({ type: RegistryDto, description: 'The registry of the caller’s token' })
  @ApiForbiddenResponse(
    insufficientScope('registry.info', 'insufficient_scope: not a registry token, or without the scope'),
  )
  async current(@CurrentUser() caller: AuthUser): Promise<RegistryDto> {
    return toRegistryResponse(await this.registries.current(caller));
  }

  @Get('current/users')
  @Authenticated()
  @RequireScope('registry.user')
  @ApiOperation({
    operationId: 'get-registry-users',
    summary: "The registry's users the service knows (scope registry.user)",
    description:
      'Those made for `POST /users/{user_id}/workflows`, and the users of ours who linked the registry.',
  })
  @ApiOkResponse({ type: RegistryUserListDto, description: "The registry's users" })
  @ApiForbiddenResponse(insufficientScope('registry.user'))
  async users(@CurrentUser() caller: AuthUser): Promise<RegistryUserListDto> {
    return toRegistryUsers(await this.registries.usersOf(caller));
  }

  @Get('current/workflows')
  @Authenticated()
  @RequireScope('registry.workflow.read')
  @ApiOperation({
    operationId: 'registry-workflows-get',
    summary: 'The workflows the registry sent (scope registry.workflow.read)',
    description:
      "With versions=true each item's versions are version objects with their own status (WorkflowHub's daily status job reads them).",
  })
  @ApiOkResponse({ type: RegistryWorkflowListDto, description: 'The workflows the registry sent' })
  @ApiForbiddenResponse(insufficientScope('registry.workflow.read'))
  async workflows(
    @Query() query: RegistryListQuery,
    @CurrentUser() caller: AuthUser,
    @Req() request: Request,
  ): Promise<RegistryWorkflowListDto> {
    const list = await this.registries.registryWorkflows(caller, toListRequest(query));
    return toRegistryList(
      list,
      query.versions ?? false,
      baseUrlOf(this.config, request),
      request.originalUrl,
    );
  }

  @Post('current/workflows')
  @Authenticated()
  @RequireScope('registry.workflow.write')
  @ApiOperation({
    operationId: 'registry-workflows-post',
    summary: "Register one of the registry's workflows by its id there (scope registry.workflow.write)",
    description:
      'SEEK: reads `{uri}/workflows/{identifier}?format=json` (the uuid is data.meta.uuid, the title ' +
      'data.attributes.title) and registers the crate of `{uri}/workflows/{identifier}/ro_crate?version={version}` ' +
      'under that uuid, as POST /users/current/workflows would (same checks, same limits); the versions record ' +
      "the registry's page as links.origin, and every read of the workflow shows `registry`.",
  })
  @ApiBody({ type: SubmitRegistryWorkflowDto, ...submissionExample('1') })
  @ApiCreatedResponse({ type: RegisteredWorkflowDto, description: 'Registered' })
  @ApiForbiddenResponse(insufficientScope('registry.workflow.write'))
  @ApiNotFoundResponse(REGISTRY_ERRORS.noWorkflow)
  @ApiConflictResponse(REGISTRY_ERRORS.versionTaken)
  @ApiBadGatewayResponse(REGISTRY_ERRORS.upstream)
  @ApiGatewayTimeoutResponse(REGISTRY_ERRORS.upstreamTimeout)
  async submit(
    @Body() body: SubmitRegistryWorkflowDto,
    @CurrentUser() caller: AuthUser,
  ): Promise<RegisteredWorkflowDto> {
    return toSubmission(await this.registries.submit(caller, body));
  }

  @Get(':registry_uuid')
  @Public()
  @ApiOperation({ operationId: 'workflow-registries-get-by-uuid', summary: 'One registry, for anybody' })
  @ApiOkResponse({ type: RegistryDto, description: 'The registry' })
  @ApiNotFoundResponse(REGISTRY_ERRORS.noRegistry)
  async get(@Param() { registry_uuid }: RegistryUuidParam): Promise<RegistryDto> {
    return toRegistryResponse(await this.registries.get(registry_uuid));
  }

  @Delete(':registry_uuid')
  @Authenticated()
  @Roles('admin')
  @HttpCode(204)
  @ApiOperation({
    operationId: 'workflow-registries-delete',
    summary: 'Revoke a registry (admin): its client and tokens stop at once; its workflows stay',
    description:
      "Its accounts are renamed `deleted-registry:<uuid>[:<user id>]` and disabled: they keep the workflows, and the registry's name is free again.",
  })
  @ApiNoContentResponse({ description: 'Revoked' })
  @ApiForbiddenResponse(REGISTRY_ERRORS.notAdmin)
  @ApiNotFoundResponse(REGISTRY_ERRORS.noRegistry)
  @ApiConflictResponse(REGISTRY_ERRORS.accountNameTaken)
  async remove(@Param() { registry_uuid }: RegistryUuidParam): Promise<void> {
    await this.registries.remove(registry_uuid);
  }

  @Get(':registry_uuid/index')
  @Authenticated()
  @ApiOperation({
    operationId: 'registry-index',
    summary: 'The workflows the registry shows the caller (their account on it linked)',
  })
  @ApiOkResponse({
    type: RegistryIndexDto,
    description: "The registry's workflows the caller may read there",
  })
  @ApiForbiddenResponse(REGISTRY_ERRORS.notLinked)
  @ApiNotFoundResponse(REGISTRY_ERRORS.noRegistry)
  @ApiBadGatewayResponse(REGISTRY_ERRORS.upstream)
  @ApiGatewayTimeoutResponse(REGISTRY_ERRORS.upstreamTimeout)
  async index(
    @Param() { registry_uuid }: RegistryUuidParam,
    @CurrentUser() caller: AuthUser,
  ): Promise<RegistryIndexDto> {
    return { items: (await this.registries.index(caller, registry_uuid)).map(toIndexItem) };
  }

  @Get(':registry_uuid/index/:registry_workflow_identifier')
  @Authenticated()
  @ApiOperation({
    operationId: 'registry-index-workflow',
    summary: 'One workflow as the registry shows it to the caller (their account on it linked)',
  })
  @ApiOkResponse({ type: RegistryIndexItemDto, description: 'The workflow as the registry has it' })
  @ApiForbiddenResponse(REGISTRY_ERRORS.notLinked)
  @ApiNotFoundResponse(REGISTRY_ERRORS.noRegistryOrWorkflow)
  @ApiBadGatewayResponse(REGISTRY_ERRORS.upstream)
  @ApiGatewayTimeoutResponse(REGISTRY_ERRORS.upstreamTimeout)
  async indexWorkflow(
    @Param() { registry_uuid, registry_workflow_identifier }: RegistryWorkflowParams,
    @CurrentUser() caller: AuthUser,
  ): Promise<RegistryIndexItemDto> {
    return toIndexItem(
      await this.registries.indexWorkflow(caller, registry_uuid, registry_workflow_identifier),
    );
  }

  @Get(':registry_uuid/workflows')
  @Authenticated()
  @ApiOperation({
    operationId: 'user-registry-workflows-get',
    summary: "The caller's workflows registered from this registry",
  })
  @ApiOkResponse({ type: RegistryWorkflowListDto, description: "The caller's workflows from this registry" })
  @ApiNotFoundResponse(REGISTRY_ERRORS.noRegistry)
  async userWorkflows(
    @Param() { registry_uuid }: RegistryUuidParam,
    @Query() query: RegistryListQuery,
    @CurrentUser() caller: AuthUser,
    @Req() request: Request,
  ): Promise<RegistryWorkflowListDto> {
    const list = await this.registries.userRegistryWorkflows(caller, registry_uuid, toListRequest(query));
    return toRegistryList(
      list,
      query.versions ?? false,
      baseUrlOf(this.config, request),
      request.originalUrl,
    );
  }

  @Post(':registry_uuid/workflows')
  @Authenticated()
  @ApiOperation({
    operationId: 'user-registry-workflows-post',
    summary: 'Register a workflow of this registry as the caller (their account on it linked)',
    description:
      "As registry-workflows-post, read with the caller's personal token on the registry, and owned by the caller.",
  })
  @ApiBody({ type: SubmitRegistryWorkflowDto, ...submissionExample('3') })
  @ApiCreatedResponse({ type: RegisteredWorkflowDto, description: 'Registered' })
  @ApiForbiddenResponse(REGISTRY_ERRORS.notLinked)
  @ApiNotFoundResponse(REGISTRY_ERRORS.noRegistryOrWorkflow)
  @ApiConflictResponse(REGISTRY_ERRORS.versionTaken)
  @ApiBadGatewayResponse(REGISTRY_ERRORS.upstream)
  @ApiGatewayTimeoutResponse(REGISTRY_ERRORS.upstreamTimeout)
  async userSubmit(
    @Param() { registry_uuid }: RegistryUuidParam,
    @Body() body: SubmitRegistryWorkflowDto,
    @CurrentUser() caller: AuthUser,
  ): Promise<RegisteredWorkflowDto> {
    return toSubmission(await this.registries.submitAsUser(caller, registry_uuid, body));
  }
}

export function toListRequest(query: RegistryListQuery): {
  limit?: number;
  offset?: number;
  status: boolean;
  versions: boolean;
} {
  return {
    limit: query.limit,
    offset: query.offset,
    status: query.status ?? true,
    versions: query.versions ?? false,
  };
}

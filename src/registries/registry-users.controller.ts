import { Body, Controller, Get, HttpCode, Param, Post, Put, Query, Req, UseFilters } from '@nestjs/common';
import {
  ApiBadGatewayResponse,
  ApiBadRequestResponse,
  ApiBody,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiForbiddenResponse,
  ApiGatewayTimeoutResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import type { Request } from 'express';
import { ApiAuth } from '../auth/api-auth.decorator.js';
import type { AuthUser } from '../auth/auth-user.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { RequireScope } from '../auth/scopes.js';
import { TAGS } from '../common/api-tags.js';
import { ProblemDto } from '../common/dto/error-bodies.dto.js';
import { ProblemDetailsFilter } from '../common/filters/problem-details.filter.js';
import { AppConfig } from '../config/app-config.js';
import { baseUrlOf } from '../common/base-url.js';
import { RegisteredWorkflowDto, RegistryWorkflowListDto } from '../workflows/index.js';
import { toRegistryList, toSubmission } from './dto/registry-replies.js';
import {
  LinkRegistryDto,
  RegistryListQuery,
  RegistryUserParam,
  RegistryUuidParam,
  SubmitRegistryWorkflowDto,
  submissionExample,
} from './dto/registry.dto.js';
import { insufficientScope, REGISTRY_ERRORS } from './openapi-errors.js';
import { RegistriesService } from './registries.service.js';
import { toListRequest } from './registries.controller.js';

/** A registry's users (`/users/{user_id}/workflows`, with the registry's token), and a user's link to a registry. */
@ApiAuth()
@ApiUnauthorizedResponse({ type: ProblemDto, description: 'No valid token' })
@ApiBadRequestResponse(REGISTRY_ERRORS.badInput)
@UseFilters(ProblemDetailsFilter)
@ApiTags(TAGS.registries)
@Controller('users')
export class RegistryUsersController {
  constructor(
    private readonly registries: RegistriesService,
    private readonly config: AppConfig,
  ) {}

  @Put('current/registries/:registry_uuid')
  @HttpCode(204)
  @ApiOperation({
    operationId: 'user-registry-link',
    summary: "Link the caller's account on a registry with a personal token of theirs there",
    description:
      'The token is stored encrypted (AES-256-GCM) and never shown again; a new PUT replaces it. It lets the ' +
      'caller read the registry (registry-index) and register from it (user-registry-workflows-post).',
  })
  @ApiNoContentResponse({ description: 'Linked' })
  @ApiNotFoundResponse(REGISTRY_ERRORS.noRegistry)
  async link(
    @Param() { registry_uuid }: RegistryUuidParam,
    @Body() body: LinkRegistryDto,
    @CurrentUser() caller: AuthUser,
  ): Promise<void> {
    await this.registries.link(caller, registry_uuid, body.token);
  }

  @Get(':user_id/workflows')
  @RequireScope('registry.user.workflow.read')
  @ApiOperation({
    operationId: 'registry-user-workflows-get',
    summary: "One of the registry's users' workflows (scope registry.user.workflow.read)",
    description:
      "`user_id` is the registry's own id of its user; none yet for a user it never registered for.",
  })
  @ApiOkResponse({
    type: RegistryWorkflowListDto,
    description: "The workflows registered for the registry's user",
  })
  @ApiForbiddenResponse(insufficientScope('registry.user.workflow.read'))
  async workflows(
    @Param() { user_id }: RegistryUserParam,
    @Query() query: RegistryListQuery,
    @CurrentUser() caller: AuthUser,
    @Req() request: Request,
  ): Promise<RegistryWorkflowListDto> {
    const list = await this.registries.registryUserWorkflows(caller, user_id, toListRequest(query));
    return toRegistryList(
      list,
      query.versions ?? false,
      baseUrlOf(this.config, request),
      request.originalUrl,
    );
  }

  @Post(':user_id/workflows')
  @RequireScope('registry.user.workflow.write')
  @ApiOperation({
    operationId: 'registry-user-workflows-post',
    summary:
      "Register one of the registry's workflows for one of its users (scope registry.user.workflow.write)",
    description:
      "As registry-workflows-post, owned by the local identity of the registry's user `user_id` (made on first use).",
  })
  @ApiBody({ type: SubmitRegistryWorkflowDto, ...submissionExample('2') })
  @ApiCreatedResponse({ type: RegisteredWorkflowDto, description: 'Registered' })
  @ApiForbiddenResponse(insufficientScope('registry.user.workflow.write'))
  @ApiNotFoundResponse(REGISTRY_ERRORS.noWorkflow)
  @ApiConflictResponse(REGISTRY_ERRORS.versionTaken)
  @ApiBadGatewayResponse(REGISTRY_ERRORS.upstream)
  @ApiGatewayTimeoutResponse(REGISTRY_ERRORS.upstreamTimeout)
  async submit(
    @Param() { user_id }: RegistryUserParam,
    @Body() body: SubmitRegistryWorkflowDto,
    @CurrentUser() caller: AuthUser,
  ): Promise<RegisteredWorkflowDto> {
    return toSubmission(await this.registries.submitForUser(caller, user_id, body));
  }
}

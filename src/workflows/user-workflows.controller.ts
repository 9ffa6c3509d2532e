import { Body, Controller, Get, Post, Query, Req, UseFilters } from '@nestjs/common';
import type { Request } from 'express';
import {
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiOkResponse,
  ApiOperation,
  ApiUnauthorizedResponse,
  ApiTags,
} from '@nestjs/swagger';
import { ApiAuth } from '../auth/api-auth.decorator.js';
import type { AuthUser } from '../auth/auth-user.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { RequireScope } from '../auth/scopes.js';
import { baseUrlOf } from '../common/base-url.js';
import { ProblemDto } from '../common/dto/error-bodies.dto.js';
import { AppConfig } from '../config/app-config.js';
import { ProblemDetailsFilter } from '../common/filters/problem-details.filter.js';
import { RegisteredWorkflowDto, RegisterWorkflowDto } from './dto/register-workflow.dto.js';
import { ListWorkflowsQuery } from './dto/workflow-requests.dto.js';
import { WorkflowListDto } from './dto/workflow-response.dto.js';
import { ConditionalRead, sharedConditional, type ConditionalReply } from '../common/conditional-read.js';
import { itemsReply } from './json-items-stream.js';
import { WorkflowsService } from './workflows.service.js';
import { TAGS } from '../common/api-tags.js';
import { invalidMemberExample, problemExample } from '../common/dto/error-bodies.dto.js';
import { EXAMPLE } from '../common/openapi-examples.js';

/** The caller's own workflows: register one, list them. */
@ApiAuth()
@ApiUnauthorizedResponse({ type: ProblemDto, description: 'No valid token' })
@UseFilters(ProblemDetailsFilter)
@ApiTags(TAGS.workflows)
@Controller('users/current/workflows')
export class UserWorkflowsController {
  constructor(
    private readonly workflows: WorkflowsService,
    private readonly config: AppConfig,
  ) {}

  @Post()
  @ApiOperation({
    operationId: 'user-workflows-post',
    summary: 'Register a Workflow Testing RO-Crate by link, as a new workflow or a new version of one',
    description:
      'Downloads roc_link, reads its ro-crate-metadata.json, stores the archive and the workflow, version, ' +
      'test suites, instances and services, atomically, and schedules a first test status check. ' +
      'roc_link is a zip archive; or a GitHub repository (https://github.com/{owner}/{repo}[/tree/{ref}]), ' +
      'whose archive of the ref (else the tag or branch named like version, else the default branch) is ' +
      "fetched through GitHub's API (GITHUB_API_URL, GITHUB_TOKEN) and recorded as version.ro_crate.source; " +
      'or a detached crate: a link answering the metadata JSON-LD itself (application/json, ' +
      'application/ld+json, or a path ending ro-crate-metadata.json), stored as a zip holding only it. ' +
      'RO-Crate 1.1/1.2/1.3 and Workflow Testing RO-Crate 0.1/0.2 are understood, with the Bioschemas IRIs ' +
      'of each; Travis web-site URLs mean its API and github/{owner}/{repo} the repository slug; a GitHub ' +
      'resource may be a full URL of the workflow.',
  })
  @ApiCreatedResponse({
    type: RegisteredWorkflowDto,
    description:
      'Registered: the workflow (new, or the one `uuid` named) and the version; its suites and instances are read ' +
      'from the crate, and a first check of their CI status is due at once',
  })
  @ApiBadRequestResponse({
    type: ProblemDto,
    description: 'A bad body, or a link, archive or crate that cannot be used (the detail says which)',
    example: problemExample(
      400,
      'the GitHub repository iwc-workflows/sars-cov-2-consensus-from-variation does not exist, or is private and GITHUB_TOKEN does not give access to it',
    ),
  })
  @ApiConflictResponse({
    type: ProblemDto,
    description: 'The uuid already has this version, or belongs to another user',
    example: problemExample(
      409,
      `The workflow ${EXAMPLE.workflowUuid} already has a version '${EXAMPLE.version}'`,
    ),
  })
  async register(
    @Body() body: RegisterWorkflowDto,
    @CurrentUser() user: AuthUser,
  ): Promise<RegisteredWorkflowDto> {
    const registered = await this.workflows.register(user, {
      rocLink: body.roc_link,
      version: body.version,
      authorization: body.authorization,
      uuid: body.uuid,
      name: body.name,
      public: body.public,
    });
    return { name: registered.name, uuid: registered.uuid, wf_version: registered.version };
  }

  @Get()
  @RequireScope('user.workflow.read')
  @ApiOperation({
    operationId: 'user-workflows-get',
    summary: "The caller's workflows, the one whose latest version was registered last first",
    description:
      'A page with limit (and offset). Without limit, the whole list from offset: up to 1,000 items in one ' +
      'reply with an ETag, a longer list streamed in batches of 250 without one. A page, or a whole list ' +
      'answered at once, answers 304 to an If-None-Match naming its ETag.',
  })
  @ApiOkResponse({ type: WorkflowListDto, description: "The caller's workflows, newest first" })
  @ApiBadRequestResponse({
    type: ProblemDto,
    description: 'A bad status, limit or offset',
    example: invalidMemberExample('limit', 'limit must be an integer from 1 to 1000'),
  })
  @ConditionalRead()
  async list(
    @Query() query: ListWorkflowsQuery,
    @CurrentUser() user: AuthUser,
    @Req() request: Request,
  ): Promise<ConditionalReply<WorkflowListDto> | globalThis.Response> {
    const withStatus = query.status ?? true;
    const baseUrl = baseUrlOf(this.config, request);
    if (query.limit !== undefined) {
      const page = { limit: query.limit, offset: query.offset };
      const items = await this.workflows.list(user, page, withStatus, baseUrl);
      return sharedConditional(items, (shared) => ({ items: shared }));
    }
    // The whole list: answered at once when it fits in one batch, else streamed batch by batch.
    return itemsReply(this.workflows.listBatches(user, query.offset, withStatus, baseUrl), (item) => item);
  }
}

import { Controller, Headers, HttpCode, Injectable, Post, Req, UseFilters } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBody,
  ApiHeader,
  ApiNoContentResponse,
  ApiOperation,
  ApiPayloadTooLargeResponse,
  ApiSecurity,
  ApiTags,
  ApiUnauthorizedResponse,
  type OpenAPIObject,
} from '@nestjs/swagger';
import type { Request } from 'express';
import { Public } from '../auth/public.decorator.js';
import { TAGS } from '../common/api-tags.js';
import { RefinesOpenApi, type OpenApiRefinement } from '../common/openapi-refinement.js';
import { ProblemDto, problemExample } from '../common/dto/error-bodies.dto.js';
import { ProblemDetailsFilter } from '../common/filters/problem-details.filter.js';
import { GitlabWebhooksService } from './gitlab-webhooks.service.js';

/** The only credential of `POST /integrations/gitlab/webhooks`: GitLab's secret token. */
const TOKEN_SCHEME = 'gitlab-token';

/** Adds the token's security scheme to the OpenAPI document. */
@RefinesOpenApi()
@Injectable()
export class GitlabTokenScheme implements OpenApiRefinement {
  refineOpenApi(document: OpenAPIObject): void {
    document.components = document.components ?? {};
    document.components.securitySchemes = {
      ...document.components.securitySchemes,
      [TOKEN_SCHEME]: {
        type: 'apiKey',
        in: 'header',
        name: 'X-Gitlab-Token',
        description:
          "GITLAB_WEBHOOK_SECRET, as the webhook's Secret token in GitLab's settings; " +
          'for `POST /integrations/gitlab/webhooks` only',
      },
    };
  }
}

/** GitLab's webhook deliveries (API.md 18): no token of ours, GitLab's secret token instead. */
@Public()
@UseFilters(ProblemDetailsFilter)
@ApiTags(TAGS.webhooks)
@Controller('integrations/gitlab/webhooks')
export class GitlabWebhooksController {
  constructor(private readonly webhooks: GitlabWebhooksService) {}

  @Post()
  @HttpCode(204)
  @ApiSecurity(TOKEN_SCHEME)
  @ApiOperation({
    operationId: 'integrations-gitlab-webhooks-post',
    summary:
      'Receive a GitLab webhook delivery (`Pipeline Hook`, `Tag Push Hook`, `Push Hook`, `Release Hook`)',
    description:
      'No token: `X-Gitlab-Token` must equal `GITLAB_WEBHOOK_SECRET` (compared in constant time); 401 answers a ' +
      'missing or wrong token, or a service without the setting, and nothing changes. A `Pipeline Hook` re-checks at ' +
      'once every GitLab CI test instance whose resource names that project (by path or id) on that instance. For a ' +
      'followed repository (API.md 12), a `Tag Push Hook` creating a tag or a `Release Hook` `create` registers a ' +
      'version named by the tag when it matches `follow.tags`, and a `Push Hook` to a branch matching ' +
      '`follow.branches` registers (or replaces) the version named by the branch at the pushed commit, in the ' +
      'background. Projects nobody follows and every other event answer 204 and change nothing. Bodies over 1 MiB: 413.',
  })
  @ApiHeader({
    name: 'X-Gitlab-Event',
    required: true,
    description: 'The event: `Pipeline Hook`, `Tag Push Hook`, `Push Hook`, `Release Hook`, …',
    example: 'Pipeline Hook',
  })
  @ApiBody({
    description: "GitLab's event payload (application/json)",
    schema: {
      type: 'object',
      example: {
        object_kind: 'pipeline',
        object_attributes: { id: 31, ref: 'main', status: 'success' },
        project: { id: 1, path_with_namespace: 'group/project', web_url: 'https://gitlab.com/group/project' },
      },
    },
  })
  @ApiNoContentResponse({ description: 'Accepted (re-checks started, versions queued, or nothing to do)' })
  @ApiBadRequestResponse({
    type: ProblemDto,
    description: 'A body that is not JSON, or a Pipeline Hook without its project',
    example: problemExample(400, 'a Pipeline Hook needs project.web_url and project.path_with_namespace'),
  })
  @ApiUnauthorizedResponse({
    type: ProblemDto,
    description: 'The token is missing or wrong, or GITLAB_WEBHOOK_SECRET is not set',
    example: problemExample(401, 'X-Gitlab-Token is missing or wrong'),
  })
  @ApiPayloadTooLargeResponse({ type: ProblemDto, description: 'A request body over the limit' })
  async receive(
    @Headers('x-gitlab-event') event: string | undefined,
    @Headers('x-gitlab-token') token: string | undefined,
    @Req() request: Request & { rawBody?: Buffer },
  ): Promise<void> {
    const body = request.rawBody ?? (Buffer.isBuffer(request.body) ? request.body : undefined);
    await this.webhooks.receive(event, token, body);
  }
}

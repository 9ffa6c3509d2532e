import { Controller, Headers, HttpCode, Post, Req, UseFilters } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBody,
  ApiHeader,
  ApiNoContentResponse,
  ApiOperation,
  ApiPayloadTooLargeResponse,
  ApiSecurity,
  ApiUnauthorizedResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { Request } from 'express';
import { GITHUB_SIGNATURE_SCHEME } from '../auth/api-auth.decorator.js';
import { Public } from '../auth/public.decorator.js';
import { ProblemDto } from '../common/dto/error-bodies.dto.js';
import { ProblemDetailsFilter } from '../common/filters/problem-details.filter.js';
import { GithubWebhooksService } from './github-webhooks.service.js';
import { TAGS } from '../common/api-tags.js';
import { problemExample } from '../common/dto/error-bodies.dto.js';

/** GitHub's webhook deliveries (API.md 6.5): no token, a signature instead. */
@Public()
@UseFilters(ProblemDetailsFilter)
@ApiTags(TAGS.webhooks)
@Controller('integrations/github/webhooks')
export class GithubWebhooksController {
  constructor(private readonly webhooks: GithubWebhooksService) {}

  @Post()
  @HttpCode(204)
  @ApiSecurity(GITHUB_SIGNATURE_SCHEME)
  @ApiOperation({
    operationId: 'integrations-github-webhooks-post',
    summary: 'Receive a GitHub webhook delivery (`workflow_run`, `push`, `create`, `release`, `ping`)',
    description:
      'No token: `X-Hub-Signature-256` (HMAC-SHA256 of the raw body with `GITHUB_WEBHOOK_SECRET`) is checked instead, ' +
      'and 401 answers a missing or wrong signature, or a service without the setting. A `workflow_run` re-checks at ' +
      'once every test instance whose GitHub resource names that repository and workflow (by file name or id). ' +
      'For a followed repository (API.md 12), a `create` of a tag, a `release` `published` or a `push` creating a tag ' +
      'registers a version named by the tag when it matches `follow.tags`, and a `push` to a branch matching ' +
      '`follow.branches` registers (or replaces) the version named by the branch at the pushed commit, in the ' +
      'background; an event about a tag already seen changes nothing. `ping`, repositories nobody follows and every ' +
      'other event answer 204 and change nothing. Bodies over 1 MiB: 413.',
  })
  @ApiHeader({
    name: 'X-GitHub-Event',
    required: true,
    description: 'The event: `workflow_run`, `push`, `create`, `release`, `ping`, …',
    example: 'workflow_run',
  })
  @ApiBody({
    description: "GitHub's event payload (application/json, or a form with a `payload` field)",
    schema: {
      type: 'object',
      example: {
        action: 'completed',
        workflow_run: {
          id: 8765,
          workflow_id: 161335,
          path: '.github/workflows/ci.yml',
          conclusion: 'failure',
        },
        repository: { full_name: 'octo/repo' },
      },
    },
  })
  @ApiNoContentResponse({ description: 'Accepted (re-checks started, versions queued, or nothing to do)' })
  @ApiBadRequestResponse({
    type: ProblemDto,
    description: 'A workflow_run payload without its repository or workflow',
    example: problemExample(400, 'a workflow_run event needs workflow_run and repository.full_name'),
  })
  @ApiUnauthorizedResponse({
    type: ProblemDto,
    description: 'The signature is missing or wrong, or GITHUB_WEBHOOK_SECRET is not set',
    example: problemExample(401, 'X-Hub-Signature-256 is missing or does not match the body'),
  })
  @ApiPayloadTooLargeResponse({ type: ProblemDto, description: 'A request body over the limit' })
  async receive(
    @Headers('x-github-event') event: string | undefined,
    @Headers('x-hub-signature-256') signature: string | undefined,
    @Req() request: Request & { rawBody?: Buffer },
  ): Promise<void> {
    const body = request.rawBody ?? (Buffer.isBuffer(request.body) ? request.body : undefined);
    await this.webhooks.receive(event, signature, body);
  }
}

import { Controller, Get, Param, Query, Req, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { CurrentViewer, OptionalAuth, type Viewer } from '../auth/optional-auth.decorator.js';
import { entityTagOf, matchesIfNoneMatch } from '../common/conditional-read.js';
import { embeddableAnywhere, openToAllOrigins } from '../common/cross-origin.js';
import { RegistryReads, WorkflowUuidParam } from '../workflows/index.js';
import { badgeJson, badgeOf, DEFAULT_BADGE_LABEL, renderBadgeSvg } from './badge.js';
import { BadgeQuery } from './dto/status-requests.dto.js';
import { ShieldsEndpointDto } from './dto/status-response.dto.js';
import { TestStatusService, type BadgeStatus } from './test-status.service.js';
import { TAGS } from '../common/api-tags.js';

const CACHE_SECONDS = 60;

/** Badges of a workflow's test status (API.md 5.2): an SVG image and the shields.io endpoint. */
@RegistryReads()
@OptionalAuth()
@ApiTags(TAGS.badges)
@Controller('workflows')
export class BadgesController {
  constructor(private readonly status: TestStatusService) {}

  @Get(':wf_uuid/badge.svg')
  @ApiOperation({
    operationId: 'workflows-get-badge-svg',
    summary: 'A badge of the test status of a version (default: the latest), as an SVG image',
    description:
      'Flat, two parts: the label, and `passing` (green #4c1), `some passing` (yellow #dfb317), `failing` ' +
      '(red #e05d44) or `no builds` (grey #9f9f9f; `no builds yet for <version>` while the version has no ' +
      'build of its own at all), with ` (stale)` when the status is stale (`stale_reasons` of the ' +
      'status: a failed check, a paused service, a newest build older than STALE_AFTER_DAYS, a workflow the ' +
      'CI switched off). A private ' +
      "workflow's badge needs a token of someone who may see it, or the workflow's badge token in `token`. " +
      '`ETag` with `If-None-Match` → 304; `Cache-Control: public, max-age=60` (`private` when it took the ' +
      "caller's own token). Never shows the workflow's name.",
  })
  @ApiProduces('image/svg+xml')
  @ApiOkResponse({
    description: 'The badge',
    content: {
      'image/svg+xml': {
        schema: { type: 'string' },
        example:
          '<svg xmlns="http://www.w3.org/2000/svg" width="94" height="20" role="img" aria-label="tests: passing"><title>tests: passing</title>…</svg>',
      },
    },
  })
  @ApiResponse({ status: 304, description: 'Not modified: If-None-Match matched the ETag' })
  async svg(
    @Param() { wf_uuid }: WorkflowUuidParam,
    @Query() query: BadgeQuery,
    @CurrentViewer() viewer: Viewer,
    @Req() request: Request,
    @Res() response: Response,
  ): Promise<void> {
    const status = await this.status.currentBadge(wf_uuid, query.version, viewer, query.token);
    const body = renderBadgeSvg(
      badgeOf(
        status.aggregate,
        status.stale,
        query.label ?? DEFAULT_BADGE_LABEL,
        status.unbuilt,
        status.infrastructureOnly,
      ),
    );
    send(request, response, status, 'image/svg+xml; charset=utf-8', body);
  }

  @Get(':wf_uuid/badge.json')
  @ApiOperation({
    operationId: 'workflows-get-badge-json',
    summary: 'The test status of a version as a shields.io endpoint badge',
    description:
      'For `https://img.shields.io/endpoint?url=<this URL>`: `color` is `brightgreen`, `yellow`, `red` or ' +
      '`lightgrey`. Access, `ETag` and `Cache-Control` as for badge.svg.',
  })
  @ApiOkResponse({ type: ShieldsEndpointDto, description: 'The badge, for shields.io' })
  @ApiResponse({ status: 304, description: 'Not modified: If-None-Match matched the ETag' })
  async json(
    @Param() { wf_uuid }: WorkflowUuidParam,
    @Query() query: BadgeQuery,
    @CurrentViewer() viewer: Viewer,
    @Req() request: Request,
    @Res() response: Response,
  ): Promise<void> {
    const status = await this.status.currentBadge(wf_uuid, query.version, viewer, query.token);
    const body = JSON.stringify(
      badgeJson(
        badgeOf(
          status.aggregate,
          status.stale,
          query.label ?? DEFAULT_BADGE_LABEL,
          status.unbuilt,
          status.infrastructureOnly,
        ),
      ),
    );
    send(request, response, status, 'application/json; charset=utf-8', body);
  }
}

/** The badge, or 304 when the caller has it already; shared caches may keep what anybody with the URL may see. */
function send(request: Request, response: Response, status: BadgeStatus, type: string, body: string): void {
  const etag = entityTagOf(body);
  if (status.audience === 'shared') {
    // Made to be embedded (a README, another site's page): as `<img>` and by `fetch()` from anywhere.
    embeddableAnywhere(response);
    openToAllOrigins(response);
  }
  response.set({
    ETag: etag,
    'Cache-Control': `${status.audience === 'shared' ? 'public' : 'private'}, max-age=${CACHE_SECONDS}`,
  });
  if (matchesIfNoneMatch(request.get('if-none-match'), etag)) {
    response.status(304).end();
    return;
  }
  response.type(type).send(body);
}

import { IsString, Length } from 'class-validator';
import {
  applyDecorators,
  Controller,
  Get,
  Header,
  Param,
  Post,
  Query,
  Req,
  Res,
  StreamableFile,
  UseFilters,
} from '@nestjs/common';
import {
  ApiExcludeController,
  ApiExcludeEndpoint,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { ApiAuth } from '../auth/api-auth.decorator.js';
import { CurrentViewer, OptionalAuth, type Viewer } from '../auth/optional-auth.decorator.js';
import { Public } from '../auth/public.decorator.js';
import { clearSessionCookie, extractToken, setSessionCookie } from '../auth/token-carriers.js';
import { FormFields } from '../common/form-fields.js';
import { SameOriginForm } from '../common/same-origin-form.js';
import { EXAMPLE } from '../common/openapi-examples.js';
import { IsUuidParam, OptionalQueryInt, OptionalText } from '../common/validation.js';
import { DomainError } from '../common/errors/domain-error.js';
import { TestRunsService } from '../test-monitoring/index.js';
import { OptionalVersionQuery, WorkflowUuidParam } from '../workflows/index.js';
import { FAVICON } from './favicon.js';
import { HtmlErrorFilter, setFormPage } from './html-error.filter.js';
import { MAX_NEXT, StatusPagesService } from './status-pages.service.js';
import { TAGS } from '../common/api-tags.js';

/** Bounds of `refresh`: a page that reloads faster than every 10 s is load, not news. */
const REFRESH = { min: 10, max: 3600 };
const REFRESH_DESCRIPTION =
  'Reload the page every this many seconds (a `<meta http-equiv="refresh">`, no script); without it the page does not reload';

export class RefreshQuery {
  @OptionalQueryInt(REFRESH.min, REFRESH.max, REFRESH_DESCRIPTION)
  refresh?: number;
}

export class StatusListQuery extends RefreshQuery {
  @OptionalQueryInt(1, 100_000, 'The page, 50 workflows each, newest first (default 1)')
  page?: number;
}

export class StatusPageQuery extends RefreshQuery {
  @OptionalVersionQuery()
  version?: string;
}

export class RunTestsParams extends WorkflowUuidParam {
  @IsUuidParam('The test instance uuid', EXAMPLE.instanceUuid)
  instance_uuid!: string;
}

/** A build on a workflow's page (the cancel form, the page of what changed); as the API's BuildParams: each CI service numbers its builds its own way. */
export class BuildPageParams extends RunTestsParams {
  @IsString()
  @Length(1, 64)
  build_id!: string;
}

export class SignInQuery {
  @OptionalText(1, MAX_NEXT, '/status', 'The status page to show after signing in (default /status)')
  next?: string;
}

const html = (description: string) => ({
  description,
  content: {
    'text/html': { schema: { type: 'string' }, example: '<!doctype html><html lang="en">…</html>' },
  },
});

const UNAVAILABLE = {
  status: 503,
  ...html('The database did not answer in time: an HTML error page; try again after `Retry-After` seconds'),
  headers: {
    'Retry-After': {
      description: 'Seconds to wait before trying again',
      schema: { type: 'integer', example: 2 },
    },
  },
};

/**
 * What every status page is: HTML, private to the caller and never served from a cache unchecked,
 * and, in the OpenAPI document, its 200, 401 and 503.
 */
export function StatusPage(): MethodDecorator {
  return applyDecorators(
    Header('Content-Type', 'text/html; charset=utf-8'),
    Header('Cache-Control', 'private, no-cache'),
    ApiProduces('text/html'),
    ApiOkResponse(html('The page')),
    ApiResponse({ status: 401, ...html('A token or cookie that is not valid: an HTML error page') }),
    ApiResponse(UNAVAILABLE),
  );
}

/**
 * The HTML status pages (API.md 5.4): no script, no asset from another origin (styles inline,
 * charts inline SVG, badges from this service). Identity is the session cookie (or any token).
 */
@ApiTags(TAGS.badges)
@ApiAuth()
@OptionalAuth()
@UseFilters(HtmlErrorFilter)
@Controller('status')
export class StatusPagesController {
  constructor(
    private readonly pages: StatusPagesService,
    private readonly runs: TestRunsService,
  ) {}

  @Get()
  @StatusPage()
  @ApiOperation({
    operationId: 'status-page',
    summary:
      'An HTML page of the workflows GET /workflows lists for the caller, with status, badge and 30 days',
    description:
      'Server-rendered, readable without JavaScript. Each workflow with its status, badge, latest version, last ' +
      'check and a strip of the last 30 days; 50 per page (`page`). Signed in by the `session` cookie ' +
      '(POST /api/v1/auth sets it) or any token; without one, the public workflows.',
  })
  @ApiResponse({ status: 400, ...html('A bad page number: an HTML error page') })
  async overview(
    @Query() { page, refresh }: StatusListQuery,
    @CurrentViewer() viewer: Viewer,
  ): Promise<string> {
    return this.pages.overview(viewer, page ?? 1, { refresh });
  }

  // Before ':wf_uuid', which would take 'wall' for a uuid.
  @Get('wall')
  @StatusPage()
  @ApiOperation({
    operationId: 'status-page-wall',
    summary: 'An HTML page for a wall screen: every workflow the caller may see, failing first, full width',
    description:
      'The workflows of GET /status, all of them (the first 100 in this order), failing first, then some ' +
      'passing, without builds and passing, as tiles filling the width of the screen. With `refresh` the page ' +
      'reloads itself every that many seconds (10–3600), without JavaScript.',
  })
  @ApiResponse({ status: 400, ...html('A bad refresh: an HTML error page') })
  async wall(@Query() { refresh }: RefreshQuery, @CurrentViewer() viewer: Viewer): Promise<string> {
    return this.pages.wall(viewer, { refresh });
  }

  // The sign-in and sign-out forms are pages for a browser, not API operations (as GET / is not):
  // they stay out of the OpenAPI document. POST /api/v1/auth is the API's way in.

  /** The sign-in form; open to anybody, so a session that expired does not stand in the way. */
  // Before ':wf_uuid', which would take 'sign-in' for a uuid.
  @Get('sign-in')
  @Public()
  @ApiExcludeEndpoint()
  @Header('Content-Type', 'text/html; charset=utf-8')
  @Header('Cache-Control', 'no-store')
  signInForm(@Query() { next }: SignInQuery): string {
    return this.pages.signInPage(next);
  }

  /**
   * POST /api/v1/auth for a browser: the same token in the same cookie, the same limit on failures;
   * then 303 to the page asked for, or the form again (400, 403, 429) saying why.
   */
  @Post('sign-in')
  @Public()
  @SameOriginForm()
  @ApiExcludeEndpoint()
  async signIn(
    @FormFields() form: URLSearchParams,
    @Req() request: Request,
    @Res() response: Response,
  ): Promise<void> {
    const outcome = await this.pages.signIn(form, request.ip ?? 'unknown');
    response.set('Cache-Control', 'no-store');
    if (outcome.kind === 'signed-in') {
      setSessionCookie(response, outcome.token, outcome.cookie);
      response.redirect(303, outcome.next);
      return;
    }
    if (outcome.retryAfterSeconds !== undefined) {
      response.set('Retry-After', String(outcome.retryAfterSeconds));
    }
    response.status(outcome.status).type('text/html; charset=utf-8').send(outcome.page);
  }

  /** DELETE /api/v1/auth for a browser: the token revoked, the cookie cleared, 303 to /status. */
  @Post('sign-out')
  @Public()
  @SameOriginForm()
  @ApiExcludeEndpoint()
  async signOut(@Req() request: Request, @Res() response: Response): Promise<void> {
    const cookie = await this.pages.signOut(extractToken(request)?.token);
    clearSessionCookie(response, cookie);
    response.set('Cache-Control', 'no-store').redirect(303, '/status');
  }

  /**
   * "Run tests now" (API.md 11): POST /instances/{uuid}/builds for a browser, the same rules, then
   * 303 back to the workflow's page; a refusal is an HTML error page with the API's status that
   * says so, when the next run can be asked for (Retry-After), and links back to the page.
   */
  @Post(':wf_uuid/instances/:instance_uuid/builds')
  @SameOriginForm()
  @ApiExcludeEndpoint()
  async runTests(
    @Param() { wf_uuid, instance_uuid }: RunTestsParams,
    @CurrentViewer() viewer: Viewer,
    @Res() response: Response,
  ): Promise<void> {
    setFormPage(response, {
      href: `/status/${wf_uuid}`,
      label: 'Back to the workflow',
      refused: 'The tests were not started.',
      retry: 'The next run can be asked for at',
    });
    if (!viewer) {
      throw new DomainError('unauthorized', 'Sign in to start a build');
    }
    await this.runs.trigger(instance_uuid, viewer);
    response.set('Cache-Control', 'no-store').redirect(303, `/status/${wf_uuid}`);
  }

  /**
   * The cancel button beside a managed instance's queued or running build (API.md 17): POST
   * /instances/{uuid}/builds/{build_id}/cancel for a browser, the same rules, then 303 back to the
   * workflow's page; a refusal is an HTML error page that says so and links back.
   */
  @Post(':wf_uuid/instances/:instance_uuid/builds/:build_id/cancel')
  @SameOriginForm()
  @ApiExcludeEndpoint()
  async cancelBuild(
    @Param() { wf_uuid, instance_uuid, build_id }: BuildPageParams,
    @CurrentViewer() viewer: Viewer,
    @Res() response: Response,
  ): Promise<void> {
    setFormPage(response, {
      href: `/status/${wf_uuid}`,
      label: 'Back to the workflow',
      refused: 'The build was not stopped.',
      retry: 'It can be asked again at',
    });
    if (!viewer) {
      throw new DomainError('unauthorized', 'Sign in to stop a build');
    }
    await this.runs.cancel(instance_uuid, build_id, viewer);
    response.set('Cache-Control', 'no-store').redirect(303, `/status/${wf_uuid}`);
  }

  /**
   * What changed since the last passing build (API.md 16) as a page, linked beside a failed build;
   * GET /instances/{uuid}/builds/{id}/changes is the API's way to it.
   */
  @Get(':wf_uuid/builds/:instance_uuid/:build_id/changes')
  @ApiExcludeEndpoint()
  @Header('Content-Type', 'text/html; charset=utf-8')
  @Header('Cache-Control', 'private, no-cache')
  async changes(
    @Param() { wf_uuid, instance_uuid, build_id }: BuildPageParams,
    @CurrentViewer() viewer: Viewer,
  ): Promise<string> {
    return this.pages.changes(wf_uuid, instance_uuid, build_id, viewer);
  }

  @Get(':wf_uuid')
  @StatusPage()
  @ApiOperation({
    operationId: 'status-page-workflow',
    summary:
      'An HTML page of one workflow: status, 30-day chart, instances with their latest builds, versions',
    description:
      'Server-rendered, readable without JavaScript: the version (`version`, default latest), its aggregate ' +
      'status, last check and staleness, a 30-day chart (inline SVG), each test instance with its service and a ' +
      'link to the CI resource, its latest build with state, start, duration and a link to the CI run, and the ' +
      'versions. A private workflow the caller may not see is the same 404 page as an unknown uuid.',
  })
  @ApiResponse({ status: 400, ...html('A bad uuid or version: an HTML error page') })
  @ApiResponse({
    status: 404,
    ...html('No such workflow (or version) visible to the caller: an HTML 404 page'),
  })
  async workflow(
    @Param() { wf_uuid }: WorkflowUuidParam,
    @Query() { version, refresh }: StatusPageQuery,
    @CurrentViewer() viewer: Viewer,
  ): Promise<string> {
    return this.pages.workflow(wf_uuid, version, viewer, { refresh });
  }
}

/** `/favicon.ico`, which every browser asks for: the service's icon, not a 404 in the log. */
@ApiExcludeController()
@Public()
@Controller()
export class FaviconController {
  @Get('favicon.ico')
  @Header('Cache-Control', 'public, max-age=86400')
  favicon(): StreamableFile {
    return new StreamableFile(FAVICON, { type: 'image/x-icon', length: FAVICON.length });
  }
}

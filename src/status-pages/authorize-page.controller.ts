import { Controller, Get, Post, Req, Res, UseFilters } from '@nestjs/common';
import {
  ApiExcludeEndpoint,
  ApiOperation,
  ApiProduces,
  ApiQuery,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { ApiAuth } from '../auth/api-auth.decorator.js';
import { CurrentViewer, OptionalAuth, type Viewer } from '../auth/optional-auth.decorator.js';
import { TAGS } from '../common/api-tags.js';
import { baseUrlOf } from '../common/base-url.js';
import { FormFields } from '../common/form-fields.js';
import { EXAMPLE } from '../common/openapi-examples.js';
import { SameOriginForm } from '../common/same-origin-form.js';
import { AppConfig } from '../config/app-config.js';
import { AuthorizationService } from '../authorization-server/index.js';
import { HtmlErrorFilter } from './html-error.filter.js';
import { renderPage } from './templates.js';

const html = (description: string) => ({
  description,
  content: {
    'text/html': { schema: { type: 'string' }, example: '<!doctype html><html lang="en">…</html>' },
  },
});

const REDIRECT = {
  description:
    'To the sign-in form, coming back here (not signed in); or, for a request that cannot be served, to the ' +
    "application's redirect_uri with `error` (`invalid_request`, `invalid_scope`, `unsupported_response_type`), " +
    '`error_description`, `state` and `iss`',
  headers: {
    Location: {
      description: 'Where the browser goes',
      schema: {
        type: 'string',
        example: `${EXAMPLE.appRedirectUri}?error=invalid_scope&error_description=Unknown+scope&state=af0ifjsldkj`,
      },
    },
  },
};

/**
 * The authorization endpoint (RFC 6749 3.1, API.md 15), for a browser: the consent page and its
 * form, over the authorization server's rules. Errors that cannot go back to the application are
 * HTML pages.
 */
@ApiTags(TAGS.oauth2)
@ApiAuth()
@OptionalAuth()
@UseFilters(HtmlErrorFilter)
@Controller('oauth2/authorize')
export class AuthorizePageController {
  constructor(
    private readonly authorization: AuthorizationService,
    private readonly config: AppConfig,
  ) {}

  @Get()
  @ApiOperation({
    operationId: 'oauth-authorize',
    summary: 'Ask the signed-in person to let an application act for them (consent page)',
    description:
      'RFC 6749 4.1.1 with PKCE (RFC 7636): `response_type=code`, `client_id`, `redirect_uri` (one the client ' +
      'registered, the same string exactly), `scope` (space-separated, any of ' +
      '`workflow.read workflow.write testingService.read testingService.write user.profile user.workflow.read`; ' +
      'absent: all), `state`, `code_challenge` with `code_challenge_method=S256` (required for a public client). ' +
      'Signed in (the `session` cookie), the person sees the consent page; otherwise the sign-in form first, ' +
      'coming back here. An unknown client or a redirect_uri that is not registered is an error page, never a ' +
      'redirect; other faults go back to the application as `error=`.',
  })
  @ApiQuery({
    name: 'response_type',
    required: true,
    schema: { type: 'string', enum: ['code'], example: 'code' },
  })
  @ApiQuery({ name: 'client_id', required: true, schema: { type: 'string', example: EXAMPLE.appClientId } })
  @ApiQuery({
    name: 'redirect_uri',
    required: true,
    schema: { type: 'string', example: EXAMPLE.appRedirectUri },
  })
  @ApiQuery({
    name: 'scope',
    required: false,
    schema: { type: 'string', example: 'workflow.read user.profile' },
  })
  @ApiQuery({ name: 'state', required: false, schema: { type: 'string', example: 'af0ifjsldkj' } })
  @ApiQuery({
    name: 'code_challenge',
    required: false,
    schema: { type: 'string', example: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM' },
  })
  @ApiQuery({
    name: 'code_challenge_method',
    required: false,
    schema: { type: 'string', enum: ['S256'], example: 'S256' },
  })
  @ApiProduces('text/html')
  @ApiResponse({ status: 200, ...html('The consent page: what the application asks for, Approve and Deny') })
  @ApiResponse({ status: 302, ...REDIRECT })
  @ApiResponse({
    status: 400,
    ...html('An unknown client_id or a redirect_uri it did not register: an HTML page'),
  })
  @ApiResponse({ status: 401, ...html('A session that is not valid any more: an HTML page') })
  async authorize(
    @Req() request: Request,
    @Res() response: Response,
    @CurrentViewer() viewer: Viewer,
  ): Promise<void> {
    const query = new URL(request.originalUrl, 'http://query.invalid').searchParams;
    const outcome = await this.authorization.start(
      query,
      viewer,
      baseUrlOf(this.config, request),
      request.originalUrl,
    );
    response.set('Cache-Control', 'no-store');
    if (outcome.kind === 'redirect') {
      response.redirect(302, outcome.location);
      return;
    }
    allowFormTo(response, outcome.view.redirectUri);
    response
      .type('text/html; charset=utf-8')
      .send(renderPage('consent', { ...outcome.view, viewer: viewer?.username }));
  }

  /**
   * The consent page's form: the parameters of GET as the page carries them, and
   * `decision=approve` (anything else denies); 303 to the application. A form for a browser, not
   * an API operation (as the sign-in form): it stays out of the OpenAPI document.
   */
  @Post()
  @SameOriginForm()
  @ApiExcludeEndpoint()
  async decide(
    @FormFields() form: URLSearchParams,
    @Req() request: Request,
    @Res() response: Response,
    @CurrentViewer() viewer: Viewer,
  ): Promise<void> {
    const location = await this.authorization.decide(form, viewer, baseUrlOf(this.config, request));
    response.set('Cache-Control', 'no-store').redirect(303, location);
  }
}

/**
 * The consent form's answer is a redirect to the application, and browsers hold a form's redirects
 * to the page's `form-action` (helmet's is `'self'`): the page names the application's origin too,
 * else Chromium stops at the redirect and the person never gets back to the application.
 */
function allowFormTo(response: Response, redirectUri: string): void {
  const policy = response.getHeader('Content-Security-Policy');
  if (typeof policy !== 'string') {
    return;
  }
  const origin = new URL(redirectUri).origin;
  response.setHeader(
    'Content-Security-Policy',
    policy.replace(/(^|;)\s*form-action 'self'/, `$1form-action 'self' ${origin}`),
  );
}

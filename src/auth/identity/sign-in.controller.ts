import { Controller, Get, Header, Param, Query, Req, Res, UseFilters } from '@nestjs/common';
import {
  ApiDefaultResponse,
  ApiFoundResponse,
  ApiUnauthorizedResponse,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { TAGS } from '../../common/api-tags.js';
import { baseUrlOf } from '../../common/base-url.js';
import { ProblemDetailsFilter } from '../../common/filters/problem-details.filter.js';
import { AppConfig } from '../../config/app-config.js';
import { AuthService } from '../auth.service.js';
import { ApiAuth } from '../api-auth.decorator.js';
import { OptionalAuth } from '../optional-auth.decorator.js';
import { Public } from '../public.decorator.js';
import { ProblemDto, problemExample } from '../../common/dto/error-bodies.dto.js';
import { extractToken, setSessionCookie } from '../token-carriers.js';
import { LoginQuery, ProviderParam, ProvidersDto } from './dto.js';
import { SignInPageFilter } from './sign-in-page.filter.js';
import { renderPage } from '../../status-pages/templates.js';
import { SignInService, STATE_COOKIE } from './sign-in.service.js';

const page = (description: string) => ({
  description,
  content: {
    'text/html': { schema: { type: 'string' }, example: '<!doctype html><html lang="en">…</html>' },
  },
});

/** A provider that did not answer in time: the page says so, and when to try again. */
const PROVIDER_UNAVAILABLE = {
  status: 503,
  ...page('The provider did not answer in time or could not be reached: an HTML page'),
  headers: {
    'Retry-After': {
      description: 'Seconds to wait before trying again',
      schema: { type: 'integer', example: 2 },
    },
  },
};

/** Redirect-only operations: whatever is not the redirect is an HTML page saying what failed. */
const ANY_FAILURE = page(
  'Any other failure: an HTML page saying what failed, with a link back to the sign-in page',
);

/**
 * The sign-in with identity providers (API.md 15), for browsers: open routes (a session that
 * expired must not stand in the way of signing in again), whose every failure is an HTML page.
 */
@ApiTags(TAGS.auth)
@Public()
@UseFilters(SignInPageFilter)
@Controller('oauth2')
export class SignInController {
  constructor(
    private readonly signIn: SignInService,
    private readonly auth: AuthService,
    private readonly config: AppConfig,
  ) {}

  @Get('login/:provider')
  @Header('Cache-Control', 'no-store')
  @ApiProduces('text/html')
  @ApiOperation({
    operationId: 'sign-in-with-provider',
    summary: 'Sign in with an identity provider: 302 to the provider',
    description:
      'Starts the authorization code flow at the provider (state bound to a cookie, PKCE S256, and for OpenID ' +
      'Connect a nonce), valid for 10 minutes. With `link=true` and a signed-in caller (the session cookie), the ' +
      "provider's identity is added to the caller's account instead. `next`: where to go afterwards, a path on " +
      'this service only.',
  })
  @ApiFoundResponse({
    description: "To the provider's authorization endpoint; sets the `oauth2_state` cookie",
  })
  @ApiResponse({ status: 401, ...page('`link=true` without a valid session: an HTML page') })
  @ApiResponse({ status: 404, ...page('No such provider: an HTML page') })
  @ApiResponse({
    status: 502,
    ...page('The provider could not be discovered or gave a bad answer: an HTML page'),
  })
  @ApiResponse(PROVIDER_UNAVAILABLE)
  @ApiDefaultResponse(ANY_FAILURE)
  async login(
    @Param() { provider }: ProviderParam,
    @Query() { next, link }: LoginQuery,
    @Req() request: Request,
    @Res() response: Response,
  ): Promise<void> {
    const token = link ? extractToken(request) : undefined;
    const caller = token ? await this.auth.callerOf(token.token, token.via) : undefined;
    const started = await this.signIn.start(provider, {
      next,
      link: link === true,
      caller,
      baseUrl: baseUrlOf(this.config, request),
    });
    response.cookie(STATE_COOKIE, started.state, started.cookie);
    response.redirect(302, started.location);
  }

  @Get('authorized/:provider')
  @Header('Cache-Control', 'no-store')
  @ApiProduces('text/html')
  @ApiOperation({
    operationId: 'sign-in-authorized',
    summary: "The redirect URI: finishes a sign-in with the provider's answer",
    description:
      'Register `{PUBLIC_BASE_URL}/oauth2/authorized/{provider}` at the provider. Checks the state against the ' +
      "browser's cookie (once only), exchanges the code with the PKCE verifier, checks the ID token (signature by " +
      "the provider's keys, issuer, audience, expiry, nonce), finds the account by provider and subject (or makes " +
      'one, role `user`), sets the `session` cookie as `POST /api/v1/auth` does and answers a page that moves ' +
      'on to `next` at once (`<meta http-equiv="refresh">` and a Continue link; not a 302, whose chain from ' +
      "the provider's site would not carry the SameSite=Strict cookie). Every failure is an HTML page saying " +
      'what failed; no account is made or changed then.',
  })
  @ApiOkResponse({
    ...page('Signed in (or linked), with the `session` cookie: a page that moves on to `next` at once'),
    headers: {
      'Set-Cookie': {
        description: 'The `session` cookie (HttpOnly; SameSite=Strict)',
        schema: { type: 'string' },
      },
      'Referrer-Policy': {
        description: '`no-referrer`: the code and state stay here',
        schema: { type: 'string' },
      },
    },
  })
  @ApiResponse({
    status: 400,
    ...page('The state is missing, belongs to another browser, or was used or expired'),
  })
  @ApiResponse({
    status: 403,
    ...page('The provider refused (the person declined, a code used twice), or the account is disabled'),
  })
  @ApiResponse({ status: 409, ...page('Linking: the identity is linked to another account') })
  @ApiResponse({ status: 429, ...page('Too many failed sign-ins from this address; see Retry-After') })
  @ApiResponse({
    status: 502,
    ...page("The provider's answer did not pass the checks (signature, issuer, audience, expiry, nonce)"),
  })
  @ApiResponse(PROVIDER_UNAVAILABLE)
  @ApiDefaultResponse(ANY_FAILURE)
  async authorized(
    @Param() { provider }: ProviderParam,
    @Req() request: Request,
    @Res() response: Response,
  ): Promise<void> {
    const raw = request.originalUrl;
    const query = new URLSearchParams(raw.includes('?') ? raw.slice(raw.indexOf('?') + 1) : '');
    const cookies = request.cookies as Record<string, unknown> | undefined;
    const cookieState = typeof cookies?.[STATE_COOKIE] === 'string' ? cookies[STATE_COOKIE] : undefined;
    // The state is spent whatever the outcome: the cookie goes with it.
    const { maxAge: _maxAge, ...stateCookie } = this.signIn.stateCookie(provider);
    response.clearCookie(STATE_COOKIE, stateCookie);
    const finished = await this.signIn.finish(provider, query, cookieState, {
      baseUrl: baseUrlOf(this.config, request),
      address: request.ip ?? 'unknown',
    });
    setSessionCookie(response, finished.token, finished.cookie);
    // A page, not a 302: the redirect chain from the provider's site would not carry the Strict
    // session cookie to `next`; from this page it does. No referrer, set here even though helmet
    // sets it too (helmet can be left out): the code and state in this URL stay here.
    response
      .status(200)
      .type('text/html; charset=utf-8')
      .set('Referrer-Policy', 'no-referrer')
      .send(renderPage('signed-in', { title: 'Signed in', viewer: finished.username, next: finished.next }));
  }
}

/** The providers, for sign-in pages of other applications and for scripts; no token needed. */
@ApiTags(TAGS.auth)
@ApiAuth()
@OptionalAuth()
@UseFilters(ProblemDetailsFilter)
@Controller('oauth2')
export class ProvidersController {
  constructor(
    private readonly signIn: SignInService,
    private readonly config: AppConfig,
  ) {}

  @Get('providers')
  @ApiOperation({
    operationId: 'identity-providers-get',
    summary: 'The identity providers one can sign in with (IDENTITY_PROVIDERS_FILE)',
  })
  @ApiOkResponse({ type: ProvidersDto, description: 'In the order of the file; empty without one' })
  @ApiUnauthorizedResponse({
    type: ProblemDto,
    description: 'A token came and is not valid (none is needed)',
    example: problemExample(401, 'The token is not valid'),
  })
  providers(@Req() request: Request): ProvidersDto {
    const base = baseUrlOf(this.config, request);
    return {
      items: this.signIn.list().map((provider) => ({
        name: provider.name,
        label: provider.label,
        type: provider.type,
        login_url: `${base}/oauth2/login/${provider.name}`,
      })),
    };
  }
}

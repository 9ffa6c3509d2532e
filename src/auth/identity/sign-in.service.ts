import { createHash, timingSafeEqual } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { CookieOptions } from 'express';
import * as client from 'openid-client';
import { Clock } from '../../common/clock.js';
import { DomainError } from '../../common/errors/domain-error.js';
import { AppConfig } from '../../config/app-config.js';
import type { AuthUser } from '../auth-user.js';
import { AuthService } from '../auth.service.js';
import { SignInFlowEntity } from './entities/sign-in-flow.entity.js';
import { IdentitiesRepository } from './identities.repository.js';
import { IdentitiesService } from './identities.service.js';
import { SignInFailure, type IdentityProvider } from './identity-provider.js';
import { IdentityProviders } from './identity-providers.js';
import { nextPath } from './next-page.js';

/** How long a sign-in may take at the provider (API.md 15: ten minutes). */
export const FLOW_TTL_MS = 10 * 60 * 1000;

/** When to try again after a provider did not answer (the page's Retry-After). */
const PROVIDER_RETRY_SECONDS = 30;

/** The cookie that binds a sign-in's state to the browser that started it. */
export const STATE_COOKIE = 'oauth2_state';

export interface StartedSignIn {
  /** The provider's authorization URL. */
  location: string;
  /** The state, for the cookie. */
  state: string;
  cookie: CookieOptions;
}

export interface FinishedSignIn {
  token: string;
  cookie: CookieOptions;
  next: string;
  /** Whose session it is, for the page that moves on to `next`. */
  username: string;
}

/** The provider's redirect URI (registered at the provider): `{base}/oauth2/authorized/{provider}`. */
export function redirectUriOf(baseUrl: string, provider: string): string {
  return `${baseUrl}/oauth2/authorized/${provider}`;
}

function hashOf(state: string): string {
  return createHash('sha256').update(state).digest('hex');
}

/**
 * The sign-in flow (API.md 15): `/oauth2/login/{provider}` starts it (a fresh state, PKCE
 * verifier and nonce, kept in the database by the state's hash, the state also in a cookie of
 * the browser); `/oauth2/authorized/{provider}` finishes it, once: the state must be the
 * browser's own and still waiting, then the provider's answer is checked and the account found,
 * made or linked. Any copy of the service can finish what another started.
 */
@Injectable()
export class SignInService {
  constructor(
    private readonly providers: IdentityProviders,
    private readonly identities: IdentitiesService,
    private readonly repo: IdentitiesRepository,
    private readonly auth: AuthService,
    private readonly config: AppConfig,
    private readonly clock: Clock,
  ) {}

  /** The providers, in the file's order. */
  list(): IdentityProvider[] {
    return this.providers.all();
  }

  /**
   * Starts a sign-in, or with `link` the linking of an identity to the caller's account (which
   * needs a person signed in with their own credentials).
   */
  async start(
    name: string,
    options: { next?: string; link: boolean; caller?: AuthUser; baseUrl: string },
  ): Promise<StartedSignIn> {
    const provider = this.providers.get(name);
    if (options.link && (!options.caller || options.caller.registry !== undefined)) {
      throw new DomainError('unauthorized', `Sign in first to link a ${provider.label} account to yours`);
    }
    const state = client.randomState();
    const codeVerifier = client.randomPKCECodeVerifier();
    const nonce = client.randomNonce();
    const location = await this.guarded(provider, async () =>
      provider.authorizationUrl({
        redirectUri: redirectUriOf(options.baseUrl, provider.name),
        state,
        nonce,
        codeChallenge: await client.calculatePKCECodeChallenge(codeVerifier),
      }),
    );
    const flow = new SignInFlowEntity();
    Object.assign(flow, {
      stateHash: hashOf(state),
      provider: provider.name,
      codeVerifier,
      nonce,
      next: nextPath(options.next),
      linkUserId: options.link && options.caller ? options.caller.id : null,
      expiresAt: new Date(this.clock.nowMs() + FLOW_TTL_MS),
    });
    await this.repo.saveFlow(flow);
    return { location: location.toString(), state, cookie: this.stateCookie(provider.name) };
  }

  /**
   * Finishes a sign-in from the provider's redirect. `query` is the redirect's query as it came;
   * `cookieState` the browser's state cookie. Failures, at any step, are DomainErrors saying what
   * failed; none changes an account. Attempts count in the login limiter, per address.
   */
  async finish(
    name: string,
    query: URLSearchParams,
    cookieState: string | undefined,
    options: { baseUrl: string; address: string },
  ): Promise<FinishedSignIn> {
    const provider = this.providers.get(name);
    const admission = await this.auth.enterAttempt(options.address, []);
    if (!admission.admitted) {
      throw new DomainError(
        'rate_limited',
        'Too many failed sign-ins from this address; try again later',
        [],
        Math.max(1, Math.ceil(admission.retryAfterMs / 1000)),
      );
    }
    let failed = true;
    try {
      const flow = await this.flowOf(provider, query.get('state'), cookieState);
      const callback = new URL(redirectUriOf(options.baseUrl, provider.name));
      callback.search = query.toString();
      const person = await this.guarded(provider, () =>
        provider.identify(callback, {
          state: query.get('state') ?? '',
          nonce: flow.nonce,
          codeVerifier: flow.codeVerifier,
        }),
      );
      const user =
        flow.linkUserId !== null
          ? await this.identities.link(flow.linkUserId, provider, person)
          : await this.identities.signIn(provider, person);
      failed = false;
      return {
        token: this.auth.issue(user).token,
        cookie: this.auth.sessionCookieOptions(),
        next: flow.next,
        username: user.username,
      };
    } catch (error) {
      // A provider that did not answer is nobody's failed attempt.
      if (error instanceof DomainError && error.kind === 'upstream_timeout') {
        failed = false;
      }
      throw error;
    } finally {
      admission.leave(failed);
    }
  }

  /** The cookie options of the state cookie; also used, without a lifetime, to clear it. */
  stateCookie(provider: string): CookieOptions {
    return {
      httpOnly: true,
      // Lax, not Strict: the provider's redirect back is a navigation from its site, which must carry it.
      sameSite: 'lax',
      secure: this.config.auth.cookieSecure,
      path: `/oauth2/authorized/${provider}`,
      maxAge: FLOW_TTL_MS,
    };
  }

  /** The sign-in the redirect's state belongs to: the browser's own, waiting, and taken now (once). */
  private async flowOf(
    provider: IdentityProvider,
    state: string | null,
    cookieState: string | undefined,
  ): Promise<SignInFlowEntity> {
    const again = `Start again from the sign-in page.`;
    if (!state) {
      throw new DomainError(
        'invalid_input',
        `${provider.label} sent the browser back without the sign-in's state. ${again}`,
      );
    }
    if (!cookieState) {
      throw new DomainError(
        'invalid_input',
        `This browser holds no sign-in with ${provider.label} started here: it expired after 10 minutes, was finished already, or cookies are blocked. ${again}`,
      );
    }
    const given = Buffer.from(state);
    const held = Buffer.from(cookieState);
    if (given.length !== held.length || !timingSafeEqual(given, held)) {
      throw new DomainError(
        'invalid_input',
        `The answer from ${provider.label} belongs to another sign-in than the one this browser started: nothing was done. ${again}`,
      );
    }
    const flow = await this.repo.takeFlow(hashOf(state));
    if (!flow || flow.provider !== provider.name) {
      throw new DomainError(
        'invalid_input',
        `This sign-in with ${provider.label} was finished already or has expired: nothing was done. ${again}`,
      );
    }
    return flow;
  }

  /** A step at the provider, its SignInFailure turned into the DomainError of the page. */
  private async guarded<T>(provider: IdentityProvider, step: () => Promise<T>): Promise<T> {
    try {
      return await step();
    } catch (error) {
      if (!(error instanceof SignInFailure)) {
        throw error;
      }
      switch (error.reason) {
        case 'unavailable':
          throw new DomainError('upstream_timeout', error.message, [], PROVIDER_RETRY_SECONDS);
        case 'refused':
          throw new DomainError('forbidden', error.message);
        case 'invalid':
          throw new DomainError('upstream_failed', error.message);
      }
    }
  }
}

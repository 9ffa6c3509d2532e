import * as client from 'openid-client';
import type { IdentityProviderSettings } from '../../config/identity-providers-file.js';
import { OutboundError } from '../../common/net/http-client.js';
import {
  SignInFailure,
  type AuthorizationRequest,
  type CallbackChecks,
  type ExternalIdentity,
  type IdentityProvider,
} from './identity-provider.js';
import { isLoopbackHttp } from './provider-fetch.js';

/**
 * What the three types share: the authorization code flow with state and PKCE S256, done by
 * openid-client (a certified relying party); each type says how it finds its server and who the
 * person is. Every failure becomes a SignInFailure naming the provider, never a token or code.
 */
export abstract class OAuth2Provider implements IdentityProvider {
  abstract readonly type: string;
  readonly name: string;
  readonly label: string;
  readonly registryUri?: string;

  constructor(protected readonly settings: IdentityProviderSettings) {
    this.name = settings.name;
    this.label = settings.label;
  }

  /** The client of the provider's server (discovered, or from known endpoints). */
  protected abstract configuration(): Promise<client.Configuration>;

  /** The scopes asked for. */
  protected abstract readonly scope: string;

  /** Whether the provider returns an ID token (then a nonce is sent and the ID token is required). */
  protected readonly openId: boolean = false;

  /** Who signed in, from the token endpoint's answer (its ID token, or the provider's API). */
  protected abstract person(
    config: client.Configuration,
    tokens: client.TokenEndpointResponse & client.TokenEndpointResponseHelpers,
  ): Promise<ExternalIdentity>;

  async authorizationUrl(request: AuthorizationRequest): Promise<URL> {
    const config = await this.guarded(() => this.configuration());
    const parameters: Record<string, string> = {
      redirect_uri: request.redirectUri,
      scope: this.scope,
      state: request.state,
      code_challenge: request.codeChallenge,
      code_challenge_method: 'S256',
    };
    if (this.openId) {
      parameters.nonce = request.nonce;
    }
    return client.buildAuthorizationUrl(config, parameters);
  }

  async identify(callback: URL, checks: CallbackChecks): Promise<ExternalIdentity> {
    return this.guarded(async () => {
      const config = await this.configuration();
      const tokens = await client.authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: checks.codeVerifier,
        expectedState: checks.state,
        ...(this.openId ? { expectedNonce: checks.nonce } : {}),
      });
      return this.person(config, tokens);
    });
  }

  /** openid-client's configuration options for this provider: its deadline, and http only on loopback. */
  protected prepare(config: client.Configuration, server: URL): client.Configuration {
    config.timeout = Math.ceil(this.settings.timeoutMs / 1000);
    if (isLoopbackHttp(server)) {
      client.allowInsecureRequests(config);
    }
    return config;
  }

  /** Reads a JSON resource of the provider's API with the access token; SignInFailure when it is not one. */
  protected async resource(config: client.Configuration, accessToken: string, url: URL): Promise<unknown> {
    const response = await client.fetchProtectedResource(
      config,
      accessToken,
      url,
      'GET',
      undefined,
      new Headers({ accept: 'application/json' }),
    );
    if (response.status !== 200) {
      throw new SignInFailure(
        'invalid',
        `${this.label} answered ${response.status} when asked who signed in (${url.pathname})`,
      );
    }
    try {
      return await response.json();
    } catch {
      throw new SignInFailure(
        'invalid',
        `${this.label} answered ${url.pathname} with something that is not JSON`,
      );
    }
  }

  /** Runs a step against the provider, turning every failure into a SignInFailure that says what failed. */
  protected async guarded<T>(step: () => Promise<T>): Promise<T> {
    try {
      return await step();
    } catch (error) {
      throw this.failure(error);
    }
  }

  private failure(error: unknown): SignInFailure {
    if (error instanceof SignInFailure) {
      return error;
    }
    const outbound = causeOf(error, OutboundError);
    if (outbound) {
      return new SignInFailure('unavailable', `${this.label} could not be reached: ${outbound.message}`);
    }
    if (error instanceof client.AuthorizationResponseError) {
      return new SignInFailure(
        'refused',
        `${this.label} refused the sign-in: ${describe(error.error, error.error_description)}`,
      );
    }
    if (error instanceof client.ResponseBodyError) {
      return new SignInFailure(
        'refused',
        `${this.label} refused the sign-in: ${describe(error.error, error.error_description)}`,
      );
    }
    if (
      error instanceof client.ClientError &&
      (error.code === 'OAUTH_TIMEOUT' || error.code === 'OAUTH_ABORT')
    ) {
      return new SignInFailure('unavailable', `${this.label} did not answer in time`);
    }
    const detail = error instanceof Error ? detailOf(error) : 'an unexpected answer';
    return new SignInFailure(
      'invalid',
      `${this.label} gave an answer that did not pass the checks: ${detail}`,
    );
  }
}

/** The provider's error code and its description, bounded (a provider's text is shown on a page). */
function describe(code: string, description: string | undefined): string {
  const text = description ? `${code} (${description})` : code;
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

/** An error's message with the messages of its causes: openid-client's outer message is generic. */
function detailOf(error: Error): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current instanceof Error && depth < 4; depth++) {
    if (!parts.includes(current.message)) {
      parts.push(current.message);
    }
    current = current.cause;
  }
  return parts.join(': ').slice(0, 300);
}

function causeOf<E extends Error>(error: unknown, type: abstract new (...args: never[]) => E): E | undefined {
  let current: unknown = error;
  for (let depth = 0; current instanceof Error && depth < 6; depth++) {
    if (current instanceof type) {
      return current;
    }
    current = current.cause;
  }
  return undefined;
}

import { Injectable } from '@nestjs/common';
import type { AuthUser } from '../auth/auth-user.js';
import { OAuthError } from '../auth/oauth2/oauth-error.js';
import { parseScopes } from '../auth/oauth2/token-request.js';
import { APPLICATION_SCOPES, isRegistryClientScope } from '../auth/scopes.js';
import { Clock } from '../common/clock.js';
import { DomainError } from '../common/errors/domain-error.js';
import { AppSecretHasher, CODE_CHALLENGE, generateCode } from './app-secrets.js';
import { ClientsService } from './clients.service.js';
import type { OAuthClientEntity } from './entities/oauth-client.entity.js';
import { GrantsRepository } from './grants.repository.js';
import { SCOPE_DESCRIPTIONS } from './scope-descriptions.js';

/** How long an authorization code may wait for its exchange (API.md 15). */
export const CODE_SECONDS = 60;
const MAX_STATE = 512;

/** What the consent page shows, and the fields its form carries back. */
export interface ConsentView {
  client: string;
  /** Who registered the application. */
  owner: string;
  redirectUri: string;
  scopes: { name: string; description: string }[];
  fields: { name: string; value: string }[];
}

/** What GET /oauth2/authorize answers: the browser sent on, or the consent page. */
export type AuthorizeOutcome =
  { kind: 'redirect'; location: string } | { kind: 'consent'; view: ConsentView };

/** The parameters of an authorization request this service will act on (RFC 6749 4.1.1, RFC 7636 4.3). */
interface AuthorizationRequest {
  client: OAuthClientEntity;
  redirectUri: string;
  scopes: string[];
  state?: string;
  codeChallenge?: string;
}

type Checked = { kind: 'valid'; request: AuthorizationRequest } | { kind: 'refused'; location: string };

/** The parameters the consent form carries back, as the request named them. */
const FORWARDED = [
  'response_type',
  'client_id',
  'redirect_uri',
  'scope',
  'state',
  'code_challenge',
  'code_challenge_method',
];

/**
 * The authorization endpoint (RFC 6749 3.1, 4.1; API.md 15): checks a request, shows the signed-in
 * user what the application asks for, and on approval issues a code bound to the client, the
 * redirect URI and the PKCE challenge. A request whose client or redirect URI is not right is an
 * error page (RFC 6749 4.1.2.1: never a redirect to an unchecked address); any other fault goes
 * back to the application as `error=` on its redirect URI.
 */
@Injectable()
export class AuthorizationService {
  constructor(
    private readonly clients: ClientsService,
    private readonly grants: GrantsRepository,
    private readonly hasher: AppSecretHasher,
    private readonly clock: Clock,
  ) {}

  /**
   * GET /oauth2/authorize: what the consent page shows a signed-in viewer, the sign-in form first for
   * anybody else (coming back to `here`). Throws DomainError invalid_input when the client or the
   * redirect URI is not right.
   */
  async start(
    params: URLSearchParams,
    viewer: AuthUser | undefined,
    issuer: string,
    here: string,
  ): Promise<AuthorizeOutcome> {
    const checked = await this.check(params, issuer);
    if (checked.kind === 'refused') {
      return { kind: 'redirect', location: checked.location };
    }
    if (!viewer) {
      return { kind: 'redirect', location: `/status/sign-in?next=${encodeURIComponent(here)}` };
    }
    const { client, redirectUri, scopes } = checked.request;
    return {
      kind: 'consent',
      view: {
        client: client.name,
        owner: client.user?.username ?? 'a former user',
        redirectUri,
        scopes: scopes.map((name) => ({
          name,
          description: isRegistryClientScope(name) ? (SCOPE_DESCRIPTIONS[name] ?? name) : name,
        })),
        fields: FORWARDED.flatMap((name) => {
          const value = params.get(name);
          return value === null ? [] : [{ name, value }];
        }),
      },
    };
  }

  /**
   * POST /oauth2/authorize, the consent form: the same checks again, then the application's
   * redirect URI with a code (approved) or `error=access_denied`. Throws DomainError unauthorized
   * without a signed-in viewer, invalid_input as `start` does.
   */
  async decide(form: URLSearchParams, viewer: AuthUser | undefined, issuer: string): Promise<string> {
    if (!viewer) {
      throw new DomainError('unauthorized', 'Sign in to approve an application');
    }
    const checked = await this.check(form, issuer);
    if (checked.kind === 'refused') {
      return checked.location;
    }
    const { client, redirectUri, scopes, state, codeChallenge } = checked.request;
    if (form.get('decision') !== 'approve') {
      return back(redirectUri, {
        error: 'access_denied',
        error_description: 'The user denied the request',
        state,
        iss: issuer,
      });
    }
    const code = generateCode();
    const now = Math.floor(this.clock.nowMs() / 1000) * 1000;
    await this.grants.create({
      oauthClientId: client.id,
      userId: viewer.id,
      scopes: scopes.join(' '),
      redirectUri,
      codeHash: this.hasher.hash(code),
      codeChallenge: codeChallenge ?? null,
      createdAt: new Date(now),
      expiresAt: new Date(now + CODE_SECONDS * 1000),
    });
    return back(redirectUri, { code, state, iss: issuer });
  }

  private async check(params: URLSearchParams, issuer: string): Promise<Checked> {
    const one = (name: string): string | undefined => {
      const values = params.getAll(name);
      return values.length === 1 ? values[0] : undefined;
    };
    const clientId = one('client_id');
    const client = clientId ? await this.clients.find(clientId) : null;
    if (!client) {
      throw new DomainError('invalid_input', 'the application (client_id) is not known to this service.');
    }
    const redirectUri = one('redirect_uri');
    if (redirectUri === undefined || !client.redirectUris.includes(redirectUri)) {
      throw new DomainError(
        'invalid_input',
        'redirect_uri is not one the application registered (it must be the same string exactly).',
      );
    }
    const state = one('state');
    const refuse = (error: string, description: string): Checked => ({
      kind: 'refused',
      location: back(redirectUri, { error, error_description: description, state, iss: issuer }),
    });
    const repeated = [...new Set(params.keys())].find((name) => params.getAll(name).length > 1);
    if (repeated !== undefined) {
      return refuse('invalid_request', `The parameter ${repeated.slice(0, 64)} is given more than once`);
    }
    if (one('response_type') !== 'code') {
      return refuse('unsupported_response_type', 'response_type must be code');
    }
    if (state !== undefined && state.length > MAX_STATE) {
      return refuse('invalid_request', `state is longer than ${MAX_STATE} characters`);
    }
    let scopes: string[];
    try {
      scopes = parseScopes(one('scope'), APPLICATION_SCOPES);
    } catch (error) {
      if (error instanceof OAuthError) {
        return refuse('invalid_scope', error.message);
      }
      throw error;
    }
    const codeChallenge = one('code_challenge');
    const method = one('code_challenge_method');
    if (codeChallenge === undefined) {
      if (!client.confidential) {
        return refuse('invalid_request', 'code_challenge is required for a public client (PKCE, S256)');
      }
      if (method !== undefined) {
        return refuse('invalid_request', 'code_challenge_method without code_challenge');
      }
    } else {
      if (method !== 'S256') {
        return refuse('invalid_request', 'code_challenge_method must be S256');
      }
      if (!CODE_CHALLENGE.test(codeChallenge)) {
        return refuse(
          'invalid_request',
          'code_challenge must be the base64url S256 of the verifier (43 characters)',
        );
      }
    }
    return { kind: 'valid', request: { client, redirectUri, scopes, state, codeChallenge } };
  }
}

/** The registered redirect URI, exactly as registered, with the reply's parameters added to its query. */
function back(redirectUri: string, reply: Record<string, string | undefined>): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(reply)) {
    if (value !== undefined) {
      query.append(name, value);
    }
  }
  return `${redirectUri}${redirectUri.includes('?') ? '&' : '?'}${query.toString()}`;
}

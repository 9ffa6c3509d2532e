import type { IdentityProviderSettings } from '../../config/identity-providers-file.js';

/** Who signed in, as the provider says: its subject (what finds the account) and what they are called. */
export interface ExternalIdentity {
  /** The provider's stable id of the person (`sub`, GitHub's numeric id, SEEK's person id). */
  subject: string;
  username?: string;
  /** Only an address the provider says is verified. */
  email?: string;
}

/** What the service sends the browser to the provider with; all of it made fresh for each sign-in. */
export interface AuthorizationRequest {
  redirectUri: string;
  state: string;
  /** Sent only by providers that return an ID token (oidc). */
  nonce: string;
  /** PKCE S256 challenge of the verifier kept with the state. */
  codeChallenge: string;
}

/** What the callback is checked against: the values kept with the state. */
export interface CallbackChecks {
  state: string;
  nonce: string;
  codeVerifier: string;
}

/**
 * Why a sign-in at a provider failed, in words for the person at the browser. `unavailable`: the
 * provider did not answer (down, slow, unreachable); `refused`: it answered with an error (the
 * person declined, the code was used or expired); `invalid`: its answer did not pass the checks
 * (signature, issuer, audience, expiry, nonce) or could not be read.
 */
export class SignInFailure extends Error {
  constructor(
    readonly reason: 'unavailable' | 'refused' | 'invalid',
    message: string,
  ) {
    super(message);
    this.name = 'SignInFailure';
  }
}

/**
 * A sign-in provider of IDENTITY_PROVIDERS_FILE (API.md 15): the authorization code flow with
 * state and PKCE S256 at the provider, and who the person is. Every call to the provider is
 * bounded by its `timeout_seconds`; every failure is a SignInFailure naming the provider.
 */
export interface IdentityProvider {
  readonly name: string;
  readonly type: string;
  readonly label: string;
  /**
   * The uri of the registry (API.md 10.1) this provider is the same installation as, when it is
   * one (a SEEK installation): its people are that registry's users.
   */
  readonly registryUri?: string;

  /** The provider's authorization URL for this request. Throws SignInFailure (an oidc issuer not discovered). */
  authorizationUrl(request: AuthorizationRequest): Promise<URL>;

  /**
   * Finishes the flow from the provider's redirect (`callback`: the redirect URI with the query the
   * provider added): checks it against the state, exchanges the code (with the PKCE verifier),
   * checks the tokens and reads the person. Throws SignInFailure.
   */
  identify(callback: URL, checks: CallbackChecks): Promise<ExternalIdentity>;
}

/** Makes the providers of one `type:`; checks that type's settings at start-up. */
export interface IdentityProviderFactory {
  readonly type: string;
  /** Throws ConfigMistakes naming each bad setting of the provider. */
  create(settings: IdentityProviderSettings): IdentityProvider;
}

export const IDENTITY_PROVIDER_FACTORIES = Symbol('IDENTITY_PROVIDER_FACTORIES');

import { Injectable } from '@nestjs/common';
import * as client from 'openid-client';
import type { IdentityProviderSettings } from '../../config/identity-providers-file.js';
import type { ExternalIdentity, IdentityProvider, IdentityProviderFactory } from './identity-provider.js';
import { OAuth2Provider } from './oauth2-provider.js';
import { isLoopbackHttp, ProviderFetch } from './provider-fetch.js';
import { ProviderSettingsReader } from './provider-settings.js';

/** How long a discovered configuration is used before the issuer is asked again. */
const DISCOVERY_TTL_MS = 60 * 60 * 1000;

/**
 * Any OpenID Connect provider by its issuer (LS Login, EGI Check-in, Keycloak, Google, Microsoft
 * Entra): discovery at `{issuer}/.well-known/openid-configuration` on first use (so a provider that
 * is down at start-up only fails its own sign-ins), a nonce, and the ID token checked by
 * openid-client: the signature against the provider's JWKS (also for an ID token that came
 * straight from the token endpoint: `alg: none` and HMAC-signed tokens never pass), `iss`,
 * `aud`, `exp` and `nonce`.
 */
export class OidcProvider extends OAuth2Provider {
  readonly type = 'oidc';
  protected readonly scope: string;
  protected override readonly openId = true;
  private discovered?: { config: Promise<client.Configuration>; at: number };

  constructor(
    settings: IdentityProviderSettings,
    private readonly issuer: URL,
    scope: string,
    private readonly fetch: client.CustomFetch,
    private readonly nowMs: () => number = Date.now,
  ) {
    super(settings);
    this.scope = scope;
  }

  protected configuration(): Promise<client.Configuration> {
    const now = this.nowMs();
    if (!this.discovered || now - this.discovered.at > DISCOVERY_TTL_MS) {
      const config = this.discover();
      this.discovered = { config, at: now };
      // A failed discovery is tried again by the next sign-in, not remembered.
      config.catch(() => {
        if (this.discovered?.config === config) {
          this.discovered = undefined;
        }
      });
    }
    return this.discovered.config;
  }

  private async discover(): Promise<client.Configuration> {
    const config = await client.discovery(
      this.issuer,
      this.settings.clientId,
      this.settings.clientSecret,
      undefined,
      {
        [client.customFetch]: this.fetch,
        timeout: Math.ceil(this.settings.timeoutMs / 1000),
        // openid-client recognises allowInsecureRequests itself in this list (and then lets the
        // discovery request use http too): only ever for a loopback issuer.
        execute: [
          ...(isLoopbackHttp(this.issuer) ? [client.allowInsecureRequests] : []),
          client.enableNonRepudiationChecks,
        ],
      },
    );
    config.timeout = Math.ceil(this.settings.timeoutMs / 1000);
    return config;
  }

  protected async person(
    config: client.Configuration,
    tokens: client.TokenEndpointResponse & client.TokenEndpointResponseHelpers,
  ): Promise<ExternalIdentity> {
    const claims = tokens.claims();
    if (!claims) {
      throw new Error('the token endpoint returned no ID token');
    }
    let username = text(claims.preferred_username);
    let email = claims.email_verified === true ? text(claims.email) : undefined;
    // Some providers (LS Login among them) put the profile in the userinfo answer only.
    if ((username === undefined || email === undefined) && config.serverMetadata().userinfo_endpoint) {
      const info = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
      username ??= text(info.preferred_username) ?? text(info.name);
      email ??= info.email_verified === true ? text(info.email) : undefined;
    }
    return { subject: claims.sub, username: username ?? text(claims.name), email };
  }
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

@Injectable()
export class OidcProviderFactory implements IdentityProviderFactory {
  readonly type = 'oidc';

  constructor(private readonly fetch: ProviderFetch) {}

  create(settings: IdentityProviderSettings): IdentityProvider {
    const reader = new ProviderSettingsReader(settings);
    reader.only('issuer', 'scopes');
    const issuer = reader.url('issuer', undefined, true);
    const scope = reader.scopes('scopes', 'openid profile email');
    if (!scope.split(' ').includes('openid')) {
      reader.mistake(`'scopes' must include openid`);
    }
    reader.done();
    const url = new URL(issuer);
    return new OidcProvider(settings, url, scope, this.fetch.bound([url.host], settings.timeoutMs));
  }
}

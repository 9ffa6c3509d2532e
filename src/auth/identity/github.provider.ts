import { Injectable } from '@nestjs/common';
import * as client from 'openid-client';
import { isRecord } from '../../common/is-record.js';
import type { IdentityProviderSettings } from '../../config/identity-providers-file.js';
import {
  SignInFailure,
  type ExternalIdentity,
  type IdentityProvider,
  type IdentityProviderFactory,
} from './identity-provider.js';
import { OAuth2Provider } from './oauth2-provider.js';
import { ProviderFetch } from './provider-fetch.js';
import { ProviderSettingsReader } from './provider-settings.js';

/**
 * GitHub OAuth apps (github.com, or GitHub Enterprise by `url` and `api_url`): the web flow at
 * `{url}/login/oauth/authorize` and `{url}/login/oauth/access_token` (with PKCE), the person from
 * `GET {api_url}/user` (subject: the numeric id, which survives a rename; username: the login)
 * and a verified primary e-mail from `GET {api_url}/user/emails`.
 */
export class GithubProvider extends OAuth2Provider {
  readonly type = 'github';
  protected readonly scope = 'read:user user:email';
  private readonly config: client.Configuration;

  constructor(
    settings: IdentityProviderSettings,
    private readonly url: string,
    private readonly apiUrl: string,
    fetch: client.CustomFetch,
  ) {
    super(settings);
    const server = new URL(url);
    this.config = this.prepare(
      new client.Configuration(
        {
          issuer: url,
          authorization_endpoint: `${url}/login/oauth/authorize`,
          token_endpoint: `${url}/login/oauth/access_token`,
        },
        settings.clientId,
        settings.clientSecret,
      ),
      server,
    );
    this.config[client.customFetch] = errorsAsErrors(fetch);
  }

  protected configuration(): Promise<client.Configuration> {
    return Promise.resolve(this.config);
  }

  protected async person(
    config: client.Configuration,
    tokens: client.TokenEndpointResponse,
  ): Promise<ExternalIdentity> {
    const user = await this.resource(config, tokens.access_token, new URL(`${this.apiUrl}/user`));
    if (!isRecord(user) || (typeof user.id !== 'number' && typeof user.id !== 'string')) {
      throw new SignInFailure('invalid', `${this.label} answered /user without the user's id`);
    }
    return {
      subject: String(user.id),
      username: typeof user.login === 'string' ? user.login : undefined,
      email: await this.verifiedEmail(config, tokens.access_token),
    };
  }

  /** The verified primary address; none when GitHub does not show it (a token without user:email). */
  private async verifiedEmail(
    config: client.Configuration,
    accessToken: string,
  ): Promise<string | undefined> {
    try {
      const emails = await this.resource(config, accessToken, new URL(`${this.apiUrl}/user/emails`));
      const listed: unknown[] = Array.isArray(emails) ? emails : [];
      const primary = listed.find(
        (entry) => isRecord(entry) && entry.primary === true && entry.verified === true,
      );
      return isRecord(primary) && typeof primary.email === 'string' ? primary.email : undefined;
    } catch (error) {
      if (error instanceof SignInFailure) {
        return undefined;
      }
      throw error;
    }
  }
}

/**
 * GitHub answers a token request that fails (a code used twice, expired or wrong) with 200 and
 * `{"error": …}`: seen as the 400 it is, openid-client reports the error instead of a missing token.
 */
function errorsAsErrors(fetch: client.CustomFetch): client.CustomFetch {
  return async (url, options) => {
    const response = await fetch(url, options);
    if (response.status !== 200 || !url.endsWith('/login/oauth/access_token')) {
      return response;
    }
    const text = await response.text();
    let body: unknown;
    try {
      body = JSON.parse(text) as unknown;
    } catch {
      body = undefined;
    }
    const status = isRecord(body) && typeof body.error === 'string' ? 400 : 200;
    return new Response(text, { status, headers: response.headers });
  };
}

@Injectable()
export class GithubProviderFactory implements IdentityProviderFactory {
  readonly type = 'github';

  constructor(private readonly fetch: ProviderFetch) {}

  create(settings: IdentityProviderSettings): IdentityProvider {
    const reader = new ProviderSettingsReader(settings);
    reader.only('url', 'api_url');
    const url = reader.url('url', 'https://github.com');
    // github.com's API is a host of its own; GitHub Enterprise Server's is under /api/v3.
    const apiUrl = reader.url(
      'api_url',
      url === 'https://github.com' ? 'https://api.github.com' : `${url}/api/v3`,
    );
    reader.done();
    const hosts = [new URL(url).host, new URL(apiUrl).host];
    return new GithubProvider(settings, url, apiUrl, this.fetch.bound(hosts, settings.timeoutMs));
  }
}

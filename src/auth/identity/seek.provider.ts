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
 * A WorkflowHub or other SEEK installation as an OAuth2 provider (SEEK's Doorkeeper set-up:
 * `{url}/oauth/authorize`, `{url}/oauth/token`, scope `read`, PKCE), the person from
 * `GET {url}/people/current?format=json` (JSON:API: subject `data.id`, SEEK's person id, which
 * is the id its LifeMonitor client gives for its users; username from the person's title or
 * name). SEEK shows no e-mail address, only its SHA-1. Its `url` is the `uri` of the registry
 * (API.md 10.1) of the same installation, when there is one: one account per person for both.
 */
export class SeekProvider extends OAuth2Provider {
  readonly type = 'seek';
  protected readonly scope = 'read';
  override readonly registryUri: string;
  private readonly config: client.Configuration;

  constructor(
    settings: IdentityProviderSettings,
    private readonly url: string,
    fetch: client.CustomFetch,
  ) {
    super(settings);
    this.registryUri = url;
    this.config = this.prepare(
      new client.Configuration(
        {
          issuer: url,
          authorization_endpoint: `${url}/oauth/authorize`,
          token_endpoint: `${url}/oauth/token`,
        },
        settings.clientId,
        settings.clientSecret,
      ),
      new URL(url),
    );
    this.config[client.customFetch] = fetch;
  }

  protected configuration(): Promise<client.Configuration> {
    return Promise.resolve(this.config);
  }

  protected async person(
    config: client.Configuration,
    tokens: client.TokenEndpointResponse,
  ): Promise<ExternalIdentity> {
    const answer = await this.resource(
      config,
      tokens.access_token,
      new URL(`${this.url}/people/current?format=json`),
    );
    const data = isRecord(answer) ? answer.data : undefined;
    if (!isRecord(data) || (typeof data.id !== 'string' && typeof data.id !== 'number')) {
      throw new SignInFailure('invalid', `${this.label} answered /people/current without the person's id`);
    }
    const attributes = isRecord(data.attributes) ? data.attributes : {};
    const named = [attributes.first_name, attributes.last_name].filter(
      (part): part is string => typeof part === 'string' && part.trim() !== '',
    );
    const title =
      typeof attributes.title === 'string' && attributes.title.trim() !== '' ? attributes.title : undefined;
    return { subject: String(data.id), username: title ?? (named.length > 0 ? named.join(' ') : undefined) };
  }
}

@Injectable()
export class SeekProviderFactory implements IdentityProviderFactory {
  readonly type = 'seek';

  constructor(private readonly fetch: ProviderFetch) {}

  create(settings: IdentityProviderSettings): IdentityProvider {
    const reader = new ProviderSettingsReader(settings);
    reader.only('url');
    const url = reader.url('url');
    reader.done();
    return new SeekProvider(settings, url, this.fetch.bound([new URL(url).host], settings.timeoutMs));
  }
}

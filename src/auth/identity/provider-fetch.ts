import { Injectable } from '@nestjs/common';
import type { CustomFetch } from 'openid-client';
import { AppConfig } from '../../config/app-config.js';
import { OutboundError, readBody, sendRequest } from '../../common/net/http-client.js';

/** The largest answer read from a provider: discovery documents, key sets and user records are small. */
export const MAX_PROVIDER_ANSWER_BYTES = 256 * 1024;

/** Loopback hosts, where a provider may be plain http (a test's, a developer's). */
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

export function isLoopbackHttp(url: URL): boolean {
  return url.protocol === 'http:' && LOOPBACK.has(url.hostname);
}

/**
 * The HTTP client of the sign-in providers, as openid-client's `customFetch`: the service's
 * outbound client, so that every call has a deadline, a bounded answer and the private-address
 * guard. The hosts the operator named in IDENTITY_PROVIDERS_FILE (an issuer, a url) may be on
 * the private network (a Keycloak inside the site); any other host a provider's answers lead to
 * (endpoints from a discovery document) is held to ALLOW_PRIVATE_NETWORK_LINKS.
 */
@Injectable()
export class ProviderFetch {
  constructor(private readonly config: AppConfig) {}

  bound(trustedHosts: readonly string[], timeoutMs: number): CustomFetch {
    const allowAnywhere = this.config.registry.allowPrivateNetworkLinks;
    return async (url, options) => {
      const target = new URL(url);
      const response = await sendRequest(url, {
        method: options.method,
        headers: options.headers,
        body: bodyOf(options.body),
        timeoutMs,
        allowPrivate: allowAnywhere || trustedHosts.includes(target.host),
        signal: options.signal,
      });
      const bytes = await readBody(response.body, MAX_PROVIDER_ANSWER_BYTES);
      const headers = new Headers();
      for (const [name, value] of Object.entries(response.headers)) {
        for (const item of Array.isArray(value) ? value : value === undefined ? [] : [value]) {
          headers.append(name, item);
        }
      }
      if (response.status < 200 || response.status > 599) {
        throw new OutboundError('unreachable', `${target.host} answered with HTTP status ${response.status}`);
      }
      const empty = [204, 205, 304].includes(response.status);
      return new Response(empty ? null : new Uint8Array(bytes), { status: response.status, headers });
    };
  }
}

function bodyOf(body: unknown): string | Buffer | undefined {
  if (body === undefined || body === null) {
    return undefined;
  }
  if (typeof body === 'string') {
    return body;
  }
  if (body instanceof URLSearchParams) {
    return body.toString();
  }
  if (body instanceof Uint8Array) {
    return Buffer.from(body);
  }
  if (body instanceof ArrayBuffer) {
    return Buffer.from(body);
  }
  throw new TypeError('a request body the provider client cannot send');
}

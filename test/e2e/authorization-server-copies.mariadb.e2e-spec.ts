import { ServiceCopies } from '../support/service-copies.js';
import type { ServiceProcess } from '../support/service-process.js';
import {
  authorizeQuery,
  consent,
  pkcePair,
  signInCookie,
  tokenRequest,
  type RegisteredClient,
} from '../support/oauth-app.js';

const CALLBACK = 'https://app.example.org/oauth/callback';

/**
 * Two copies of the built service on one MariaDB share the authorization server (API.md 15): a
 * step on one copy is honoured by the other, and a code or refresh token spent on both at once
 * gives tokens once. Neither copy logs a code, a token or a secret.
 */
describe('the authorization server on two copies (mariadb)', () => {
  let copies: ServiceCopies;
  let a: ServiceProcess;
  let b: ServiceProcess;
  let client: RegisteredClient;
  let cookie: string;
  const secrets: string[] = [];

  beforeAll(async () => {
    copies = await ServiceCopies.prepare('authz-copies');
    [a, b] = await copies.start({ LOG_LEVEL: 'debug' });
    const admin = await copies.adminToken();
    const made = await fetch(`${a.url}/users/current/clients`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Shared', redirect_uris: [CALLBACK], confidential: true }),
    });
    expect(made.status).toBe(201);
    client = (await made.json()) as RegisteredClient;
    secrets.push(client.client_secret ?? '');
    cookie = await signInCookie(b.url, 'admin', 'admin-password');
    secrets.push(cookie.slice('session='.length));
  }, 120_000);

  afterAll(async () => {
    await copies?.close();
  });

  const exchange = (copy: ServiceProcess, code: string, verifier: string) =>
    tokenRequest(copy.url, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: CALLBACK,
      code_verifier: verifier,
      client_id: client.client_id,
      client_secret: client.client_secret ?? '',
    });

  it('takes a consent given on one copy, the code and the refresh on the other', async () => {
    const pkce = pkcePair();
    const redirect = await consent(b.url, cookie, authorizeQuery(client, pkce));
    const code = redirect.searchParams.get('code') ?? '';
    secrets.push(code);
    const tokens = await exchange(a, code, pkce.verifier);
    expect(tokens.status).toBe(200);
    const access = tokens.body.access_token as string;
    secrets.push(access, tokens.body.refresh_token as string);
    const read = await fetch(`${b.url}/workflows`, { headers: { authorization: `Bearer ${access}` } });
    expect(read.status).toBe(200);
    const refreshed = await tokenRequest(b.url, {
      grant_type: 'refresh_token',
      refresh_token: tokens.body.refresh_token as string,
      client_id: client.client_id,
      client_secret: client.client_secret ?? '',
    });
    expect(refreshed.status).toBe(200);
    secrets.push(refreshed.body.access_token as string, refreshed.body.refresh_token as string);
  });

  it('issues tokens once for a code spent on both copies at the same moment, and revokes them for the replay', async () => {
    for (let round = 0; round < 5; round++) {
      const pkce = pkcePair();
      const redirect = await consent(a.url, cookie, authorizeQuery(client, pkce));
      const code = redirect.searchParams.get('code') ?? '';
      secrets.push(code);
      const replies = await Promise.all([exchange(a, code, pkce.verifier), exchange(b, code, pkce.verifier)]);
      const statuses = replies.map((reply) => reply.status).sort();
      expect({ round, statuses }).toEqual({ round, statuses: [200, 400] });
      const won = replies.find((reply) => reply.status === 200);
      const lost = replies.find((reply) => reply.status === 400);
      expect(lost?.body.error).toBe('invalid_grant');
      const access = won?.body.access_token as string;
      secrets.push(access);
      // The losing copy saw a replay: what the code gave is revoked (RFC 6749 4.1.2).
      const read = await fetch(`${a.url}/workflows`, { headers: { authorization: `Bearer ${access}` } });
      expect(read.status).toBe(401);
    }
  });

  it('rotates a refresh token spent on both copies at the same moment once, revoking the grant for the second', async () => {
    const pkce = pkcePair();
    const redirect = await consent(a.url, cookie, authorizeQuery(client, pkce));
    const tokens = await exchange(b, redirect.searchParams.get('code') ?? '', pkce.verifier);
    const refresh = tokens.body.refresh_token as string;
    secrets.push(refresh, tokens.body.access_token as string);
    const replies = await Promise.all(
      [a, b].map((copy) =>
        tokenRequest(copy.url, {
          grant_type: 'refresh_token',
          refresh_token: refresh,
          client_id: client.client_id,
          client_secret: client.client_secret ?? '',
        }),
      ),
    );
    expect(replies.map((reply) => reply.status).sort()).toEqual([200, 400]);
    const rotated = replies.find((reply) => reply.status === 200)?.body;
    secrets.push(rotated?.access_token as string, rotated?.refresh_token as string);
    const next = await tokenRequest(a.url, {
      grant_type: 'refresh_token',
      refresh_token: rotated?.refresh_token as string,
      client_id: client.client_id,
      client_secret: client.client_secret ?? '',
    });
    expect(next.body.error).toBe('invalid_grant');
  });

  it('logs no code, token or secret on either copy', () => {
    const output = [a, b].map((copy) => copy.output()).join('\n');
    expect(output.length).toBeGreaterThan(0);
    for (const secret of secrets.filter((value) => value !== '')) {
      expect({ secret, logged: output.includes(secret) }).toEqual({ secret, logged: false });
    }
  });
});

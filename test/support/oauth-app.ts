import { createHash, randomBytes } from 'node:crypto';

/**
 * An application using the service as its OAuth2 authorization server, as a real one does it:
 * over HTTP, with PKCE, following the browser's redirects by hand (fetch with `redirect: manual`).
 * `base` is the copy of the service each step goes to, so that two copies can share one flow.
 */
export interface Pkce {
  verifier: string;
  challenge: string;
}

export function pkcePair(): Pkce {
  const verifier = randomBytes(48).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export interface RegisteredClient {
  client_id: string;
  client_secret?: string;
  redirect_uris: string[];
}

/** The query of an authorization request. */
export function authorizeQuery(
  client: RegisteredClient,
  pkce: Pkce | undefined,
  extra: Record<string, string> = {},
): string {
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: client.client_id,
    redirect_uri: client.redirect_uris[0],
    state: randomBytes(8).toString('hex'),
    ...(pkce ? { code_challenge: pkce.challenge, code_challenge_method: 'S256' } : {}),
    ...extra,
  });
  return query.toString();
}

/** The session cookie of a person signed in through the sign-in form (as a browser does it). */
export async function signInCookie(base: string, username: string, password: string): Promise<string> {
  const reply = await fetch(`${base}/status/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: base },
    body: new URLSearchParams({ username, password, next: '/status' }).toString(),
  });
  const cookie = reply.headers.getSetCookie().find((line) => line.startsWith('session='));
  if (reply.status !== 303 || !cookie) {
    throw new Error(`signing in ${username} answered ${reply.status}`);
  }
  return cookie.split(';')[0];
}

/** The hidden fields of the consent page's form, as the browser would send them back. */
export function consentFields(page: string): URLSearchParams {
  const form = /<form class="consent"[\s\S]*?<\/form>/.exec(page)?.[0] ?? '';
  const fields = new URLSearchParams();
  for (const match of form.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    fields.append(match[1], unescapeHtml(match[2]));
  }
  return fields;
}

function unescapeHtml(text: string): string {
  return text
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/** The browser approving (or denying) on the consent page of `query`: the redirect's Location. */
export async function consent(
  base: string,
  cookie: string,
  query: string,
  decision: 'approve' | 'deny' = 'approve',
): Promise<URL> {
  const page = await fetch(`${base}/oauth2/authorize?${query}`, { headers: { cookie }, redirect: 'manual' });
  if (page.status !== 200) {
    throw new Error(`the consent page answered ${page.status}: ${page.headers.get('location') ?? ''}`);
  }
  const fields = consentFields(await page.text());
  fields.append('decision', decision);
  const decided = await fetch(`${base}/oauth2/authorize`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie, origin: base, 'content-type': 'application/x-www-form-urlencoded' },
    body: fields.toString(),
  });
  if (decided.status !== 303) {
    throw new Error(`the consent form answered ${decided.status}`);
  }
  return new URL(decided.headers.get('location') ?? '');
}

export interface TokenReply {
  status: number;
  body: Record<string, unknown>;
}

/** POST /oauth2/token with a form. */
export async function tokenRequest(
  base: string,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<TokenReply> {
  const reply = await fetch(`${base}/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields).toString(),
  });
  return { status: reply.status, body: (await reply.json()) as Record<string, unknown> };
}

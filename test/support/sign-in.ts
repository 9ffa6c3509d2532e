import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type TestAgent from 'supertest/lib/agent.js';

/** Writes an IDENTITY_PROVIDERS_FILE; `remove` deletes it. */
export function writeProvidersFile(yaml: string): { path: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'providers-'));
  const path = join(dir, 'providers.yaml');
  writeFileSync(path, yaml);
  return { path, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A cookie of a reply's Set-Cookie lines: its value and its attributes as written. */
export function cookieOf(
  setCookie: string[] | string | undefined,
  name: string,
): { value: string; line: string } | undefined {
  const lines = Array.isArray(setCookie) ? setCookie : setCookie ? [setCookie] : [];
  const line = lines.find((candidate) => candidate.startsWith(`${name}=`));
  return line === undefined ? undefined : { value: /^[^=]+=([^;]*)/.exec(line)?.[1] ?? '', line };
}

/** A sign-in started at the service: where the browser is sent, and its state cookie. */
export interface Started {
  location: URL;
  state: string;
}

/** `GET /oauth2/login/{provider}{query}` as a browser sends it; expects the 302 to the provider. */
export async function startSignIn(
  http: TestAgent,
  provider: string,
  query = '',
  cookie?: string,
): Promise<Started> {
  const request = http.get(`/oauth2/login/${provider}${query}`);
  if (cookie !== undefined) {
    request.set('Cookie', cookie);
  }
  const reply = await request;
  if (reply.status !== 302) {
    throw new Error(
      `sign-in with ${provider} answered ${reply.status}: ${/<p>([^<]*)<\/p>\s*<p><a/.exec(reply.text)?.[1] ?? reply.text.slice(0, 500)}`,
    );
  }
  const state = cookieOf(reply.headers['set-cookie'], 'oauth2_state');
  if (!state) {
    throw new Error('no oauth2_state cookie');
  }
  return { location: new URL(String(reply.headers.location)), state: state.value };
}

/** The provider's redirect back, sent to the service as the browser would (with `stateCookie`, when given). */
export function finishSignIn(http: TestAgent, callback: URL, stateCookie?: string) {
  const request = http.get(`${callback.pathname}${callback.search}`);
  if (stateCookie !== undefined) {
    request.set('Cookie', `oauth2_state=${stateCookie}`);
  }
  return request;
}

/** The Location a browser reaches at the provider when it follows a 302 (the fakes answer at once). */
export async function followAtProvider(location: URL): Promise<URL> {
  const reply = await fetch(location, { redirect: 'manual' });
  const next = reply.headers.get('location');
  if (reply.status !== 302 || next === null) {
    throw new Error(`the provider answered ${reply.status}: ${(await reply.text()).slice(0, 300)}`);
  }
  return new URL(next);
}

const ENTITIES: Record<string, string> = {
  '&amp;': '&',
  '&lt;': '<',
  '&gt;': '>',
  '&quot;': '"',
  '&#39;': "'",
};

/**
 * Where the page that ends a sign-in moves on to (API.md 15.1): the URL of its refresh, which its
 * Continue link must agree with, as a browser reads the attribute; one not escaped is refused.
 */
export function landingOf(reply: { status: number; text: string }): string {
  const refresh = /<meta http-equiv="refresh" content="0;url=([^"]*)">/.exec(reply.text)?.[1];
  const link = /<a href="([^"]*)">Continue<\/a>/.exec(reply.text)?.[1];
  if (
    reply.status !== 200 ||
    refresh === undefined ||
    refresh !== link ||
    /['<>]|&(?!amp;|lt;|gt;|quot;|#39;)/.test(refresh)
  ) {
    throw new Error(`not the signed-in page (${reply.status}): ${reply.text.slice(0, 300)}`);
  }
  return refresh.replace(/&(?:amp|lt|gt|quot|#39);/g, (entity) => ENTITIES[entity]);
}

import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  decodeJwt,
  decodeProtectedHeader,
  exportJWK,
  generateKeyPair,
  importJWK,
  SignJWT,
  UnsecuredJWT,
  type JWK,
  type JWTPayload,
} from 'jose';
import { Provider, type Account } from 'oidc-provider';

/** How the ID token of the next token answers is spoilt, to see the service refuse it. */
export type IdTokenTampering =
  /** Signed by a key that is not in the provider's JWKS (same `kid`). */
  | 'foreign-key'
  /** `alg: none`, no signature. */
  | 'alg-none'
  /** HS256, keyed with the client's secret. */
  | 'hs256'
  /** Validly signed, from another issuer. */
  | 'other-issuer'
  /** Validly signed, for another client. */
  | 'other-audience'
  /** Validly signed, expired an hour ago. */
  | 'expired'
  /** Validly signed, with another nonce. */
  | 'other-nonce'
  /** Not JSON at all. */
  | 'garbage';

export interface OpClient {
  client_id: string;
  client_secret: string;
  redirect_uris: string[];
}

/** What a person at the provider is called; a login not listed gets `preferred_username` = login. */
export interface OpPerson {
  preferred_username?: string;
  email?: string;
  email_verified?: boolean;
}

/**
 * A real OpenID Provider on 127.0.0.1: npm's oidc-provider (OpenID Certified), with its
 * development login and consent pages, its own RSA key (so that a test can sign a spoilt ID token
 * as the provider would), and switches that spoil the token answer (`tamper`), slow it down
 * (`tokenDelayMs`) or stop the provider (`stop`).
 */
export class OidcOp {
  readonly people = new Map<string, OpPerson>();
  tamper?: IdTokenTampering;
  tokenDelayMs = 0;
  /** The token endpoint's answers as the provider made them (before any spoiling), in order. */
  readonly tokenAnswers: string[] = [];
  private server?: http.Server;
  private base = '';
  private privateJwk?: JWK;
  private client?: OpClient;

  get issuer(): string {
    if (this.base === '') {
      throw new Error('the OpenID provider is not started');
    }
    return this.base;
  }

  /**
   * Starts on `port` (0: any), for `client`. Started again after `stop`, it keeps its key (and,
   * on the same port, its issuer): a client that cached its keys goes on verifying.
   */
  async start(client: OpClient, port = 0): Promise<string> {
    this.client = client;
    const server = http.createServer();
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    this.server = server;
    this.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    if (!this.privateJwk) {
      const { privateKey } = await generateKeyPair('RS256', { extractable: true });
      this.privateJwk = { ...(await exportJWK(privateKey)), kid: 'op-key-1', alg: 'RS256', use: 'sig' };
    }
    const provider = new Provider(this.base, {
      clients: [{ ...client, grant_types: ['authorization_code'], response_types: ['code'] }],
      jwks: { keys: [this.privateJwk] },
      cookies: { keys: ['a-cookie-key-of-the-test-provider'] },
      claims: {
        openid: ['sub'],
        profile: ['preferred_username', 'name'],
        email: ['email', 'email_verified'],
      },
      pkce: { required: () => true },
      ttl: {
        AuthorizationCode: 60,
        Interaction: 600,
        Session: 3600,
        Grant: 3600,
        AccessToken: 600,
        IdToken: 600,
      },
      findAccount: (_ctx: unknown, sub: string): Account => ({
        accountId: sub,
        claims: () => {
          const person = this.people.get(sub) ?? {};
          return {
            sub,
            preferred_username: person.preferred_username ?? sub,
            email: person.email ?? `${sub}@op.example`,
            email_verified: person.email_verified ?? true,
          };
        },
      }),
    });
    const handle = provider.callback();
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      void this.handle(req, res, handle);
    });
    return this.base;
  }

  /** Stops answering: every connection dropped, the port closed. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server) {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    }
  }

  private async handle(
    req: IncomingMessage,
    res: ServerResponse,
    provider: (req: IncomingMessage, res: ServerResponse) => void,
  ): Promise<void> {
    const isToken = req.method === 'POST' && (req.url ?? '').startsWith('/token');
    if (isToken && this.tokenDelayMs > 0) {
      await new Promise((resolve) => setTimeout(resolve, this.tokenDelayMs));
      if (res.destroyed) {
        return;
      }
    }
    const tamper = this.tamper;
    if (isToken) {
      const end = res.end.bind(res);
      // The provider's answer, recorded (and spoilt when asked) on its way out.
      res.end = ((chunk?: unknown) => {
        const text = Buffer.isBuffer(chunk) || typeof chunk === 'string' ? chunk.toString() : '';
        this.tokenAnswers.push(text);
        void (tamper ? this.spoil(text, tamper) : Promise.resolve(text)).then((body) => {
          res.setHeader('content-length', Buffer.byteLength(body));
          end(body);
        });
        return res;
      }) as typeof res.end;
    }
    provider(req, res);
  }

  private async spoil(text: string, tamper: IdTokenTampering): Promise<string> {
    if (tamper === 'garbage') {
      return '<html><body>Gateway error</body></html>';
    }
    const answer = JSON.parse(text) as { id_token?: string };
    if (!answer.id_token || !this.privateJwk || !this.client) {
      return text;
    }
    const header = decodeProtectedHeader(answer.id_token);
    const claims: JWTPayload = decodeJwt(answer.id_token);
    const now = Math.floor(Date.now() / 1000);
    const sign = async (payload: JWTPayload, key: JWK | Uint8Array, alg: string): Promise<string> =>
      new SignJWT(payload)
        .setProtectedHeader({ alg, kid: header.kid, typ: 'JWT' })
        .sign(key instanceof Uint8Array ? key : await importPrivate(key));
    switch (tamper) {
      case 'foreign-key': {
        const { privateKey } = await generateKeyPair('RS256', { extractable: true });
        answer.id_token = await sign(claims, await exportJWK(privateKey), 'RS256');
        break;
      }
      case 'alg-none':
        answer.id_token = new UnsecuredJWT(claims).encode();
        break;
      case 'hs256':
        answer.id_token = await sign(claims, new TextEncoder().encode(this.client.client_secret), 'HS256');
        break;
      case 'other-issuer':
        answer.id_token = await sign({ ...claims, iss: 'https://op.evil.example' }, this.privateJwk, 'RS256');
        break;
      case 'other-audience':
        answer.id_token = await sign({ ...claims, aud: 'another-client' }, this.privateJwk, 'RS256');
        break;
      case 'expired':
        answer.id_token = await sign(
          { ...claims, iat: now - 7200, exp: now - 3600 },
          this.privateJwk,
          'RS256',
        );
        break;
      case 'other-nonce':
        answer.id_token = await sign({ ...claims, nonce: 'not-the-nonce' }, this.privateJwk, 'RS256');
        break;
    }
    return JSON.stringify(answer);
  }
}

function importPrivate(jwk: JWK): ReturnType<typeof importJWK> {
  return importJWK(jwk, 'RS256');
}

/** A browser's cookies for one host, enough for the provider's login and consent pages. */
class CookieJar {
  private readonly cookies = new Map<string, string>();

  take(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair.indexOf('=');
      const name = pair.slice(0, at).trim();
      const value = pair.slice(at + 1).trim();
      if (value === '' || /max-age=0|expires=thu, 01 jan 1970/i.test(line)) {
        this.cookies.delete(name);
      } else {
        this.cookies.set(name, value);
      }
    }
  }

  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

/**
 * A person at the provider's pages, driven over HTTP as a browser would: from the authorization
 * URL through the login form (any password) and the consent form, to the redirect back to the
 * client, whose URL is returned (not followed). `abort` answers the login page with "cancel".
 */
export async function signInAtOp(
  authorizationUrl: string,
  login: string,
  options: { abort?: boolean } = {},
): Promise<URL> {
  const jar = new CookieJar();
  const origin = new URL(authorizationUrl).origin;
  let url = authorizationUrl;
  let method = 'GET';
  let body: string | undefined;
  for (let step = 0; step < 20; step++) {
    const response = await fetch(url, {
      method,
      redirect: 'manual',
      headers: {
        cookie: jar.header(),
        ...(body === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
      },
      body,
    });
    jar.take(response);
    const location = response.headers.get('location');
    if (location) {
      const next = new URL(location, url);
      if (next.origin !== origin) {
        return next;
      }
      url = next.toString();
      method = 'GET';
      body = undefined;
      continue;
    }
    const page = await response.text();
    if (response.status !== 200) {
      throw new Error(`the provider answered ${response.status}: ${page.slice(0, 300)}`);
    }
    const action = /<form[^>]*action="([^"]+)"/.exec(page)?.[1];
    const prompt = /name="prompt" value="([a-z]+)"/.exec(page)?.[1];
    if (!action || !prompt) {
      throw new Error(`no interaction form on the provider's page: ${page.slice(0, 300)}`);
    }
    if (options.abort) {
      url = new URL(`${action.replace(/&amp;/g, '&')}/abort`, url).toString();
      method = 'GET';
      body = undefined;
      continue;
    }
    url = new URL(action.replace(/&amp;/g, '&'), url).toString();
    method = 'POST';
    body = new URLSearchParams(
      prompt === 'login' ? { prompt, login, password: 'any password' } : { prompt },
    ).toString();
  }
  throw new Error('the provider did not send the browser back within 20 steps');
}

import { createHash, randomBytes } from 'node:crypto';

/** An authorization code an OAuth2 fake handed out, and what it was for. */
interface IssuedCode<P> {
  person: P;
  clientId: string;
  redirectUri: string;
  challenge: string;
}

/**
 * The authorization server's side of the code flow with PKCE S256 as GitHub and Doorkeeper do
 * it, for the fakes of those providers: codes are single use, bound to the client, the redirect
 * URI and the challenge; access tokens name a person.
 */
export class OAuthCodes<P> {
  private readonly codes = new Map<string, IssuedCode<P>>();
  readonly tokens = new Map<string, P>();

  /** The redirect back to the client with a new code (or with `error` when the person declines). */
  authorize(query: URLSearchParams, person: P | undefined): string {
    const redirect = new URL(query.get('redirect_uri') ?? '');
    const state = query.get('state');
    if (state !== null) {
      redirect.searchParams.set('state', state);
    }
    if (person === undefined) {
      redirect.searchParams.set('error', 'access_denied');
      redirect.searchParams.set('error_description', 'The user has denied your application access.');
      return redirect.toString();
    }
    const code = randomBytes(10).toString('hex');
    this.codes.set(code, {
      person,
      clientId: query.get('client_id') ?? '',
      redirectUri: query.get('redirect_uri') ?? '',
      challenge: query.get('code_challenge_method') === 'S256' ? (query.get('code_challenge') ?? '') : '',
    });
    redirect.searchParams.set('code', code);
    return redirect.toString();
  }

  /** The person of a token request's code, or why not (`invalid_grant`, `invalid_client`). */
  exchange(
    form: URLSearchParams,
    clients: ReadonlyMap<string, string>,
  ): { token: string; person: P } | { error: string; description: string } {
    const clientId = form.get('client_id') ?? '';
    if (clients.get(clientId) === undefined || clients.get(clientId) !== form.get('client_secret')) {
      return { error: 'invalid_client', description: 'Client authentication failed.' };
    }
    const code = form.get('code') ?? '';
    const issued = this.codes.get(code);
    this.codes.delete(code);
    const verifier = form.get('code_verifier') ?? '';
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    if (
      !issued ||
      issued.clientId !== clientId ||
      issued.redirectUri !== form.get('redirect_uri') ||
      issued.challenge !== challenge
    ) {
      return { error: 'invalid_grant', description: 'The code passed is incorrect or expired.' };
    }
    const token = randomBytes(16).toString('hex');
    this.tokens.set(token, issued.person);
    return { token, person: issued.person };
  }

  /** The person of a `Bearer` (or GitHub's `token`) authorization header. */
  personOf(authorization: string | string[] | undefined): P | undefined {
    const token = /^(?:Bearer|token) (\S+)$/i.exec(String(authorization ?? ''))?.[1];
    return token === undefined ? undefined : this.tokens.get(token);
  }
}

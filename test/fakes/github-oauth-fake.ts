import { FakeServer, type FakeAnswer, type FakeRequest } from './fake-server.js';
import { OAuthCodes } from './oauth-codes.js';

/** A GitHub user as `GET /user` shows them, with their addresses for `GET /user/emails`. */
export interface GithubUser {
  id: number;
  login: string;
  emails: { email: string; primary: boolean; verified: boolean }[];
}

/**
 * GitHub's OAuth app web flow and user API on 127.0.0.1, as GitHub documents them ("Authorizing
 * OAuth apps", REST "Users" and "Emails"), laid out as GitHub Enterprise Server is (the web at
 * the root, the API under `/api/v3`):
 * - `GET /login/oauth/authorize` → 302 back to `redirect_uri` with `code` and `state` (the person
 *   who "approved" is `signedIn`; none: `error=access_denied`);
 * - `POST /login/oauth/access_token` (form, `Accept: application/json`) → `{access_token,
 *   token_type: "bearer", scope}`; a wrong, used or expired code is 200 `{"error":
 *   "bad_verification_code", …}` as GitHub answers it;
 * - `GET /api/v3/user`, `GET /api/v3/user/emails` with `Authorization: Bearer <token>`, else 401.
 */
export class GithubOAuthFake extends FakeServer {
  signedIn?: GithubUser;
  readonly clients = new Map<string, string>();
  private readonly codes = new OAuthCodes<GithubUser>();

  constructor() {
    super('GitHub OAuth');
    this.etags = false;
  }

  protected route(request: FakeRequest): FakeAnswer {
    const path = request.segments.join('/');
    if (request.method === 'GET' && path === 'login/oauth/authorize') {
      return {
        status: 302,
        text: '',
        headers: { location: this.codes.authorize(request.query, this.signedIn) },
      };
    }
    if (request.method === 'POST' && path === 'login/oauth/access_token') {
      const outcome = this.codes.exchange(new URLSearchParams(request.body), this.clients);
      if ('error' in outcome) {
        const error =
          outcome.error === 'invalid_grant' ? 'bad_verification_code' : 'incorrect_client_credentials';
        return {
          status: 200,
          body: {
            error,
            error_description: outcome.description,
            error_uri:
              'https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors',
          },
        };
      }
      return {
        status: 200,
        body: { access_token: outcome.token, token_type: 'bearer', scope: 'read:user,user:email' },
      };
    }
    const user = this.codes.personOf(request.headers.authorization);
    if (request.method === 'GET' && (path === 'api/v3/user' || path === 'api/v3/user/emails')) {
      if (!user) {
        return {
          status: 401,
          body: { message: 'Requires authentication', documentation_url: 'https://docs.github.com/rest' },
        };
      }
      return path === 'api/v3/user'
        ? { status: 200, body: { login: user.login, id: user.id, type: 'User', name: null, email: null } }
        : { status: 200, body: user.emails.map((email) => ({ ...email, visibility: null })) };
    }
    return { status: 404, body: { message: 'Not Found' } };
  }
}

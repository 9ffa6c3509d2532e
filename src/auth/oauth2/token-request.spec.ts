import { REGISTRY_CLIENT_SCOPES } from '../scopes.js';
import { OAuthError } from './oauth-error.js';
import { parseScopes, parseTokenRequest } from './token-request.js';

const FORM = 'application/x-www-form-urlencoded';
const form = (text: string): Buffer => Buffer.from(text);
const basic = (id: string, secret: string): string =>
  `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

function refusal(run: () => unknown): { code: string; status: number } {
  try {
    run();
  } catch (error) {
    if (error instanceof OAuthError) {
      return { code: error.code, status: error.status };
    }
    throw error;
  }
  throw new Error('not refused');
}

describe('parseTokenRequest (RFC 6749 3.2, 2.3.1)', () => {
  it('reads the grant type, the client from the body, and the other parameters', () => {
    const request = parseTokenRequest(
      FORM,
      form('grant_type=authorization_code&client_id=a&client_secret=b&code=c%2Bd'),
      undefined,
    );
    expect(request.grantType).toBe('authorization_code');
    expect(request.client).toEqual({ clientId: 'a', clientSecret: 'b', basic: false });
    expect(request.param('code')).toBe('c+d');
    expect(request.param('scope')).toBeUndefined();
  });

  it('reads HTTP Basic credentials, each part form-decoded', () => {
    const request = parseTokenRequest(
      `${FORM}; charset=utf-8`,
      form('grant_type=client_credentials'),
      basic('my%20client', 'a%3Ab'),
    );
    expect(request.client).toEqual({ clientId: 'my client', clientSecret: 'a:b', basic: true });
  });

  it('takes a public client by its client_id alone, and a request without any client', () => {
    expect(parseTokenRequest(FORM, form('grant_type=refresh_token&client_id=a'), undefined).client).toEqual({
      clientId: 'a',
      clientSecret: undefined,
      basic: false,
    });
    expect(parseTokenRequest(FORM, form('grant_type=client_credentials'), undefined).client).toBeUndefined();
  });

  it.each([
    [
      'a JSON body',
      'application/json',
      '{"grant_type":"client_credentials"}',
      undefined,
      'invalid_request',
      400,
    ],
    ['no grant type', FORM, 'client_id=a&client_secret=b', undefined, 'invalid_request', 400],
    [
      'a parameter twice',
      FORM,
      'grant_type=client_credentials&client_id=a&client_id=a&client_secret=b',
      undefined,
      'invalid_request',
      400,
    ],
    [
      'a code twice',
      FORM,
      'grant_type=authorization_code&client_id=a&code=x&code=y',
      undefined,
      'invalid_request',
      400,
    ],
    [
      'two ways of authenticating',
      FORM,
      'grant_type=client_credentials&client_id=a&client_secret=b',
      basic('a', 'b'),
      'invalid_request',
      400,
    ],
    [
      'a secret without a client',
      FORM,
      'grant_type=client_credentials&client_secret=b',
      undefined,
      'invalid_client',
      401,
    ],
    [
      'an empty secret',
      FORM,
      'grant_type=client_credentials&client_id=a&client_secret=',
      undefined,
      'invalid_client',
      401,
    ],
    [
      'a Basic header without a colon',
      FORM,
      'grant_type=client_credentials',
      `Basic ${Buffer.from('ab').toString('base64')}`,
      'invalid_client',
      401,
    ],
  ])('refuses %s', (_label, type, body, authorization, code, status) => {
    expect(refusal(() => parseTokenRequest(type, form(body), authorization))).toEqual({ code, status });
  });
});

describe('parseScopes (RFC 6749 3.3)', () => {
  it('takes none as every allowed scope, and keeps the order asked without repeats', () => {
    expect(parseScopes('', REGISTRY_CLIENT_SCOPES)).toEqual([...REGISTRY_CLIENT_SCOPES]);
    expect(parseScopes(undefined, ['a', 'b'])).toEqual(['a', 'b']);
    expect(parseScopes('workflow.read registry.info workflow.read', REGISTRY_CLIENT_SCOPES)).toEqual([
      'workflow.read',
      'registry.info',
    ]);
  });

  it('refuses a scope that is not allowed as invalid_scope', () => {
    expect(refusal(() => parseScopes('root', REGISTRY_CLIENT_SCOPES))).toEqual({
      code: 'invalid_scope',
      status: 400,
    });
    expect(refusal(() => parseScopes('registry.info', ['workflow.read']))).toEqual({
      code: 'invalid_scope',
      status: 400,
    });
  });
});

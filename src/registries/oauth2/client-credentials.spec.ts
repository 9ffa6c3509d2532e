import { REGISTRY_CLIENT_SCOPES } from '../../auth/scopes.js';
import { OAuthError, parseScopes, parseTokenRequest } from './client-credentials.js';

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

describe('parseTokenRequest (RFC 6749 4.4, 2.3.1)', () => {
  it('reads the client from the body, with every scope when none is asked for', () => {
    expect(
      parseTokenRequest(FORM, form('grant_type=client_credentials&client_id=a&client_secret=b'), undefined),
    ).toEqual({
      clientId: 'a',
      clientSecret: 'b',
      scopes: [...REGISTRY_CLIENT_SCOPES],
      basic: false,
    });
  });

  it('reads HTTP Basic credentials, each part form-decoded, and the scopes asked for', () => {
    const request = parseTokenRequest(
      `${FORM}; charset=utf-8`,
      form('grant_type=client_credentials&scope=workflow.read+registry.info+workflow.read'),
      basic('my%20client', 'a%3Ab'),
    );
    expect(request).toEqual({
      clientId: 'my client',
      clientSecret: 'a:b',
      scopes: ['workflow.read', 'registry.info'],
      basic: true,
    });
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
      'two ways of authenticating',
      FORM,
      'grant_type=client_credentials&client_id=a&client_secret=b',
      basic('a', 'b'),
      'invalid_request',
      400,
    ],
    [
      'another grant',
      FORM,
      'grant_type=authorization_code&client_id=a&client_secret=b',
      undefined,
      'unsupported_grant_type',
      400,
    ],
    ['no client', FORM, 'grant_type=client_credentials', undefined, 'invalid_client', 401],
    ['no secret', FORM, 'grant_type=client_credentials&client_id=a', undefined, 'invalid_client', 401],
    [
      'a Basic header without a colon',
      FORM,
      'grant_type=client_credentials',
      `Basic ${Buffer.from('ab').toString('base64')}`,
      'invalid_client',
      401,
    ],
    [
      'an unknown scope',
      FORM,
      'grant_type=client_credentials&client_id=a&client_secret=b&scope=root',
      undefined,
      'invalid_scope',
      400,
    ],
  ])('refuses %s', (_label, type, body, authorization, code, status) => {
    expect(refusal(() => parseTokenRequest(type, form(body), authorization))).toEqual({ code, status });
  });

  it('takes an empty scope as every scope', () => {
    expect(parseScopes('')).toEqual([...REGISTRY_CLIENT_SCOPES]);
  });
});

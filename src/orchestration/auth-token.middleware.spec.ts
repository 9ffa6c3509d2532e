import type { Request, Response } from 'express';
import { AuthTokenMiddleware } from './auth-token.middleware.js';

interface Sent {
  url: string;
  body?: unknown;
  headers?: Record<string, string>;
  cookies?: Record<string, string>;
}

/** The request as the guard then sees it. */
function pass(sent: Sent): Request {
  const request = {
    url: sent.url,
    baseUrl: '',
    path: sent.url.split('?')[0],
    body: sent.body,
    headers: { ...sent.headers },
    cookies: sent.cookies ?? {},
  } as Request;
  let called = false;
  new AuthTokenMiddleware().use(request, {} as Response, () => {
    called = true;
  });
  expect(called).toBe(true);
  return request;
}

describe('AuthTokenMiddleware', () => {
  it('moves auth_token from the JSON body into X-Auth-Token and removes it from the body', () => {
    const request = pass({ url: '/api/v1/vm/start', body: { name: 'x', auth_token: 'tok' } });
    expect(request.headers['x-auth-token']).toBe('tok');
    expect(request.body).toEqual({ name: 'x' });
  });

  it('moves auth_token from the query and removes it from the URL, keeping the other members as sent', () => {
    const request = pass({ url: '/api/v1/nodes.json?a=1&auth_token=t%2Bk&b=x+y' });
    expect(request.headers['x-auth-token']).toBe('t+k');
    expect(request.url).toBe('/api/v1/nodes.json?a=1&b=x+y');
    expect(pass({ url: '/api/v1/nodes?auth_token=tok' }).url).toBe('/api/v1/nodes');
  });

  it('prefers the body to the query, and removes both', () => {
    const request = pass({ url: '/api/v1/vm/stop?auth_token=q', body: { node: '1', auth_token: 'b' } });
    expect(request.headers['x-auth-token']).toBe('b');
    expect(request.url).toBe('/api/v1/vm/stop');
    expect(request.body).toEqual({ node: '1' });
  });

  it.each<[string, Partial<Sent>]>([
    ['a Bearer token', { headers: { authorization: 'Bearer header-token' } }],
    ['an X-Auth-Token header', { headers: { 'x-auth-token': 'header-token' } }],
    ['the session cookie', { cookies: { session: 'cookie-token' } }],
  ])('leaves %s in charge, still removing auth_token', (_case, carrier) => {
    const request = pass({ url: '/api/v1/nodes?auth_token=q', body: { auth_token: 'b' }, ...carrier });
    expect(request.headers['x-auth-token']).toBe(carrier.headers?.['x-auth-token']);
    expect(request.url).toBe('/api/v1/nodes');
    expect(request.body).toEqual({});
  });

  it('ignores an auth_token that is not a non-empty string', () => {
    expect(pass({ url: '/api/v1/nodes', body: { auth_token: 42 } }).headers['x-auth-token']).toBeUndefined();
    expect(pass({ url: '/api/v1/nodes?auth_token=' }).headers['x-auth-token']).toBeUndefined();
  });

  it('leaves areas A and B alone', () => {
    const request = pass({ url: '/users/current?auth_token=q', body: { auth_token: 'b' } });
    expect(request.headers['x-auth-token']).toBeUndefined();
    expect(request.url).toBe('/users/current?auth_token=q');
    expect(pass({ url: '/api/v1/auth?auth_token=q' }).url).toBe('/api/v1/auth?auth_token=q');
  });
});

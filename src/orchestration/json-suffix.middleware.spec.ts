import type { Request, Response } from 'express';
import { JsonSuffixMiddleware } from './json-suffix.middleware.js';

/** The URL a request continues with after the middleware. */
function rewritten(url: string, baseUrl = ''): string {
  const path = url.split('?')[0];
  const request = { url, baseUrl, path } as Request;
  let called = false;
  new JsonSuffixMiddleware().use(request, {} as Response, () => {
    called = true;
  });
  expect(called).toBe(true);
  return request.url;
}

describe('JsonSuffixMiddleware', () => {
  it.each([
    ['/api/v1.json', '/api/v1'],
    ['/api/v1/nodes.json', '/api/v1/nodes'],
    ['/api/v1/nodes/fake_driver.json', '/api/v1/nodes/fake_driver'],
    ['/api/v1/vm/action/assign.json?x=1', '/api/v1/vm/action/assign?x=1'],
    ['/api/v1/nope.json', '/api/v1/nope'],
  ])('removes .json from the area-C path %s', (url, expected) => {
    expect(rewritten(url)).toBe(expected);
  });

  it.each([
    '/api/v1/nodes',
    '/api/v1/nodes/.json',
    '/api/v1/auth.json',
    '/api/v1/users/1.json',
    '/workflows/x.json',
    '/api/v1/nodes?format=.json',
  ])('leaves %s alone', (url) => {
    expect(rewritten(url)).toBe(url);
  });

  it('works on the part of the URL it sees when mounted under a prefix', () => {
    expect(rewritten('/nodes.json?a=b', '/api/v1')).toBe('/nodes?a=b');
  });
});

import type { Request } from 'express';
import { extractApiKey, extractToken } from './token-carriers.js';

const KEY = `wfk_${'k'.repeat(43)}`;

function request(headers: Record<string, string | string[]>, cookies: Record<string, string> = {}): Request {
  return { headers, cookies } as Partial<Request> as Request;
}

describe('extractApiKey', () => {
  it('finds a key in Authorization: ApiKey (any case) and in X-API-Key', () => {
    expect(extractApiKey(request({ authorization: `ApiKey ${KEY}` }))).toEqual({ kind: 'key', key: KEY });
    expect(extractApiKey(request({ authorization: `apikey   ${KEY} ` }))).toEqual({ kind: 'key', key: KEY });
    expect(extractApiKey(request({ 'x-api-key': ` ${KEY}` }))).toEqual({ kind: 'key', key: KEY });
    expect(extractApiKey(request({ authorization: `ApiKey ${KEY}`, 'x-api-key': KEY }))).toEqual({
      kind: 'key',
      key: KEY,
    });
  });

  it('takes an X-API-Key that repeats the Bearer token for that token (a client filling every scheme with it)', () => {
    expect(extractApiKey(request({ authorization: 'Bearer a.b.c', 'x-api-key': 'a.b.c' }))).toEqual({
      kind: 'none',
    });
    // Another value beside a token is a key, decided as one.
    expect(extractApiKey(request({ authorization: 'Bearer a.b.c', 'x-api-key': KEY }))).toEqual({
      kind: 'key',
      key: KEY,
    });
    expect(extractApiKey(request({ authorization: 'Bearer a.b.c', 'x-api-key': 'x.y.z' }))).toEqual({
      kind: 'key',
      key: 'x.y.z',
    });
  });

  it('finds none where only tokens are', () => {
    expect(extractApiKey(request({}))).toEqual({ kind: 'none' });
    expect(extractApiKey(request({ authorization: 'Bearer a.b.c', 'x-auth-token': 'a.b.c' }))).toEqual({
      kind: 'none',
    });
    expect(extractApiKey(request({ authorization: 'Basic dXNlcjpwYXNz' }))).toEqual({ kind: 'none' });
  });

  it.each([
    ['an ApiKey scheme without a value', { authorization: 'ApiKey' }, /exactly one key/],
    ['an ApiKey scheme with two values', { authorization: `ApiKey ${KEY} ${KEY}` }, /exactly one key/],
    ['a key as a Bearer token', { authorization: `Bearer ${KEY}` }, /not a Bearer token/],
    ['a scheme inside X-API-Key', { 'x-api-key': `Bearer ${KEY}` }, /takes the key alone/],
    ['an empty X-API-Key', { 'x-api-key': '  ' }, /takes the key alone/],
    ['X-API-Key sent twice', { 'x-api-key': [KEY, KEY] }, /takes the key alone/],
    ['a key in X-Auth-Token', { 'x-auth-token': KEY }, /not an X-Auth-Token/],
    [
      'two different keys',
      { authorization: `ApiKey ${KEY}`, 'x-api-key': `wfk_${'z'.repeat(43)}` },
      /Two different/,
    ],
  ])('calls %s malformed, saying how to send a key', (_case, headers, reason) => {
    const found = extractApiKey(request(headers));
    expect(found).toEqual({ kind: 'malformed', reason: expect.stringMatching(reason) });
  });

  it('leaves token extraction as it was', () => {
    expect(extractToken(request({ authorization: 'Bearer a.b.c' }))).toEqual({
      token: 'a.b.c',
      via: 'bearer',
    });
    expect(extractToken(request({ authorization: `ApiKey ${KEY}` }))).toBeUndefined();
  });
});

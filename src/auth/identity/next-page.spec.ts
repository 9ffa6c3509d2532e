import { DEFAULT_NEXT, nextPath } from './next-page.js';

describe('nextPath', () => {
  it.each([
    '/status',
    '/status/account',
    '/status/0b5d8c3e-0000-4000-8000-000000000000?version=1.0',
    '/docs',
    '/oauth2/authorize?client_id=a&state=b',
  ])('keeps the path %s of this service', (next) => {
    expect(nextPath(next)).toBe(next);
  });

  it.each([
    ['nothing', undefined],
    ['an empty string', ''],
    ['a protocol-relative URL', '//evil.example/status'],
    ['an absolute URL', 'https://evil.example/status'],
    ['a scheme without slashes', 'javascript:alert(1)'],
    ['a backslash after the slash', '/\\evil.example'],
    ['a backslash anywhere', '/status\\..\\\\evil.example'],
    ['a tab that browsers drop', '/\t/evil.example'],
    ['a newline', '/status\n//evil.example'],
    ['a path without its leading slash', 'status'],
    ['a dot segment that changes the path', '/status/../docs'],
    ['a path that normalises differently', '/status/%2e%2e/docs'],
    ['a very long path', `/${'a'.repeat(600)}`],
  ])('answers /status for %s', (_what, next) => {
    expect(nextPath(next)).toBe(DEFAULT_NEXT);
  });

  it('keeps percent-encoded slashes as they are: a path of this service, not another host', () => {
    expect(nextPath('/%2F%2Fevil.example')).toBe('/%2F%2Fevil.example');
  });
});

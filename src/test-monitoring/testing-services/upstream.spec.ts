import {
  buildLimit,
  DEFAULT_RATE_LIMIT_PAUSE_MS,
  joinUrl,
  parseEtag,
  parseRateLimit,
  parseRetryAfter,
  resourceSegments,
  secretsOf,
  withoutSecrets,
} from './upstream.js';

const NOW = new Date('2030-01-01T00:00:00Z');
const at = (seconds: number): Date => new Date(NOW.getTime() + seconds * 1000);

describe('parseEtag', () => {
  it('keeps strong and weak validators as sent', () => {
    expect(parseEtag({ etag: '"abc"' })).toBe('"abc"');
    expect(parseEtag({ etag: 'W/"abc"' })).toBe('W/"abc"');
    expect(parseEtag({})).toBeUndefined();
    expect(parseEtag({ etag: ' ' })).toBeUndefined();
  });
});

describe('parseRetryAfter', () => {
  it('reads seconds and HTTP dates', () => {
    expect(parseRetryAfter({ 'retry-after': '120' }, NOW)).toEqual(at(120));
    expect(parseRetryAfter({ 'retry-after': 'Tue, 01 Jan 2030 00:05:00 GMT' }, NOW)).toEqual(at(300));
    expect(parseRetryAfter({ 'retry-after': 'soon' }, NOW)).toBeUndefined();
    expect(parseRetryAfter({}, NOW)).toBeUndefined();
  });
});

describe('parseRateLimit', () => {
  const reset = String(NOW.getTime() / 1000 + 600);

  it('pauses until x-ratelimit-reset when the quota is exhausted', () => {
    const headers = { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': reset };
    expect(parseRateLimit(403, headers, NOW)).toEqual(at(600));
    expect(parseRateLimit(429, headers, NOW)).toEqual(at(600));
  });

  it('reads the same headers without the x- prefix (RateLimit-Remaining, RateLimit-Reset)', () => {
    expect(parseRateLimit(429, { 'ratelimit-remaining': '0', 'ratelimit-reset': reset }, NOW)).toEqual(
      at(600),
    );
    expect(
      parseRateLimit(403, { 'ratelimit-remaining': '3', 'ratelimit-reset': reset }, NOW),
    ).toBeUndefined();
  });

  it('ignores the reset while quota remains', () => {
    expect(
      parseRateLimit(403, { 'x-ratelimit-remaining': '12', 'x-ratelimit-reset': reset }, NOW),
    ).toBeUndefined();
  });

  it('takes the later of Retry-After and the reset', () => {
    const headers = { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': reset, 'retry-after': '900' };
    expect(parseRateLimit(403, headers, NOW)).toEqual(at(900));
  });

  it('pauses a default time on a bare 429 or a rate-limit message', () => {
    expect(parseRateLimit(429, {}, NOW)).toEqual(new Date(NOW.getTime() + DEFAULT_RATE_LIMIT_PAUSE_MS));
    expect(parseRateLimit(403, {}, NOW, 'You have exceeded a secondary rate limit')).toEqual(
      new Date(NOW.getTime() + DEFAULT_RATE_LIMIT_PAUSE_MS),
    );
  });

  it('never answers a time in the past', () => {
    const headers = { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(NOW.getTime() / 1000 - 5) };
    expect(parseRateLimit(403, headers, NOW)).toEqual(NOW);
  });

  it('is not a rate limit for other statuses or a plain 403', () => {
    expect(parseRateLimit(403, {}, NOW, 'Resource not accessible')).toBeUndefined();
    expect(parseRateLimit(503, { 'retry-after': '10' }, NOW)).toBeUndefined();
    expect(
      parseRateLimit(200, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': reset }, NOW),
    ).toBeUndefined();
  });
});

describe('resourceSegments and joinUrl', () => {
  it('decodes segments and re-encodes them, so slugs keep their %2F', () => {
    expect(resourceSegments('/repo/owner%2Fname/')).toEqual(['repo', 'owner/name']);
    expect(joinUrl('https://api.travis-ci.com/', ['repo', 'owner/name', 'builds'], 'limit=5')).toBe(
      'https://api.travis-ci.com/repo/owner%2Fname/builds?limit=5',
    );
    expect(joinUrl('https://ci.example.org/jenkins', ['job', 'my job'])).toBe(
      'https://ci.example.org/jenkins/job/my%20job',
    );
  });

  it('refuses dot segments, empty segments, queries and bad encodings', () => {
    for (const resource of [
      '',
      '/',
      'a/../b',
      'a/./b',
      'a//b',
      'a?b',
      'a#b',
      'a\\b',
      'a/%2e%2e/b',
      'a/%zz',
    ]) {
      expect(resourceSegments(resource)).toBeUndefined();
    }
  });
});

describe('buildLimit', () => {
  it('defaults to 10 and stays within 1..100', () => {
    expect(buildLimit({ serviceUrl: '', resource: '' })).toBe(10);
    expect(buildLimit({ serviceUrl: '', resource: '', limit: 0 })).toBe(1);
    expect(buildLimit({ serviceUrl: '', resource: '', limit: 500 })).toBe(100);
  });
});

describe('withoutSecrets', () => {
  it('blanks a bearer token, a Basic pair and its password wherever a service echoes them', () => {
    const bearer = secretsOf('Bearer ghp_abcdef123456');
    expect(withoutSecrets('Bad credentials: ghp_abcdef123456', bearer)).toBe('Bad credentials: [redacted]');
    const basic = secretsOf(`Basic ${Buffer.from('bot:s3cret-pass').toString('base64')}`);
    expect(withoutSecrets('user bot:s3cret-pass refused; password s3cret-pass', basic)).toBe(
      'user [redacted] refused; password [redacted]',
    );
    expect(withoutSecrets('no secret here', secretsOf(undefined))).toBe('no secret here');
  });
});

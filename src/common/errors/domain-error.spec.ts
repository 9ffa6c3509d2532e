import { DomainError, httpStatusOf } from './domain-error.js';

describe('httpStatusOf', () => {
  it('maps every kind to its status', () => {
    expect(httpStatusOf('invalid_input')).toBe(400);
    expect(httpStatusOf('unauthorized')).toBe(401);
    expect(httpStatusOf('forbidden')).toBe(403);
    expect(httpStatusOf('not_found')).toBe(404);
    expect(httpStatusOf('conflict')).toBe(409);
    expect(httpStatusOf('payload_too_large')).toBe(413);
    expect(httpStatusOf('rate_limited')).toBe(429);
    expect(httpStatusOf('upstream_failed')).toBe(502);
    expect(httpStatusOf('upstream_timeout')).toBe(503);
    expect(httpStatusOf('upstream_rate_limited')).toBe(503);
    expect(httpStatusOf('gateway_timeout')).toBe(504);
    expect(httpStatusOf('database_unavailable')).toBe(503);
    expect(httpStatusOf('gateway_timeout')).toBe(504);
    expect(httpStatusOf('insufficient_storage')).toBe(507);
    expect(httpStatusOf('invalid_route')).toBe(500);
  });

  it('keeps the field errors and the retry delay', () => {
    const error = new DomainError('rate_limited', 'slow down', [{ field: 'a', message: 'b' }], 12);
    expect(error.fields).toEqual([{ field: 'a', message: 'b' }]);
    expect(error.retryAfterSeconds).toBe(12);
  });
});

import { DomainError } from '../common/errors/domain-error.js';
import { leaseEndsAt, MAX_LEASE_SECONDS } from './lease-rules.js';

const NOW = Date.parse('2026-11-23T12:00:00Z');

describe('leaseEndsAt', () => {
  it('adds ttl_seconds to now', () => {
    expect(leaseEndsAt(NOW, { ttlSeconds: 90 }).toISOString()).toBe('2026-11-23T12:01:30.000Z');
  });

  it('rounds up to a whole second', () => {
    expect(leaseEndsAt(NOW + 1, { ttlSeconds: 60 }).toISOString()).toBe('2026-11-23T12:01:01.000Z');
    expect(leaseEndsAt(NOW, { expiresAt: '2026-11-23T13:00:00.250Z' }).toISOString()).toBe(
      '2026-11-23T13:00:01.000Z',
    );
  });

  it('takes expires_at with its time zone', () => {
    expect(leaseEndsAt(NOW, { expiresAt: '2026-11-23T14:00:00+01:00' }).toISOString()).toBe(
      '2026-11-23T13:00:00.000Z',
    );
  });

  it('accepts expires_at exactly a year ahead and refuses one a second later', () => {
    const limit = new Date(NOW + MAX_LEASE_SECONDS * 1000).toISOString();
    expect(leaseEndsAt(NOW, { expiresAt: limit }).getTime()).toBe(NOW + MAX_LEASE_SECONDS * 1000);
    const beyond = new Date(NOW + MAX_LEASE_SECONDS * 1000 + 1000).toISOString();
    expect(() => leaseEndsAt(NOW, { expiresAt: beyond })).toThrow(/more than a year ahead/);
  });

  it.each(['2026-11-23T12:00:00Z', '2026-11-23T11:59:59Z', '2020-01-01T00:00:00Z'])(
    'refuses %s, not later than now, as invalid input',
    (expiresAt) => {
      expect(() => leaseEndsAt(NOW, { expiresAt })).toThrow(DomainError);
      expect(() => leaseEndsAt(NOW, { expiresAt })).toThrow(/in the past/);
    },
  );
});

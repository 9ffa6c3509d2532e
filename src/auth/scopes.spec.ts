import type { AuthUser } from './auth-user.js';
import { ACCOUNT_SCOPE, holdsScope } from './scopes.js';

const caller = (extra: Partial<AuthUser> = {}): AuthUser => ({
  id: 7,
  username: 'alice',
  roles: ['user'],
  jti: 'j',
  exp: 0,
  via: 'bearer',
  ...extra,
});

describe('holdsScope', () => {
  it("gives a person's own credentials the account and every scope but the registry's", () => {
    const person = caller();
    expect(
      [ACCOUNT_SCOPE, 'user.profile', 'user.workflow.read', 'workflow.write'].map((scope) =>
        holdsScope(person, scope),
      ),
    ).toEqual([true, true, true, true]);
    expect(holdsScope(person, 'registry.info')).toBe(false);
  });

  it("gives an application's token the scopes granted, never the account", () => {
    const app = caller({ scopes: new Set(['user.profile']) });
    expect(holdsScope(app, 'user.profile')).toBe(true);
    expect(holdsScope(app, 'user.workflow.read')).toBe(false);
    expect(holdsScope(app, ACCOUNT_SCOPE)).toBe(false);
  });

  it("never gives a registry's token the scopes that act as a person, even granted", () => {
    const registry = caller({
      scopes: new Set(['user.profile', 'user.workflow.read', 'registry.info', 'workflow.read']),
      registry: { id: 1, uuid: '3f0c5d1e-8d3b-4c4a-9a57-2f1d3c1b0e7a' },
    });
    expect(holdsScope(registry, 'user.profile')).toBe(false);
    expect(holdsScope(registry, 'user.workflow.read')).toBe(false);
    expect(holdsScope(registry, 'registry.info')).toBe(true);
    expect(holdsScope(registry, 'workflow.read')).toBe(true);
  });
});

import { JwtService } from '@nestjs/jwt';
import { Clock } from '../common/clock.js';
import { DomainError } from '../common/errors/domain-error.js';
import { loadConfig } from '../config/app-config.js';
import type { AuthUser } from './auth-user.js';
import { AuthService, PRINCIPAL_TTL_MS, type TokenClaims } from './auth.service.js';
import type { UserEntity } from './entities/user.entity.js';
import { PasswordHasher } from './password-hasher.js';
import type { UsersRepository } from './users.repository.js';

class FakeClock extends Clock {
  current = 1_800_000_000_000;
  override nowMs(): number {
    return this.current;
  }
}

/** The rows another copy of the service would change behind this one's back. */
class FakeUsers {
  users = new Map<number, Pick<UserEntity, 'id' | 'username' | 'roles' | 'active'>>();
  revoked = new Set<string>();
  reads = 0;

  findById(id: number): Promise<UserEntity | null> {
    this.reads++;
    return Promise.resolve((this.users.get(id) as UserEntity | undefined) ?? null);
  }

  isRevoked(jti: string): Promise<boolean> {
    return Promise.resolve(this.revoked.has(jti));
  }
}

function build(): { auth: AuthService; users: FakeUsers; clock: FakeClock } {
  const config = loadConfig({ DATA_DIR: '/tmp', JWT_SECRET: 'x'.repeat(40), NODE_ENV: 'test' });
  const users = new FakeUsers();
  const clock = new FakeClock();
  const repo: Pick<UsersRepository, 'findById' | 'isRevoked'> = users;
  const auth = new AuthService(
    repo as UsersRepository,
    new PasswordHasher(),
    new JwtService({ secret: config.auth.jwtSecret }),
    config,
    clock,
  );
  return { auth, users, clock };
}

const claims: TokenClaims = { sub: '7', username: 'alice', roles: ['user'], jti: 'j-1', iat: 0, exp: 0 };

/** The caller as a promise, however principal answered (at once from memory, or after a read). */
const principalOf = async (auth: AuthService, via: 'bearer' | 'cookie'): Promise<AuthUser> =>
  auth.principal(claims, via);

describe('AuthService.principal', () => {
  it('reads the user once per 30 s and sees a change made elsewhere within 60 s', async () => {
    const { auth, users, clock } = build();
    users.users.set(7, { id: 7, username: 'alice', roles: ['user'], active: true });
    await expect(principalOf(auth, 'bearer')).resolves.toMatchObject({ id: 7, roles: ['user'] });
    await principalOf(auth, 'bearer');
    expect(users.reads).toBe(1);

    // Another copy disables the account: this copy may serve from memory for at most the TTL.
    users.users.set(7, { id: 7, username: 'alice', roles: ['user'], active: false });
    clock.current += PRINCIPAL_TTL_MS - 1;
    await expect(principalOf(auth, 'bearer')).resolves.toMatchObject({ id: 7 });
    clock.current += 2;
    await expect(principalOf(auth, 'bearer')).rejects.toEqual(
      new DomainError('unauthorized', 'The token belongs to a disabled or deleted account'),
    );
    expect(PRINCIPAL_TTL_MS).toBeLessThanOrEqual(60_000);
  });

  it('applies a role change and a deletion made elsewhere after the TTL', async () => {
    const { auth, users, clock } = build();
    users.users.set(7, { id: 7, username: 'alice', roles: ['user'], active: true });
    await principalOf(auth, 'bearer');
    users.users.set(7, { id: 7, username: 'alice', roles: ['agent'], active: true });
    clock.current += PRINCIPAL_TTL_MS + 1;
    await expect(principalOf(auth, 'bearer')).resolves.toMatchObject({ roles: ['agent'] });
    users.users.delete(7);
    clock.current += PRINCIPAL_TTL_MS + 1;
    await expect(principalOf(auth, 'bearer')).rejects.toBeInstanceOf(DomainError);
  });

  it('answers from memory without a promise while the user and the token are cached, and refuses so too', async () => {
    const { auth, users, clock } = build();
    users.users.set(7, { id: 7, username: 'alice', roles: ['user'], active: true });
    const first = auth.principal(claims, 'bearer');
    expect(first).toBeInstanceOf(Promise);
    await first;
    expect(auth.principal(claims, 'bearer')).toEqual({
      id: 7,
      username: 'alice',
      roles: ['user'],
      jti: 'j-1',
      exp: 0,
      via: 'bearer',
    });
    users.users.set(7, { id: 7, username: 'alice', roles: ['user'], active: false });
    clock.current += PRINCIPAL_TTL_MS + 1;
    await expect(principalOf(auth, 'bearer')).rejects.toBeInstanceOf(DomainError);
    // The disabled account is now what is cached: refused at once.
    expect(() => auth.principal(claims, 'bearer')).toThrow(
      new DomainError('unauthorized', 'The token belongs to a disabled or deleted account'),
    );
    expect(users.reads).toBe(2);
  });

  it('refuses a token revoked by another copy after the TTL', async () => {
    const { auth, users, clock } = build();
    users.users.set(7, { id: 7, username: 'alice', roles: ['user'], active: true });
    await principalOf(auth, 'cookie');
    users.revoked.add('j-1');
    clock.current += PRINCIPAL_TTL_MS + 1;
    await expect(principalOf(auth, 'cookie')).rejects.toEqual(
      new DomainError('unauthorized', 'The token has been revoked'),
    );
  });
});

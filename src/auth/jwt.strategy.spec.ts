import { jest } from '@jest/globals';
import { JwtService } from '@nestjs/jwt';
import type { Request } from 'express';
import { Clock } from '../common/clock.js';
import { AppConfig, loadConfig } from '../config/app-config.js';
import type { AuthUser } from './auth-user.js';
import { AuthService } from './auth.service.js';
import type { UserEntity } from './entities/user.entity.js';
import { JwtStrategy, VERIFIED_LIMIT } from './jwt.strategy.js';
import { PasswordHasher } from './password-hasher.js';
import type { UsersRepository } from './users.repository.js';

const alice: Pick<UserEntity, 'id' | 'username' | 'roles' | 'active'> = {
  id: 7,
  username: 'alice',
  roles: ['user'],
  active: true,
};

function build(): { strategy: JwtStrategy; jwt: JwtService } {
  const config: AppConfig = loadConfig({ DATA_DIR: '/tmp', JWT_SECRET: 'x'.repeat(40), NODE_ENV: 'test' });
  const repo: Pick<UsersRepository, 'findById' | 'isRevoked'> = {
    findById: () => Promise.resolve(alice as UserEntity),
    isRevoked: () => Promise.resolve(false),
  };
  const jwt = new JwtService({ secret: config.auth.jwtSecret });
  const auth = new AuthService(repo as UsersRepository, new PasswordHasher(), jwt, config, new Clock());
  return { strategy: new JwtStrategy(config, auth), jwt };
}

function bearer(token: string): Request {
  const request: Pick<Request, 'headers'> = { headers: { authorization: `Bearer ${token}` } };
  return request as Request;
}

/** What passport does with a strategy: runs it on a request and reports how it ended. */
function authenticate(strategy: JwtStrategy, request: Request): Promise<AuthUser | undefined> {
  return new Promise((resolve, reject) => {
    const run: JwtStrategy = Object.create(strategy) as JwtStrategy;
    Object.assign(run, {
      success: (user: AuthUser) => resolve(user),
      fail: () => resolve(undefined),
      error: (error: unknown) => reject(error instanceof Error ? error : new Error(String(error))),
    });
    run.authenticate(request, {});
  });
}

function sign(jwt: JwtService, jti: string, expiresIn: number): string {
  return jwt.sign({ sub: '7', username: 'alice', roles: ['user'] }, { jwtid: jti, expiresIn });
}

describe('JwtStrategy.cachedClaims', () => {
  afterEach(() => {
    jest.useRealTimers();
  });

  it('knows a token only once passport verified it, and no longer once it has expired', async () => {
    jest.useFakeTimers({
      now: Date.UTC(2026, 10, 1),
      doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'],
    });
    const { strategy, jwt } = build();
    const token = sign(jwt, 'j-1', 60);
    expect(strategy.cachedClaims(token)).toBeUndefined();

    await expect(authenticate(strategy, bearer(token))).resolves.toMatchObject({ id: 7, jti: 'j-1' });
    expect(strategy.cachedClaims(token)).toMatchObject({ sub: '7', jti: 'j-1' });

    jest.setSystemTime(Date.UTC(2026, 10, 1) + 59_999);
    expect(strategy.cachedClaims(token)).toMatchObject({ jti: 'j-1' });
    jest.setSystemTime(Date.UTC(2026, 10, 1) + 60_000);
    expect(strategy.cachedClaims(token)).toBeUndefined();
    // Passport, asked again, refuses it too.
    await expect(authenticate(strategy, bearer(token))).resolves.toBeUndefined();
  });

  it('never keeps a token that failed verification', async () => {
    const { strategy, jwt } = build();
    const forged = `${sign(jwt, 'j-2', 60).slice(0, -2)}xx`;
    await expect(authenticate(strategy, bearer(forged))).resolves.toBeUndefined();
    expect(strategy.cachedClaims(forged)).toBeUndefined();
  });

  it(`keeps at most ${VERIFIED_LIMIT} tokens, dropping the least recently used`, async () => {
    const { strategy, jwt } = build();
    const first = sign(jwt, 'first', 600);
    const second = sign(jwt, 'second', 600);
    await authenticate(strategy, bearer(first));
    await authenticate(strategy, bearer(second));
    expect(strategy.cachedClaims(first)).toBeDefined(); // now the most recently used
    // What passport hands over once it has verified a token (signing 10,000 would only be slower).
    const exp = Math.floor(Date.now() / 1000) + 600;
    for (let n = 0; n < VERIFIED_LIMIT - 1; n++) {
      const claims = {
        sub: '7',
        username: 'alice',
        roles: ['user' as const],
        jti: `filler-${n}`,
        iat: 0,
        exp,
      };
      await strategy.validate(bearer(`filler-${n}`), claims);
    }
    expect(strategy.cachedClaims(second)).toBeUndefined();
    expect(strategy.cachedClaims(first)).toBeDefined();
  });
});

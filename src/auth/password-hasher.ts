import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { Injectable } from '@nestjs/common';

const PARAMS = { N: 2 ** 15, r: 8, p: 1 } as const;

/**
 * The stored hash of an account without a password (made by a sign-in with a provider, or for a
 * registry's user): no password verifies against it, so the password form never signs it in.
 */
export const NO_PASSWORD = '';
const KEY_LENGTH = 32;

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    // 128 * N * r bytes are needed; allow twice that so the default 32 MiB cap does not refuse N=2^15.
    const maxmem = 256 * (options.N ?? PARAMS.N) * (options.r ?? PARAMS.r);
    scrypt(password, salt, KEY_LENGTH, { ...options, maxmem }, (error, key) =>
      error ? reject(error) : resolve(key),
    );
  });
}

/**
 * scrypt, memory-hard, with a per-user salt. The stored form carries its parameters
 * (`scrypt$N$r$p$salt$hash`) so they can be raised later without invalidating old hashes.
 */
@Injectable()
export class PasswordHasher {
  private dummyHash?: Promise<string>;

  async hash(password: string): Promise<string> {
    const salt = randomBytes(16);
    const key = await derive(password, salt, PARAMS);
    return ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64'), key.toString('base64')].join(
      '$',
    );
  }

  async verify(password: string, stored: string): Promise<boolean> {
    const [scheme, n, r, p, salt, hash] = stored.split('$');
    if (scheme !== 'scrypt' || !salt || !hash) {
      // As long as a real check: an account without a password is not told apart by timing.
      return this.verifyAgainstNothing(password);
    }
    const expected = Buffer.from(hash, 'base64');
    const key = await derive(password, Buffer.from(salt, 'base64'), {
      N: Number(n),
      r: Number(r),
      p: Number(p),
    });
    return key.length === expected.length && timingSafeEqual(key, expected);
  }

  /** Spends the same time as a real check, so an unknown username cannot be told apart by timing. */
  async verifyAgainstNothing(password: string): Promise<false> {
    this.dummyHash ??= this.hash('not a password of anybody');
    await this.verify(password, await this.dummyHash);
    return false;
  }
}

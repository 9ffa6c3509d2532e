import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { SealedBox } from '../common/sealed-box.js';
import { AppConfig } from '../config/app-config.js';

/** A new badge token, what is stored of it, and what its owner is shown. */
export interface IssuedBadgeToken {
  token: string;
  sha256: string;
  sealed: string;
}

const TOKEN_BYTES = 32;

/**
 * Badge tokens (API.md 5.2): 256 random bits, base64url. Requests are checked against the stored
 * SHA-256 (a hash suffices for a random value: nothing to guess from it). So that the owner can
 * read the token again without it being in the database in clear, a copy is sealed with AES-256-GCM
 * under a key derived from JWT_SECRET; a changed secret makes the copy unreadable and the next
 * `GET …/badge-token` issues a new token.
 */
@Injectable()
export class BadgeTokens {
  private readonly box: SealedBox;

  constructor(config: AppConfig) {
    this.box = new SealedBox(config.auth.jwtSecret, 'workflow badge token');
  }

  issue(): IssuedBadgeToken {
    const token = randomBytes(TOKEN_BYTES).toString('base64url');
    return { token, sha256: sha256Of(token), sealed: this.seal(token) };
  }

  /** True when `token` is the one whose hash is stored; constant time. */
  matches(token: string, storedSha256: string | null): boolean {
    if (storedSha256 === null || !/^[A-Za-z0-9_-]{43}$/.test(token)) {
      return false;
    }
    return timingSafeEqual(Buffer.from(sha256Of(token), 'hex'), Buffer.from(storedSha256, 'hex'));
  }

  /** The token of a sealed copy, or undefined when it cannot be opened (another JWT_SECRET). */
  unseal(sealed: string): string | undefined {
    return this.box.unseal(sealed);
  }

  private seal(token: string): string {
    return this.box.seal(token);
  }
}

function sha256Of(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

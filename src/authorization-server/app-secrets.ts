import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { ApiKeyHasher } from '../auth/api-key-secrets.js';

/** How every application access token begins, so that the guard's chain knows it from a JWT or a registry's token. */
export const ACCESS_TOKEN_MARK = 'wfa_';
/** Refresh tokens go only to the token endpoint; their own mark keeps them out of the guard's chain. */
const REFRESH_TOKEN_MARK = 'wfar_';
const ACCESS_SHAPE = new RegExp(`^${ACCESS_TOKEN_MARK}[A-Za-z0-9_-]{43}$`);

/** Codes, client ids and secrets, tokens' random parts: 256 random bits in base64url (43 characters). */
function random43(): string {
  return randomBytes(32).toString('base64url');
}

/** A client id: 144 random bits in base64url (24 characters). Not a secret, but not guessable either. */
export function generateClientId(): string {
  return randomBytes(18).toString('base64url');
}

export const generateClientSecret = random43;
export const generateCode = random43;

export function generateAccessToken(): string {
  return `${ACCESS_TOKEN_MARK}${random43()}`;
}

export function generateRefreshToken(): string {
  return `${REFRESH_TOKEN_MARK}${random43()}`;
}

/** True for a string with an application token's mark (decided by that strategy, valid or not). */
export function isAccessTokenMarked(token: string): boolean {
  return token.startsWith(ACCESS_TOKEN_MARK);
}

/** True when a marked token can be one of ours at all: else it is refused unread. */
export function hasAccessTokenShape(token: string): boolean {
  return ACCESS_SHAPE.test(token);
}

/** RFC 7636 4.2's S256 challenge: exactly 43 base64url characters. */
export const CODE_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
/** RFC 7636 4.1's code_verifier: 43 to 128 unreserved characters. */
const CODE_VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

/** True when `verifier` is a well-formed code_verifier whose S256 is `challenge` (compared in constant time). */
export function verifiesChallenge(verifier: string, challenge: string): boolean {
  if (!CODE_VERIFIER.test(verifier)) {
    return false;
  }
  const computed = Buffer.from(createHash('sha256').update(verifier, 'ascii').digest('base64url'));
  const expected = Buffer.from(challenge);
  return computed.length === expected.length && timingSafeEqual(computed, expected);
}

/**
 * Client secrets, codes and tokens of applications are hashed with a pepper of their own (see
 * ApiKeyHasher: 256 random bits need no slow hash).
 */
export class AppSecretHasher extends ApiKeyHasher {}

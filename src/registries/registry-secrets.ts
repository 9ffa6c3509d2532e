import { randomBytes } from 'node:crypto';

/** How every registry access token begins, so that the guard's chain knows it from a JWT. */
export const REGISTRY_TOKEN_MARK = 'wfr_';
const TOKEN_SHAPE = new RegExp(`^${REGISTRY_TOKEN_MARK}[A-Za-z0-9_-]{43}$`);

/** A client id: 144 random bits in base64url (24 characters). Not a secret, but not guessable either. */
export function generateClientId(): string {
  return randomBytes(18).toString('base64url');
}

/** A client secret or an access token's random part: 256 bits, base64url (43 characters). */
export function generateSecret(): string {
  return randomBytes(32).toString('base64url');
}

export function generateAccessToken(): string {
  return `${REGISTRY_TOKEN_MARK}${generateSecret()}`;
}

/** True for a string with a registry token's mark (decided by that strategy, valid or not). */
export function isMarkedToken(token: string): boolean {
  return token.startsWith(REGISTRY_TOKEN_MARK);
}

/** True when a marked token can be one of ours at all (the shape): else it is refused unread. */
export function hasTokenShape(token: string): boolean {
  return TOKEN_SHAPE.test(token);
}

import type { Role } from './roles.js';

/** How the caller authenticated: a token from one of its three carriers, or an API key. */
export type TokenCarrier = 'bearer' | 'header' | 'cookie' | 'apikey';

/** The authenticated caller, as the guards put it on the request. */
export interface AuthUser {
  id: number;
  username: string;
  roles: Role[];
  /** The token's id; `apikey:<id>` for an API key. */
  jti: string;
  /** Token expiry, seconds since the epoch; an API key's expiry, or 0 when it has none. */
  exp: number;
  via: TokenCarrier;
  /**
   * What the credentials may do (API.md 10.1): a registry token holds the scopes it was granted;
   * absent for a person's own credentials, which hold PERSON_SCOPES (see scopes.ts).
   */
  scopes?: ReadonlySet<string>;
  /** Set when a registry's client token came: the caller acts for that registry. */
  registry?: { id: number; uuid: string };
}

export function hasRole(user: AuthUser, ...roles: Role[]): boolean {
  return user.roles.includes('admin') || roles.some((role) => user.roles.includes(role));
}

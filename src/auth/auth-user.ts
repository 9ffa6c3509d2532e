import type { Role } from './roles.js';

export type TokenCarrier = 'bearer' | 'header' | 'cookie';

/** The authenticated caller, as the guards put it on the request. */
export interface AuthUser {
  id: number;
  username: string;
  roles: Role[];
  jti: string;
  /** Token expiry, seconds since the epoch. */
  exp: number;
  via: TokenCarrier;
}

export function hasRole(user: AuthUser, ...roles: Role[]): boolean {
  return user.roles.includes('admin') || roles.some((role) => user.roles.includes(role));
}

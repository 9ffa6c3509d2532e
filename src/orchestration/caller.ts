import type { AuthUser } from '../auth/auth-user.js';

/** Who asks, as area C's rules need it: their id, their username (owner tags, key pair names), admin or not. */
export interface Caller {
  readonly id: number;
  readonly username: string;
  readonly admin: boolean;
}

export function callerOf(user: AuthUser): Caller {
  return { id: user.id, username: user.username, admin: user.roles.includes('admin') };
}

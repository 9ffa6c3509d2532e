import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { InsufficientScope } from '../common/errors/domain-error.js';
import type { AuthUser } from './auth-user.js';
import { IS_PUBLIC } from './public.decorator.js';
import { ACCOUNT_SCOPE, holdsScope, REQUIRED_SCOPE } from './scopes.js';

/**
 * Runs after the authentication guard: the caller's credentials must hold the scope the route
 * names (@RequireScope), or `account` when it names none. Anonymous callers of an
 * @OptionalAuth() route hold nothing and need nothing here: the services decide what they see.
 */
@Injectable()
export class ScopesGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, targets)) {
      return true;
    }
    const user = context.switchToHttp().getRequest<Request>().user as AuthUser | undefined;
    if (user === undefined) {
      return true;
    }
    const needed =
      this.reflector.getAllAndOverride<string | undefined>(REQUIRED_SCOPE, targets) ?? ACCOUNT_SCOPE;
    if (!holdsScope(user, needed)) {
      throw new InsufficientScope(needed);
    }
    return true;
  }
}

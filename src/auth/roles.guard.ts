import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { DomainError } from '../common/errors/domain-error.js';
import { hasRole, type AuthUser } from './auth-user.js';
import type { Role } from './roles.js';
import { REQUIRED_ROLES } from './roles.decorator.js';

/** Runs after JwtAuthGuard: enforces @Roles() on the route or its controller. */
@Injectable()
export class RolesGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    const roles = this.reflector.getAllAndOverride<Role[] | undefined>(REQUIRED_ROLES, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (!roles || roles.length === 0) {
      return true;
    }
    const user = context.switchToHttp().getRequest<Request>().user as AuthUser | undefined;
    if (!user || !hasRole(user, ...roles)) {
      // Admins pass every role check, so they are named too.
      const accepted = roles.includes('admin') ? roles : [...roles, 'admin'];
      throw new DomainError('forbidden', `This operation needs the role ${accepted.join(' or ')}`);
    }
    return true;
  }
}

import { SetMetadata } from '@nestjs/common';
import type { Role } from './roles.js';

export const REQUIRED_ROLES = 'auth:roles';

/** Limits a route or controller to callers holding one of these roles (admins always pass). */
export const Roles = (...roles: Role[]): MethodDecorator & ClassDecorator =>
  SetMetadata(REQUIRED_ROLES, roles);

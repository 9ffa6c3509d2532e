import { applyDecorators, createParamDecorator, SetMetadata, type ExecutionContext } from '@nestjs/common';
import { ApiExtension } from '@nestjs/swagger';
import type { Request } from 'express';
import type { AuthUser } from './auth-user.js';

export const IS_OPTIONAL_AUTH = 'auth:optional';

/**
 * The caller of a route open to anybody: the authenticated user when a token came, else
 * undefined (anonymous). What each may see is the service's rule, not the route's.
 */
export type Viewer = AuthUser | undefined;

/**
 * A read open to callers without a token (public workflows, API.md 5.1). A token that does come
 * is checked as everywhere (a bad one is a 401, never a silent anonymous read), so that the
 * owner of a private workflow is told their token failed instead of getting a 404.
 * The OpenAPI document lists the token as optional (see finishDocument).
 */
export function OptionalAuth(): MethodDecorator & ClassDecorator {
  return applyDecorators(SetMetadata(IS_OPTIONAL_AUTH, true), ApiExtension('x-optional-auth', true));
}

/** The caller of an @OptionalAuth() route. */
export const CurrentViewer = createParamDecorator(
  (_data: unknown, context: ExecutionContext): Viewer =>
    context.switchToHttp().getRequest<Request>().user as AuthUser | undefined,
);

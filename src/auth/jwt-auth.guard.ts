import { Injectable, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import type { Request, Response } from 'express';
import { DomainError } from '../common/errors/domain-error.js';
import type { AuthUser } from './auth-user.js';
import { AuthService } from './auth.service.js';
import { JwtStrategy } from './jwt.strategy.js';
import { IS_PUBLIC } from './public.decorator.js';
import { SESSION_COOKIE } from './token-carriers.js';

/**
 * The global guard: every route needs a valid token unless it says @Public(). A caller
 * that came with the session cookie gets it renewed on the reply.
 */
@Injectable()
export class JwtAuthGuard extends AuthGuard() {
  constructor(
    private readonly reflector: Reflector,
    private readonly auth: AuthService,
    strategy: JwtStrategy,
  ) {
    super({ defaultStrategy: strategy.passportName });
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [context.getHandler(), context.getClass()])) {
      return true;
    }
    const http = context.switchToHttp();
    const response = http.getResponse<Response>();
    response.vary('Authorization').vary('X-Auth-Token').vary('Cookie');
    await super.canActivate(context);
    const user = http.getRequest<Request>().user as AuthUser;
    if (user.via === 'cookie') {
      response.cookie(SESSION_COOKIE, this.auth.issue(user).token, this.auth.sessionCookieOptions());
    }
    return true;
  }

  override handleRequest<TUser = AuthUser>(error: unknown, user: TUser | false, info: unknown): TUser {
    // Passport hands over an error only from the re-check of a verified token (the database,
    // the token's revocation): that is ours to answer (503 when the database is away), not a
    // bad token. Bad tokens come as `info`.
    if (error) {
      throw error instanceof Error ? error : new Error('the token re-check failed', { cause: error });
    }
    if (!user) {
      throw new DomainError('unauthorized', reasonOf(info));
    }
    return user;
  }
}

function reasonOf(info: unknown): string {
  const name = info instanceof Error ? info.name : undefined;
  if (name === 'TokenExpiredError') {
    return 'The token has expired';
  }
  if (name === 'JsonWebTokenError' || name === 'NotBeforeError') {
    return 'The token is not valid';
  }
  return 'A valid token is required (Authorization: Bearer, X-Auth-Token or the session cookie)';
}

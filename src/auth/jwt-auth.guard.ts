import { Injectable, type ExecutionContext, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import type { Request, Response } from 'express';
import { openToAllOrigins } from '../common/cross-origin.js';
import { DomainError } from '../common/errors/domain-error.js';
import { ApiKeyRefusal, ApiKeyStrategy, NO_API_KEY } from './api-key.strategy.js';
import type { AuthUser, TokenCarrier } from './auth-user.js';
import { AuthService, type TokenClaims } from './auth.service.js';
import { JwtStrategy } from './jwt.strategy.js';
import { IS_OPTIONAL_AUTH } from './optional-auth.decorator.js';
import { IS_PUBLIC } from './public.decorator.js';
import { extractApiKey, extractToken, setSessionCookie } from './token-carriers.js';
import { discovered } from '../common/discovered.js';
import { NOT_THIS_KIND, RegisterTokenStrategy, type TokenStrategy } from './token-strategy.js';

/**
 * The global guard: every route needs a valid token or API key unless it says @Public(). The
 * API key strategy goes first and decides every request that carries a key; the others go on
 * to the registered token strategies (a registry's client tokens, see token-strategy.ts), then
 * to the JWT strategy. Each yields the principal with its scopes (ScopesGuard checks them). An @OptionalAuth() route lets a request with no credential at all through
 * as anonymous. A caller that came with the session cookie gets it renewed on the reply.
 */
@Injectable()
export class JwtAuthGuard extends AuthGuard() implements OnModuleInit {
  private readonly chain: string[];

  constructor(
    private readonly reflector: Reflector,
    private readonly auth: AuthService,
    private readonly strategy: JwtStrategy,
    private readonly discovery: DiscoveryService,
    apiKeys: ApiKeyStrategy,
  ) {
    const chain = [apiKeys.passportName, strategy.passportName];
    super({ defaultStrategy: chain });
    this.chain = chain;
  }

  /** The registered token strategies join the chain once every module's providers exist. */
  onModuleInit(): void {
    const others = discovered<TokenStrategy>(this.discovery, RegisterTokenStrategy);
    this.chain.splice(1, 0, ...others.map((other) => other.passportName));
  }

  // Not async: a request that needs no check (a public route, or anonymous where allowed) or that
  // is answered from memory (a known token of a cached account) is let through at once, so Nest's
  // guard step makes no promise for it; only a check that reads the database waits.
  override canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [context.getHandler(), context.getClass()])) {
      return true;
    }
    const http = context.switchToHttp();
    const request = http.getRequest<Request>();
    const response = http.getResponse<Response>();
    response.vary('Authorization').vary('X-Auth-Token').vary('Cookie').vary('X-API-Key');
    const optional = this.reflector.getAllAndOverride<boolean>(IS_OPTIONAL_AUTH, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (optional && !carriesCredential(request)) {
      // Anonymous: the service decides what it may see, and that is public (API.md 5.1), so any
      // origin's script may read it; the error filters take the header off a failed read.
      openToAllOrigins(response);
      return true;
    }
    // A token verified before needs no second verification nor passport's chain (which would
    // first try the API key strategy): only the user and revocation re-check, as passport's path
    // ends with, answered at once while cached. Every other request (a key, no token, a token not
    // seen or expired) goes through passport, which answers each failure.
    const known = knownToken(request, this.strategy);
    if (!known) {
      return this.viaPassport(request, response, context);
    }
    const principal = this.auth.principal(known.claims, known.via);
    if (principal instanceof Promise) {
      return principal.then((user) => this.admit(request, response, user));
    }
    return this.admit(request, response, principal);
  }

  private async viaPassport(
    request: Request,
    response: Response,
    context: ExecutionContext,
  ): Promise<boolean> {
    await super.canActivate(context);
    return this.admit(request, response, request.user as AuthUser);
  }

  /** The caller, on the request; a cookie session is renewed on the reply. */
  private admit(request: Request, response: Response, user: AuthUser): true {
    request.user = user;
    // A renewal issues a person's session token with every scope of theirs: only for their own
    // token, never for a scoped one (a registry's, an application's) that came as the cookie.
    if (user.via === 'cookie' && user.scopes === undefined) {
      setSessionCookie(response, this.auth.issue(user).token, this.auth.sessionCookieOptions());
    }
    return true;
  }

  override handleRequest<TUser = AuthUser>(error: unknown, user: TUser | false, info: unknown): TUser {
    // Passport hands over an error only from the re-check of a verified token or a presented key
    // (the database, a revocation, a key that is not valid): DomainErrors say which, anything else
    // is ours to answer (503 when the database is away). Bad tokens come as `info`.
    if (error) {
      throw error instanceof Error ? error : new Error('the token re-check failed', { cause: error });
    }
    if (!user) {
      throw new DomainError('unauthorized', reasonOf(info));
    }
    return user;
  }
}

/** `info` is one failure per strategy of the chain: the API key's (when one was presented), then the token's. */
function reasonOf(info: unknown): string {
  const failures: unknown[] = Array.isArray(info) ? info : [info];
  const refusal = failures.find((failure) => failure instanceof ApiKeyRefusal);
  if (refusal) {
    return refusal.message;
  }
  const token = failures.find((failure) => failure !== NO_API_KEY && failure !== NOT_THIS_KIND);
  const name = token instanceof Error ? token.name : undefined;
  if (name === 'TokenExpiredError') {
    return 'The token has expired';
  }
  if (name === 'JsonWebTokenError' || name === 'NotBeforeError') {
    return 'The token is not valid';
  }
  return 'A valid token or API key is required (Authorization: Bearer, X-Auth-Token, the session cookie, Authorization: ApiKey or X-API-Key)';
}

function knownToken(
  request: Request,
  strategy: JwtStrategy,
): { claims: TokenClaims; via: TokenCarrier } | undefined {
  if (extractApiKey(request).kind !== 'none') {
    return undefined;
  }
  const found = extractToken(request);
  const claims = found && strategy.cachedClaims(found.token);
  return claims ? { claims, via: found.via } : undefined;
}

/** Any token, key or Authorization header at all: such a request is authenticated (or refused), never anonymous. */
function carriesCredential(request: Request): boolean {
  return (
    request.headers.authorization !== undefined ||
    extractToken(request) !== undefined ||
    extractApiKey(request).kind !== 'none'
  );
}

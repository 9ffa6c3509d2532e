import {
  applyDecorators,
  Injectable,
  UseGuards,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { AppConfig } from '../config/app-config.js';
import { DomainError } from './errors/domain-error.js';

/**
 * CSRF protection of an HTML form that acts with the `session` cookie: put `@SameOriginForm()` on
 * its POST handler (beside `@Post()`), and nothing else is needed, in the form or in the page.
 *
 * Two locks, either enough against a forged cross-site form:
 * - the session cookie is `SameSite=Strict`, so a browser sends it with no request started by
 *   another site's page (AuthService.sessionCookieOptions);
 * - this guard refuses (403, the area's error shape through its filter) a request whose `Origin`
 *   (or, when a browser sends none, `Referer`) is not this service: the host the request was
 *   addressed to, or the origin of `PUBLIC_BASE_URL`. A request with neither header is refused
 *   too: every browser sends one of them with a form POST, so only a forged or stripped request
 *   lacks both. The check also covers what SameSite cannot: a form that signs in (no cookie
 *   yet, "login CSRF") and browsers that ignore SameSite.
 *
 * The pages that carry such a form must be served with `Referrer-Policy: same-origin`
 * (`formPageHeaders`): under helmet's default `no-referrer` a browser sends `Origin: null` and
 * no Referer even to the page's own origin, and every form would be refused.
 *
 * The scheme is not compared: behind a proxy that ends TLS the service sees `http` for a page the
 * browser holds as `https`, and another scheme on the same host and port is the same server.
 * No token is needed in the form, so cached pages and several tabs never go stale.
 */
export function SameOriginForm(): MethodDecorator & ClassDecorator {
  return applyDecorators(UseGuards(SameOriginGuard));
}

@Injectable()
export class SameOriginGuard implements CanActivate {
  constructor(private readonly config: AppConfig) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<Request>();
    const sender = senderOf(request);
    if (sender === undefined) {
      throw new DomainError(
        'forbidden',
        'The form was sent without Origin or Referer: send it from a page of this service',
      );
    }
    if (!this.ours(sender, request)) {
      throw new DomainError(
        'forbidden',
        'The form was sent from another site: send it from a page of this service',
      );
    }
    return true;
  }

  private ours(sender: URL, request: Request): boolean {
    // Express's host: X-Forwarded-Host when TRUST_PROXY trusts the proxy, else the Host header.
    const own = request.host;
    if (own !== undefined && own !== '' && sender.host === hostOf(own)) {
      return true;
    }
    const base = this.config.publicBaseUrl;
    return base !== undefined && sender.origin === new URL(base).origin;
  }
}

/** The page the request came from: its `Origin`, else its `Referer`; undefined when neither is a URL. */
function senderOf(request: Request): URL | undefined {
  const origin = request.headers.origin;
  // `Origin: null` (a sandboxed frame, a privacy-sensitive redirect) names no page: never ours.
  const value = origin ?? request.headers.referer;
  if (value === undefined) {
    return undefined;
  }
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
  } catch {
    return undefined;
  }
}

/** A Host header as URL.host spells it (lower case, port 80 dropped as an http Origin drops it). */
function hostOf(header: string): string | undefined {
  try {
    return new URL(`http://${header}`).host;
  } catch {
    return undefined;
  }
}

/**
 * What a page holding a form must send, as a middleware for the routes of those pages: the
 * referrer (and so a real `Origin`) reaches this service's own origin, never another one.
 */
export function formPageHeaders(_request: Request, response: Response, next: NextFunction): void {
  response.setHeader('Referrer-Policy', 'same-origin');
  next();
}

import { applyDecorators } from '@nestjs/common';
import { ApiBearerAuth, ApiCookieAuth, ApiSecurity } from '@nestjs/swagger';

export const BEARER_SCHEME = 'bearer';
export const HEADER_SCHEME = 'X-Auth-Token';
export const COOKIE_SCHEME = 'session';

/** Documents that an operation takes a token from any of the three carriers (any one suffices). */
export function ApiAuth(): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ApiBearerAuth(BEARER_SCHEME),
    ApiSecurity(HEADER_SCHEME),
    ApiCookieAuth(COOKIE_SCHEME),
  );
}

import { DiscoveryService } from '@nestjs/core';

/**
 * A passport strategy for one more kind of token, besides user JWTs and API keys (a registry's
 * client token, API.md 10.1). The global guard tries the registered ones after the API key
 * strategy and before the JWT strategy. A strategy recognises its own tokens (by their mark):
 * one it does not recognise it `fail`s, so that the chain goes on; one it recognises it decides,
 * with the principal and its scopes, or with an error (a DomainError 'unauthorized').
 */
export interface TokenStrategy {
  /** The name it is registered under with passport (unique per app, as JwtStrategy's). */
  readonly passportName: string;
}

/** Registers a TokenStrategy class: with this decorator and listed in any module's providers. */
export const RegisterTokenStrategy = DiscoveryService.createDecorator<void>();

/** What a registered strategy fails with for a token that is not of its kind: the chain goes on. */
export const NOT_THIS_KIND = { message: 'Not a token of this kind' };

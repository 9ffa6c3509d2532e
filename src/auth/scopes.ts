import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiExtension } from '@nestjs/swagger';
import type { AuthUser } from './auth-user.js';

/**
 * LifeMonitor's OAuth2 scopes, the ones a registry client may ask for at `POST /oauth2/token`
 * (API.md 10.1). A registry token holds those it was granted.
 */
export const REGISTRY_CLIENT_SCOPES = [
  'registry.info',
  'registry.user',
  'registry.workflow.read',
  'registry.workflow.write',
  'registry.user.workflow.read',
  'registry.user.workflow.write',
  'workflow.read',
  'workflow.write',
  'testingService.read',
  'testingService.write',
  'user.profile',
  'user.workflow.read',
] as const;

export type RegistryClientScope = (typeof REGISTRY_CLIENT_SCOPES)[number];

/**
 * What every route that declares no scope needs. Only a person's own credentials (a login token,
 * an API key) hold it: a registry client can never be granted it, so a registry token reaches
 * exactly the routes that name one of its scopes, and no route asks what kind of token came.
 */
export const ACCOUNT_SCOPE = 'account';

/**
 * What a person may grant an application (API.md 15): 10.1's scopes but those that act for a
 * registry, which no person holds.
 */
export const APPLICATION_SCOPES: readonly RegistryClientScope[] = REGISTRY_CLIENT_SCOPES.filter(
  (scope) => !scope.startsWith('registry.'),
);

/** The scopes of a person's own credentials: everything but what acts for a registry. */
export const PERSON_SCOPES: ReadonlySet<string> = new Set([ACCOUNT_SCOPE, ...APPLICATION_SCOPES]);

/**
 * LifeMonitor's scopes that act as a person (its authorization code flows' `user.*`). A registry's
 * client token may be granted them (10.1 lists them), but it acts for the registry, which is
 * nobody's account: it never holds them, whatever it was granted.
 */
const PERSON_ACTING_SCOPES: ReadonlySet<string> = new Set<RegistryClientScope>([
  'user.profile',
  'user.workflow.read',
]);

/** Whether the caller's credentials hold `scope`: the one rule ScopesGuard applies to every kind of token. */
export function holdsScope(user: AuthUser, scope: string): boolean {
  if (user.registry !== undefined && PERSON_ACTING_SCOPES.has(scope)) {
    return false;
  }
  return (user.scopes ?? PERSON_SCOPES).has(scope);
}

export function isRegistryClientScope(value: string): value is RegistryClientScope {
  return (REGISTRY_CLIENT_SCOPES as readonly string[]).includes(value);
}

export const REQUIRED_SCOPE = 'auth:scope';

/**
 * The scope a route needs (LifeMonitor's, for the operations a registry client may call). A person's
 * credentials hold every scope but the `registry.*` ones; a registry token only those granted.
 */
export const RequireScope = (scope: RegistryClientScope): MethodDecorator & ClassDecorator =>
  applyDecorators(SetMetadata(REQUIRED_SCOPE, scope), ApiExtension('x-required-scope', scope));

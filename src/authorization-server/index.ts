/**
 * What the authorization server offers other code (the lint rule in eslint.config.js lets others
 * import from `authorization-server/` only through this file): its module, the rules of the
 * consent page and the applications a user registered, for the status pages.
 */
export { AuthorizationServerModule } from './authorization-server.module.js';
export { ApprovalsService } from './approvals.service.js';
export type { ApplicationAccess } from './approvals.js';
export { AuthorizationService } from './authorization.service.js';
export { ClientsService } from './clients.service.js';
export { ClientIdParam } from './dto/client.dto.js';
export type { OAuthClientEntity } from './entities/oauth-client.entity.js';

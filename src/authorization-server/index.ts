/**
 * What the authorization server offers other code (the lint rule in eslint.config.js lets others
 * import from `authorization-server/` only through this file): its module, and the applications
 * a user registered for their account page.
 */
export { AuthorizationServerModule } from './authorization-server.module.js';
export { ClientsService } from './clients.service.js';
export { ClientIdParam } from './dto/client.dto.js';
export type { OAuthClientEntity } from './entities/oauth-client.entity.js';

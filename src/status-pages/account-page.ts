import type { OAuthClientEntity } from '../authorization-server/index.js';
import { utcMinute } from '../common/utc-minute.js';
import { renderPage } from './templates.js';

/** The applications the person registered (API.md 15), with the forms to register and delete them. */
export function renderClientsSection(clients: OAuthClientEntity[]): string {
  return renderPage('account-clients', {
    clients: clients.map((client) => ({
      clientId: client.clientId,
      name: client.name,
      confidential: client.confidential,
      redirectUris: client.redirectUris,
      registered: { iso: client.createdAt.toISOString(), text: utcMinute(client.createdAt) },
    })),
  });
}

/** The page after registering an application: its client id, and its secret this once. */
export function renderClientCreated(
  viewer: string,
  client: OAuthClientEntity,
  clientSecret?: string,
): string {
  return renderPage('client-created', { viewer, name: client.name, clientId: client.clientId, clientSecret });
}

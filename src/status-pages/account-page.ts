import type { OAuthClientEntity } from '../authorization-server/index.js';
import { utcMinute } from '../common/utc-minute.js';
import { renderPage } from './templates.js';

/**
 * The account page (`/status/account`, API.md 15) is made of sections, each rendered by a function
 * of its own from what its feature answers; the page puts them one after the other.
 */
export function renderAccountPage(viewer: string, sections: string[]): string {
  return renderPage('account', { viewer, sections: sections.join('\n') });
}

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

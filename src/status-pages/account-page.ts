import type { ApplicationAccess, OAuthClientEntity } from '../authorization-server/index.js';
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

/** The applications the person let act for them (API.md 15), each with its revoke form. */
export function renderApprovalsSection(approvals: ApplicationAccess[]): string {
  return renderPage('account-approvals', {
    approvals: approvals.map((approval) => ({
      clientId: approval.clientId,
      name: approval.clientName,
      scopes: approval.scopes,
      granted: { iso: approval.grantedAt.toISOString(), text: utcMinute(approval.grantedAt) },
      used: approval.lastUsedAt
        ? { iso: approval.lastUsedAt.toISOString(), text: utcMinute(approval.lastUsedAt) }
        : undefined,
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

import { Injectable } from '@nestjs/common';
import type { AuthUser } from '../auth/auth-user.js';
import type { IdentityEntity } from '../auth/identity/entities/identity.entity.js';
import { IdentitiesService } from '../auth/identity/identities.service.js';
import { IdentityProviders } from '../auth/identity/identity-providers.js';
import { UsersService } from '../auth/users.service.js';
import { NO_PASSWORD } from '../auth/password-hasher.js';
import { utcMinute } from '../common/utc-minute.js';
import { ApprovalsService, ClientsService } from '../authorization-server/index.js';
import { renderApprovalsSection, renderClientsSection } from './account-page.js';
import { renderPage } from './templates.js';

/** A time as the pages show it: machine-readable and to the minute in UTC. */
function shown(date: Date): { iso: string; text: string } {
  return { iso: date.toISOString(), text: utcMinute(date) };
}

/**
 * The account page (`/status/account`, API.md 15): one render function per section, each over its
 * own reads, so that a section is added (the clients a person registered) without touching the
 * others.
 */
@Injectable()
export class AccountPageService {
  constructor(
    private readonly identities: IdentitiesService,
    private readonly providers: IdentityProviders,
    private readonly users: UsersService,
    private readonly clients: ClientsService,
    private readonly approvals: ApprovalsService,
  ) {}

  async page(viewer: AuthUser): Promise<string> {
    const sections = await Promise.all([
      this.identitiesSection(viewer),
      this.approvals.list(viewer.id).then(renderApprovalsSection),
      this.clients.list(viewer.id).then(renderClientsSection),
    ]);
    return renderPage('account', { viewer: viewer.username, roles: viewer.roles, sections });
  }

  /** Unlinks an identity through the page: the API's rule (never the last way in). */
  unlink(viewer: AuthUser, provider: string): Promise<void> {
    return this.identities.unlink(viewer.id, provider);
  }

  /** The ways to sign in: the password (or none), the linked identities with their unlink forms, and the others to link. */
  private async identitiesSection(viewer: AuthUser): Promise<string> {
    const [identities, account] = await Promise.all([
      this.identities.list(viewer.id),
      this.users.get(viewer.id),
    ]);
    const password = account.passwordHash !== NO_PASSWORD;
    const providers = this.providers.all();
    const labelOf = (name: string): string =>
      providers.find((provider) => provider.name === name)?.label ?? name;
    const byProvider = new Set(identities.map((identity) => identity.provider));
    // Unlinking a provider must leave a password or another provider's identity.
    const removable = (identity: IdentityEntity): boolean =>
      password || [...byProvider].some((provider) => provider !== identity.provider);
    return renderPage('account-identities', {
      password,
      identities: identities.map((identity) => ({
        label: labelOf(identity.provider),
        subject: identity.subject,
        username: identity.username,
        email: identity.email,
        linked: shown(identity.linkedAt),
        used: identity.lastUsedAt ? shown(identity.lastUsedAt) : undefined,
        unlink: removable(identity)
          ? `/status/account/identities/${encodeURIComponent(identity.provider)}/unlink`
          : undefined,
      })),
      linkable: providers.filter((provider) => !byProvider.has(provider.name)),
    });
  }
}

import { Inject, Injectable, Optional } from '@nestjs/common';
import { DomainError } from '../../common/errors/domain-error.js';
import { AuthService } from '../auth.service.js';
import type { UserEntity } from '../entities/user.entity.js';
import { UsersService } from '../users.service.js';
import type { IdentityEntity } from './entities/identity.entity.js';
import { IdentitiesRepository, type NewIdentity } from './identities.repository.js';
import type { ExternalIdentity, IdentityProvider } from './identity-provider.js';
import { IdentityProviders } from './identity-providers.js';
import { REGISTRY_PEOPLE, type RegistryPeople } from './registry-people.js';

/** The longest username made from a provider's name for a person (the column holds 256). */
const USERNAME_MAX = 64;

/**
 * Accounts and their identities (API.md 15): an identity finds its account by provider and subject,
 * and by nothing else: an e-mail the provider vouches for never reaches an account it is not linked
 * to. A SEEK provider that is a registry (API.md 10.1) shares its people's accounts with it.
 */
@Injectable()
export class IdentitiesService {
  constructor(
    private readonly repo: IdentitiesRepository,
    private readonly users: UsersService,
    private readonly providers: IdentityProviders,
    private readonly auth: AuthService,
    @Optional() @Inject(REGISTRY_PEOPLE) private readonly registryPeople?: RegistryPeople,
  ) {}

  /**
   * The account a person signs in to: the one their identity is linked to, else (a SEEK provider
   * that is a registry) the one the registry made for them, else a new one, without a password.
   * A disabled account is refused.
   */
  async signIn(provider: IdentityProvider, person: ExternalIdentity): Promise<UserEntity> {
    const seen = this.identityOf(provider, person);
    const known = await this.repo.findBySubject(provider.name, person.subject);
    if (known?.user) {
      await this.repo.touch(known.id, seen);
      return this.active(known.user);
    }
    const registryAccount = await this.registryAccount(provider, person.subject);
    if (registryAccount !== undefined) {
      await this.repo.add(registryAccount.id, seen);
      return this.active(registryAccount);
    }
    const made = await this.repo.createAccount(usernamesFor(provider, person), seen);
    const user = made.kind === 'made' ? made.user : made.identity.user;
    if (!user) {
      throw new DomainError(
        'conflict',
        `The ${provider.label} account was unlinked meanwhile; sign in again`,
      );
    }
    if (made.kind === 'made' && provider.registryUri !== undefined) {
      await this.registryPeople?.adopt(provider.registryUri, person.subject, user.id);
    }
    return this.active(user);
  }

  /**
   * Links the identity to a signed-in account. An identity on another account (or, for a SEEK
   * provider that is a registry, a person the registry knows as another account) is refused with
   * nothing moved.
   */
  async link(userId: number, provider: IdentityProvider, person: ExternalIdentity): Promise<UserEntity> {
    const user = await this.account(userId);
    if (!user) {
      throw new DomainError('unauthorized', 'The account to link to no longer exists');
    }
    this.active(user);
    const elsewhere = (): DomainError =>
      new DomainError(
        'conflict',
        `This ${provider.label} account is linked to another account of this service: nothing was changed. ` +
          'Sign in with it to use that account, or unlink it there first.',
      );
    const known = await this.repo.findBySubject(provider.name, person.subject);
    if (known && known.userId !== userId) {
      throw elsewhere();
    }
    const seen = this.identityOf(provider, person);
    if (known) {
      await this.repo.touch(known.id, seen);
      return user;
    }
    const registryAccount = await this.registryAccount(provider, person.subject);
    if (registryAccount !== undefined && registryAccount.id !== userId) {
      throw elsewhere();
    }
    if (!(await this.repo.add(userId, seen))) {
      const now = await this.repo.findBySubject(provider.name, person.subject);
      if (now?.userId !== userId) {
        throw elsewhere();
      }
    }
    if (provider.registryUri !== undefined && registryAccount === undefined) {
      await this.registryPeople?.adopt(provider.registryUri, person.subject, userId);
    }
    return user;
  }

  list(userId: number): Promise<IdentityEntity[]> {
    return this.repo.listOf(userId);
  }

  /** Unlinks the account's identity at `provider`; never its last way to sign in. */
  async unlink(userId: number, provider: string): Promise<void> {
    const outcome = await this.repo.unlink(userId, provider);
    if (outcome === 'last') {
      throw new DomainError(
        'conflict',
        `The ${provider} identity is this account's only way to sign in (it has no password and no other identity): link another first`,
      );
    }
    if (outcome === 0) {
      throw new DomainError('not_found', `The account has no identity at ${provider}`);
    }
  }

  /**
   * The account a person signed in to through a SEEK provider whose url is `uri` (a registry's
   * uri), by SEEK's id of them: the registry's user of that id is that account.
   */
  async accountOfSeekPerson(uri: string, externalId: string): Promise<number | undefined> {
    for (const provider of this.providers.all()) {
      if (provider.registryUri === uri) {
        const identity = await this.repo.findBySubject(provider.name, externalId);
        if (identity) {
          return identity.userId;
        }
      }
    }
    return undefined;
  }

  private async registryAccount(
    provider: IdentityProvider,
    subject: string,
  ): Promise<UserEntity | undefined> {
    if (provider.registryUri === undefined || !this.registryPeople) {
      return undefined;
    }
    const id = await this.registryPeople.accountOf(provider.registryUri, subject);
    return id === undefined ? undefined : this.account(id);
  }

  /** The account, or undefined when it was deleted. */
  private async account(id: number): Promise<UserEntity | undefined> {
    try {
      return await this.users.get(id);
    } catch (error) {
      if (error instanceof DomainError && error.kind === 'not_found') {
        return undefined;
      }
      throw error;
    }
  }

  private identityOf(provider: IdentityProvider, person: ExternalIdentity): NewIdentity {
    return {
      provider: provider.name,
      subject: person.subject,
      username: person.username?.slice(0, 256) ?? null,
      email: person.email && person.email.length <= 320 ? person.email : null,
    };
  }

  private active(user: UserEntity): UserEntity {
    if (!user.active) {
      throw new DomainError('forbidden', 'This account is disabled: it cannot sign in');
    }
    // A sign-in sees the account as it is now, not as cached for the guard.
    this.auth.forget(user.id);
    return user;
  }
}

/**
 * Names for a new account, in order: the provider's name of the person, then that with -2, -3, …
 * Colons (which the registries' own accounts use) and spaces become dashes.
 */
export function* usernamesFor(provider: IdentityProvider, person: ExternalIdentity): Generator<string> {
  const cleaned = (person.username ?? '')
    .normalize('NFC')
    .replace(/[\s:/\\]+/g, '-')
    .replace(/\p{Cc}/gu, '')
    .replace(/^-+|-+$/g, '')
    .slice(0, USERNAME_MAX);
  const base = cleaned === '' ? `${provider.name}-${person.subject}`.slice(0, USERNAME_MAX) : cleaned;
  yield base;
  for (let n = 2; n <= 50; n++) {
    yield `${base}-${n}`;
  }
  yield `${base}-${provider.name}-${person.subject}`.slice(0, 256);
}

import { randomBytes, randomUUID } from 'node:crypto';
import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import type { AuthUser } from '../auth/auth-user.js';
import { IdentitiesService } from '../auth/identity/identities.service.js';
import { UsersService } from '../auth/users.service.js';
import { discovered } from '../common/discovered.js';
import { DomainError } from '../common/errors/domain-error.js';
import { SealedBox } from '../common/sealed-box.js';
import { AppConfig } from '../config/app-config.js';
import {
  WorkflowsService,
  type Registered,
  type RegistrySummary,
  type WorkflowSelection,
  type WorkflowSummaryView,
} from '../workflows/index.js';
import {
  RegisterRegistryClient,
  type RegistryClient,
  type RegistryWorkflow,
} from './clients/registry-client.js';
import type { RegistryIdentityEntity } from './entities/registry-identity.entity.js';
import type { RegistryEntity } from './entities/registry.entity.js';
import { RegistriesRepository } from './registries.repository.js';
import { generateClientId, generateSecret } from './registry-secrets.js';
import { RegistrySecretHasher } from './registry-tokens.service.js';
import { RegistryDirectoryService, summaryOf } from './registry-directory.service.js';

export interface NewRegistryInput {
  name: string;
  type: string;
  uri: string;
}

export interface CreatedRegistry {
  registry: RegistryEntity;
  /** Shown once, never stored. */
  clientSecret: string;
}

/** `POST /registries/current/workflows` and its kin (API.md 10.1). */
export interface RegistrySubmission {
  identifier: string;
  version: string;
  public?: boolean;
  name?: string;
}

/** A page of a registry's list, or the whole of it from an offset. */
export interface ListRequest {
  limit?: number;
  offset?: number;
  status: boolean;
  versions: boolean;
}

export interface RegistryList {
  registry: RegistrySummary | null;
  items: WorkflowSummaryView[];
  versionStatuses?: Map<number, NonNullable<WorkflowSummaryView['status']>>;
}

/** A registry's user as `GET /registries/current/users` lists them. */
export interface RegistryUserView {
  id: number;
  username: string;
  /** The registry's id of them; null for a user of ours who linked the registry. */
  externalId: string | null;
}

/** One of the registry's workflows as its index shows it (`registry-index`). */
export interface IndexedWorkflow {
  registry: RegistryEntity;
  workflow: RegistryWorkflow;
  origin: string;
}

/** The longest list read at once for a registry (its own workflows are read in pages of this). */
const WHOLE_LIST = 100_000;

/**
 * Registries (API.md 10.1): made and revoked by admins, listed for anybody; a registry's token acts
 * for it on the workflows it sent; users link their account on a registry to register from it.
 * Registration by a registry is the registry's ordinary registration (WorkflowsService.register)
 * with the registry as the source of the crate and of the uuid.
 */
@Injectable()
export class RegistriesService implements OnModuleInit {
  private readonly personalTokens: SealedBox;
  private clients = new Map<string, RegistryClient>();

  constructor(
    private readonly repo: RegistriesRepository,
    private readonly users: UsersService,
    private readonly workflows: WorkflowsService,
    private readonly hasher: RegistrySecretHasher,
    private readonly discovery: DiscoveryService,
    private readonly directory: RegistryDirectoryService,
    private readonly identities: IdentitiesService,
    @Inject(AppConfig) config: AppConfig,
  ) {
    this.personalTokens = new SealedBox(config.auth.jwtSecret, 'registry personal token');
  }

  onModuleInit(): void {
    const clients = discovered<RegistryClient>(this.discovery, RegisterRegistryClient);
    this.clients = new Map(clients.map((client) => [client.type, client]));
  }

  /**
   * Makes a registry with its OAuth2 client and its own account (what the registry registers
   * without naming one of its users belongs to it). Throws conflict when the name is taken.
   */
  async create(input: NewRegistryInput): Promise<CreatedRegistry> {
    const account = await this.users.create(accountName(input.name), randomBytes(32).toString('base64url'), [
      'user',
    ]);
    const clientSecret = generateSecret();
    try {
      const registry = await this.repo.create({
        uuid: randomUUID(),
        name: input.name,
        type: input.type,
        uri: input.uri.replace(/\/+$/, ''),
        clientId: generateClientId(),
        clientSecretHash: this.hasher.hash(clientSecret),
        userId: account.id,
      });
      return { registry, clientSecret };
    } catch (error) {
      await this.users.discard(account.id);
      throw error;
    }
  }

  list(): Promise<RegistryEntity[]> {
    return this.repo.list();
  }

  async get(uuid: string): Promise<RegistryEntity> {
    const registry = await this.repo.findByUuid(uuid);
    if (!registry) {
      throw new DomainError('not_found', `No registry ${uuid}`);
    }
    return registry;
  }

  /**
   * Revokes a registry, all in one transaction: its client and tokens stop at once, its identities
   * go; the workflows it sent stay, with their owners, as if registered by link. Its accounts (its
   * own and those made for its users) are renamed after its uuid and disabled, so that nobody acts
   * as them and a registry of the same name (and its users) gets accounts of its own.
   */
  async remove(uuid: string): Promise<void> {
    const registry = await this.get(uuid);
    let retired: number[] = [];
    const removed = await this.repo.remove(registry.id, async (tx, accounts) => {
      const renamed = [
        { id: accounts.own, username: retiredAccountName(registry.uuid) },
        ...accounts.users.map(({ userId, externalId }) => ({
          id: userId,
          username: `${retiredAccountName(registry.uuid)}:${externalId}`,
        })),
      ];
      await this.users.retire(tx, renamed);
      await this.workflows.forgetRegistry(tx, registry.id);
      retired = renamed.map((account) => account.id);
    });
    if (!removed) {
      throw new DomainError('not_found', `No registry ${uuid}`);
    }
    this.users.forget(retired);
    this.directory.forget(registry.id);
  }

  /** The registry a registry token acts for. */
  async current(caller: AuthUser): Promise<RegistryEntity> {
    const id = caller.registry?.id;
    const registry = id === undefined ? null : await this.repo.findById(id);
    if (!registry) {
      throw new DomainError('unauthorized', 'This operation needs the token of a registry client');
    }
    return registry;
  }

  /** The registry's users the service knows: those it made for the registry, and those who linked it. */
  async usersOf(caller: AuthUser): Promise<{ registry: RegistryEntity; users: RegistryUserView[] }> {
    const registry = await this.current(caller);
    const identities = await this.repo.identitiesOf(registry.id);
    return {
      registry,
      users: identities.flatMap((identity) =>
        identity.user
          ? [{ id: identity.user.id, username: identity.user.username, externalId: identity.externalId }]
          : [],
      ),
    };
  }

  /** `registry-workflows-get`: the workflows the registry sent. */
  async registryWorkflows(caller: AuthUser, request: ListRequest): Promise<RegistryList> {
    const registry = await this.current(caller);
    return this.listed(registry, { registryId: registry.id }, request);
  }

  /** `registry-user-workflows-get`: one of the registry's users' workflows (none before their first). */
  async registryUserWorkflows(
    caller: AuthUser,
    externalId: string,
    request: ListRequest,
  ): Promise<RegistryList> {
    const registry = await this.current(caller);
    const identity = await this.repo.findIdentity(registry.id, externalId);
    if (!identity) {
      return { registry: summaryOf(registry), items: [] };
    }
    return this.listed(registry, { ownerId: identity.userId, registryId: registry.id }, request);
  }

  /** `user-registry-workflows-get`: the caller's workflows from one registry. */
  async userRegistryWorkflows(
    caller: AuthUser,
    registryUuid: string,
    request: ListRequest,
  ): Promise<RegistryList> {
    const registry = await this.get(registryUuid);
    return this.listed(registry, { ownerId: caller.id, registryId: registry.id }, request);
  }

  /** `registry-workflows-post`: the registry sends one of its workflows, registered as its own account's. */
  async submit(caller: AuthUser, submission: RegistrySubmission): Promise<Registered> {
    const registry = await this.current(caller);
    return this.register(caller, registry, submission, registry.userId, undefined);
  }

  /**
   * `registry-user-workflows-post`: the registry sends a workflow of one of its users, registered
   * as that user's local identity (made on first use).
   */
  async submitForUser(
    caller: AuthUser,
    externalId: string,
    submission: RegistrySubmission,
  ): Promise<Registered> {
    const registry = await this.current(caller);
    const identity = await this.identityFor(registry, externalId);
    return this.register(caller, registry, submission, identity.userId, undefined);
  }

  /** `user-registry-workflows-post`: a user registers from a registry they linked, with their personal token. */
  async submitAsUser(
    caller: AuthUser,
    registryUuid: string,
    submission: RegistrySubmission,
  ): Promise<Registered> {
    const registry = await this.get(registryUuid);
    const token = await this.personalToken(caller, registry);
    return this.register(caller, registry, submission, caller.id, token);
  }

  /** `PUT /users/current/registries/{uuid}`: links the caller's account on a registry (the token sealed). */
  async link(caller: AuthUser, registryUuid: string, token: string): Promise<RegistryEntity> {
    const registry = await this.get(registryUuid);
    if (caller.registry !== undefined) {
      throw new DomainError('forbidden', 'A registry token cannot link an account');
    }
    await this.repo.link(registry.id, caller.id, this.personalTokens.seal(token));
    return registry;
  }

  /** `registry-index`: the workflows the registry shows the caller. */
  async index(caller: AuthUser, registryUuid: string): Promise<IndexedWorkflow[]> {
    const registry = await this.get(registryUuid);
    const token = await this.personalToken(caller, registry);
    const client = this.clientOf(registry);
    const workflows = await client.workflows(registry, token);
    return workflows.map((workflow) => ({
      registry,
      workflow,
      origin: client.page(registry, workflow.identifier),
    }));
  }

  /** `registry-index-workflow`: one workflow as the registry shows it to the caller. */
  async indexWorkflow(caller: AuthUser, registryUuid: string, identifier: string): Promise<IndexedWorkflow> {
    const registry = await this.get(registryUuid);
    const token = await this.personalToken(caller, registry);
    const client = this.clientOf(registry);
    const workflow = await client.workflow(registry, identifier, token);
    return { registry, workflow, origin: client.page(registry, workflow.identifier) };
  }

  private async register(
    caller: AuthUser,
    registry: RegistryEntity,
    submission: RegistrySubmission,
    submitterId: number,
    token: string | undefined,
  ): Promise<Registered> {
    const client = this.clientOf(registry);
    const workflow = await client.workflow(registry, submission.identifier, token);
    if (workflow.uuid === null) {
      throw new DomainError(
        'upstream_failed',
        `${registry.name} gave workflow ${submission.identifier} no uuid`,
      );
    }
    const crate = client.crate(registry, workflow.identifier, submission.version, token);
    return this.workflows.register(caller, {
      rocLink: crate.link,
      authorization: crate.authorization,
      version: submission.version,
      uuid: workflow.uuid,
      name: submission.name ?? workflow.title,
      public: submission.public,
      registry: {
        id: registry.id,
        name: registry.name,
        identifier: workflow.identifier,
        originLink: client.page(registry, workflow.identifier, submission.version),
        submitterId,
      },
    });
  }

  private async listed(
    registry: RegistryEntity,
    selection: WorkflowSelection,
    request: ListRequest,
  ): Promise<RegistryList> {
    const items = await this.workflows.listOf(
      selection,
      { limit: request.limit ?? WHOLE_LIST, offset: request.offset },
      request.status,
    );
    const list: RegistryList = { registry: summaryOf(registry), items };
    if (request.versions && request.status) {
      list.versionStatuses = await this.workflows.versionStatuses(items.map((item) => item.workflow));
    }
    return list;
  }

  /** The local identity of one of the registry's users, made on first use (once, whatever the races). */
  private async identityFor(registry: RegistryEntity, externalId: string): Promise<RegistryIdentityEntity> {
    const known = await this.repo.findIdentity(registry.id, externalId);
    if (known) {
      return known;
    }
    // The person signed in here with the SEEK installation that is this registry: their account.
    const signedIn = await this.identities.accountOfSeekPerson(registry.uri, externalId);
    if (signedIn !== undefined) {
      await this.repo.adoptPerson(registry.id, signedIn, externalId);
      const adopted = await this.repo.findIdentity(registry.id, externalId);
      if (adopted) {
        return adopted;
      }
    }
    const username = `${accountName(registry.name)}:${externalId}`;
    const existing = await this.users.findByUsername(username);
    const user =
      existing ??
      (await this.users.create(username, undefined, ['user']).catch(async (error: unknown) => {
        // Made by a concurrent first use: take theirs.
        const made = await this.users.findByUsername(username);
        if (!made) {
          throw error;
        }
        return made;
      }));
    await this.repo.addIdentity(registry.id, user.id, externalId);
    const identity = await this.repo.findIdentity(registry.id, externalId);
    if (!identity) {
      // Recorded, then gone with its registry: deleted since the request began.
      throw new DomainError('not_found', 'The registry was deleted meanwhile');
    }
    return identity;
  }

  /** The caller's personal token on the registry; forbidden until they linked their account there. */
  private async personalToken(caller: AuthUser, registry: RegistryEntity): Promise<string> {
    const link = await this.repo.findLink(registry.id, caller.id);
    const token = link?.tokenSealed ? this.personalTokens.unseal(link.tokenSealed) : undefined;
    if (token === undefined) {
      throw new DomainError(
        'forbidden',
        `Link your account on the registry ${registry.name} first: PUT /users/current/registries/${registry.uuid} with your personal token`,
      );
    }
    return token;
  }

  private clientOf(registry: RegistryEntity): RegistryClient {
    const client = this.clients.get(registry.type);
    if (!client) {
      throw new DomainError(
        'conflict',
        `The registry ${registry.name} is of type '${registry.type}': the service cannot read workflows from it`,
      );
    }
    return client;
  }
}

/** The username of a registry's own account (its users' are this, a colon and their id). */
function accountName(registryName: string): string {
  return `registry:${registryName}`;
}

/**
 * The username of a deleted registry's own account: by its uuid, which no other registry has, and
 * outside the names of live registries' accounts.
 */
function retiredAccountName(registryUuid: string): string {
  return `deleted-registry:${registryUuid}`;
}

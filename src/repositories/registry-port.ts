import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { RepositoryLink, RepositorySource } from './hosts/repository-host.js';

/**
 * Following a repository failed (API.md 12): a version of a new tag or push could not be
 * registered (`ref` says which), or the repository is gone (`ref` null). Told once per failure,
 * whatever the number of copies.
 */
export interface FollowFailure {
  workflowId: number;
  workflowUuid: string;
  /** Whom to tell: the workflow's owner. */
  ownerId: number;
  /** The workflow's name and latest version, as notifications name a workflow. */
  name: string;
  version: string;
  /** `owner/repo`, as GitHub spells it. */
  repository: string;
  ref: { kind: 'tag' | 'branch'; name: string; commit: string | null } | null;
  /** Why, as the registration's refusal or GitHub's answer said it. */
  error: string;
}

/** A version following registers: a ref's commit, added to the workflow as its owner would. */
export interface FollowedRegistration {
  rocLink: string;
  version: string;
  uuid: string;
  repository: { link: RepositoryLink; source: RepositorySource };
  /** A branch's new commit replaces the version the branch registered before. */
  replace: boolean;
}

/** Where following tells of its failures, inside the transaction that records one. */
export interface FollowFailureSink {
  followFailed(tx: EntityManager, failure: FollowFailure, at: Date): Promise<void>;
}

/** What following needs of the registry: its one registration, and its events. */
export interface FollowedRegistry extends FollowFailureSink {
  /** Registers as WorkflowsService.register does; throws its DomainErrors. */
  register(owner: { id: number }, registration: FollowedRegistration): Promise<{ version: string }>;
}

/**
 * The registry as following reaches it. The registry uses repositories/ (a registration records
 * its repository, replies show what it follows), so following cannot import the registry back:
 * the registry connects itself here at start-up, before the first tick or webhook.
 */
@Injectable()
export class RegistryPort implements FollowedRegistry {
  private registry?: FollowedRegistry;

  connect(registry: FollowedRegistry): void {
    this.registry = registry;
  }

  register(owner: { id: number }, registration: FollowedRegistration): Promise<{ version: string }> {
    return this.connected().register(owner, registration);
  }

  followFailed(tx: EntityManager, failure: FollowFailure, at: Date): Promise<void> {
    return this.connected().followFailed(tx, failure, at);
  }

  private connected(): FollowedRegistry {
    if (!this.registry) {
      throw new Error('following was used before the registry connected to it');
    }
    return this.registry;
  }
}

import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { FollowFailure } from '../repositories/index.js';

/** An instance a registration added, with its version and the service it runs on. */
export interface AddedInstance {
  instanceId: number;
  versionId: number;
  serviceId: number;
  /** The service's type (`github`, `travis`, …), its URL and the instance's resource on it. */
  serviceType: string;
  serviceUrl: string;
  resource: string;
}

/** A version a registration added, with its workflow and the user who registered it. */
export interface AddedVersion {
  workflowId: number;
  workflowUuid: string;
  versionId: number;
  submitterId: number;
  /** The version is the workflow's first: the registration created the workflow. */
  newWorkflow: boolean;
}

/** Told about a registered version inside the registration's transaction. */
export type VersionAddedListener = (tx: EntityManager, added: AddedVersion, at: Date) => Promise<void>;

/**
 * Told about the instances of a registration inside its transaction, with the registration's
 * time: what it writes commits or rolls back with the registration.
 */
export type InstancesAddedListener = (
  tx: EntityManager,
  added: readonly AddedInstance[],
  at: Date,
) => Promise<void>;

/**
 * Told, inside the transaction that changed it, that an instance now names another resource:
 * what was learnt about the old one (builds, ETag, back-off) no longer applies.
 */
export type InstanceRetargetedListener = (
  tx: EntityManager,
  instance: RetargetedInstance,
  at: Date,
) => Promise<void>;

/** An instance deleted, with the version it belonged to. */
export interface DeletedInstance {
  instanceId: number;
  versionId: number;
}

/**
 * Told, inside the transaction that deleted it, that an instance is gone (its builds and check
 * state went with it by cascade): what was derived from its builds no longer holds.
 */
export type InstanceDeletedListener = (tx: EntityManager, instance: DeletedInstance) => Promise<void>;

/** An instance whose resource changed, with its service's type and the new resource. */
export interface RetargetedInstance {
  instanceId: number;
  serviceType: string;
  serviceUrl: string;
  resource: string;
}

/** Told inside the transaction that records the failure: what it writes commits with it, or not at all. */
/** A workflow's own re-run interval changed (`PUT /workflows/{uuid}`, API.md 11); null: the default. */
export type RerunIntervalChangedListener = (
  tx: EntityManager,
  workflowId: number,
  days: number | null,
) => Promise<void>;

export type FollowFailedListener = (tx: EntityManager, failure: FollowFailure, at: Date) => Promise<void>;

/**
 * What happens in the registry that other features keep state about, without the registry
 * knowing them: test monitoring listens here to make new instances due for a first check, and
 * to start over with an instance whose resource changed (a deleted instance takes monitoring's
 * rows with it by cascade, and its version's stored status is computed again); notifications to subscribe the submitter to a new workflow, and to
 * tell an owner that following their repository failed.
 */
@Injectable()
export class RegistryEvents {
  private readonly instancesAddedListeners: InstancesAddedListener[] = [];
  private readonly versionAddedListeners: VersionAddedListener[] = [];
  private readonly instanceRetargetedListeners: InstanceRetargetedListener[] = [];
  private readonly followFailedListeners: FollowFailedListener[] = [];
  private readonly rerunIntervalListeners: RerunIntervalChangedListener[] = [];
  private readonly instanceDeletedListeners: InstanceDeletedListener[] = [];

  onInstanceDeleted(listener: InstanceDeletedListener): void {
    this.instanceDeletedListeners.push(listener);
  }

  /** Called by the registry's repository in the transaction that deleted the instance. */
  async instanceDeleted(tx: EntityManager, instance: DeletedInstance): Promise<void> {
    for (const listener of this.instanceDeletedListeners) {
      await listener(tx, instance);
    }
  }

  onRerunIntervalChanged(listener: RerunIntervalChangedListener): void {
    this.rerunIntervalListeners.push(listener);
  }

  async rerunIntervalChanged(tx: EntityManager, workflowId: number, days: number | null): Promise<void> {
    for (const listener of this.rerunIntervalListeners) {
      await listener(tx, workflowId, days);
    }
  }

  onFollowFailed(listener: FollowFailedListener): void {
    this.followFailedListeners.push(listener);
  }

  /** Called by the registry's repository in the transaction that records the failure. */
  async followFailed(tx: EntityManager, failure: FollowFailure, at: Date): Promise<void> {
    for (const listener of this.followFailedListeners) {
      await listener(tx, failure, at);
    }
  }

  onVersionAdded(listener: VersionAddedListener): void {
    this.versionAddedListeners.push(listener);
  }

  /** Called by the registry's repository in the registration's transaction. */
  async versionAdded(tx: EntityManager, added: AddedVersion, at: Date): Promise<void> {
    for (const listener of this.versionAddedListeners) {
      await listener(tx, added, at);
    }
  }

  onInstancesAdded(listener: InstancesAddedListener): void {
    this.instancesAddedListeners.push(listener);
  }

  onInstanceRetargeted(listener: InstanceRetargetedListener): void {
    this.instanceRetargetedListeners.push(listener);
  }

  /** Called by the registry's repository in the transaction that changed the instance's resource. */
  async instanceRetargeted(tx: EntityManager, instance: RetargetedInstance, at: Date): Promise<void> {
    for (const listener of this.instanceRetargetedListeners) {
      await listener(tx, instance, at);
    }
  }

  /** Called by the registry's repository in the registration's transaction. */
  async instancesAdded(tx: EntityManager, added: readonly AddedInstance[], at: Date): Promise<void> {
    if (added.length === 0) {
      return;
    }
    for (const listener of this.instancesAddedListeners) {
      await listener(tx, added, at);
    }
  }
}

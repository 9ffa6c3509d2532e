import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';

/** An instance a registration added, with its version and the service it runs on. */
export interface AddedInstance {
  instanceId: number;
  versionId: number;
  serviceId: number;
  /** The service's type (`github`, `travis`, …) and the instance's resource on it. */
  serviceType: string;
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
 * What happens in the registry that other features keep state about, without the registry
 * knowing them: test monitoring listens here to make new instances due for a first check,
 * notifications to subscribe the submitter to a new workflow.
 */
@Injectable()
export class RegistryEvents {
  private readonly instancesAddedListeners: InstancesAddedListener[] = [];
  private readonly versionAddedListeners: VersionAddedListener[] = [];

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

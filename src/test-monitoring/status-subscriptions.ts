import { Injectable } from '@nestjs/common';
import type { AuthUser } from '../auth/auth-user.js';
import type { Viewer } from '../auth/optional-auth.decorator.js';

/** A subscription to a workflow as LifeMonitor's replies show it (API.md 6.1). */
export interface WorkflowSubscription {
  user: { id: number; username: string };
  resource: { uuid: string; type: 'workflow' };
  /** Seconds since the epoch, as a decimal string. */
  created: string;
  modified: string;
  events: readonly string[];
}

/** A person's subscriptions to the workflow of this id. */
export type SubscriptionsReader = (user: AuthUser, workflowId: number) => Promise<WorkflowSubscription[]>;

/**
 * The port through which the workflow status reply carries the caller's subscriptions
 * (LifeMonitor's `subscriptions`, API.md 10) without test monitoring knowing where they are kept:
 * notifications, which imports this feature (so this feature cannot import it), gives its reader
 * at start-up.
 */
@Injectable()
export class StatusSubscriptions {
  private reader: SubscriptionsReader | undefined;

  readWith(reader: SubscriptionsReader): void {
    this.reader = reader;
  }

  /**
   * The viewer's subscriptions to the workflow. Anonymous callers and registries' tokens have none
   * (LifeMonitor answers them `[]`): a registry acts for its users, it does not subscribe.
   */
  of(viewer: Viewer, workflowId: number): Promise<WorkflowSubscription[]> {
    if (viewer === undefined || viewer.registry !== undefined || this.reader === undefined) {
      return Promise.resolve([]);
    }
    return this.reader(viewer, workflowId);
  }
}

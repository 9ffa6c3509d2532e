import { Injectable } from '@nestjs/common';

/**
 * Says "following work is due now" (a webhook's new tag, a follow set or changed) to whoever
 * does it, the FollowScheduler, without the writers knowing it: it subscribes here.
 */
@Injectable()
export class FollowQueue {
  private readonly listeners: (() => void)[] = [];

  onWake(listener: () => void): void {
    this.listeners.push(listener);
  }

  wake(): void {
    for (const listener of this.listeners) {
      listener();
    }
  }
}

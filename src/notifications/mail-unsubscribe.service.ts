import { Injectable } from '@nestjs/common';
import { Clock } from '../common/clock.js';
import { DomainError } from '../common/errors/domain-error.js';
import { DeliveriesRepository } from './deliveries.repository.js';
import { eventsWithout, wants } from './events.js';
import { NotificationsRepository } from './notifications.repository.js';
import { UnsubscribeLinks, type UnsubscribeList } from './unsubscribe-links.js';

/** What an unsubscribe link stops, as its page tells it. */
export interface UnsubscribeView {
  list: UnsubscribeList;
  /** The e-mail address of the link's channel; undefined once the channel is gone. */
  address?: string;
  /** Whether mails of the list still go to the user: false once unsubscribed. */
  active: boolean;
}

/** The one value RFC 8058 has a one-click POST carry (`List-Unsubscribe=One-Click`). */
export const ONE_CLICK = { field: 'List-Unsubscribe', value: 'One-Click' } as const;

/**
 * One-click unsubscribing from mails (RFC 8058): the link (UnsubscribeLinks) is the credential.
 * A mail about a workflow's builds comes from the user's subscription to the workflow, so its
 * link ends that subscription, as POST /workflows/{uuid}/unsubscribe does (and so the workflow's
 * notifications through every channel); a FOLLOW_FAILED mail comes to the workflow's owner
 * whatever they subscribe to, so its link turns FOLLOW_FAILED off on that e-mail channel, and
 * removes the channel when it wanted nothing else. Doing it again changes nothing.
 */
@Injectable()
export class MailUnsubscribeService {
  constructor(
    private readonly links: UnsubscribeLinks,
    private readonly subscriptions: NotificationsRepository,
    private readonly channels: DeliveriesRepository,
    private readonly clock: Clock,
  ) {}

  /** What the link stops, changing nothing (its GET: mail scanners fetch links). */
  async preview(token: string): Promise<UnsubscribeView> {
    const target = this.links.open(token, this.clock.nowMs());
    const channel = await this.channels.findChannel(target.userId, target.channelId);
    const active =
      target.list.kind === 'workflow'
        ? await this.subscriptions.isSubscribed(target.userId, target.list.workflowUuid)
        : channel !== null && wants(channel.events, 'FOLLOW_FAILED');
    return { list: target.list, address: channel?.target, active };
  }

  /**
   * Stops what the link names, when the form carries `List-Unsubscribe=One-Click`; throws
   * DomainError invalid_input without it, or for a link that is not ours, forbidden for one
   * that expired (UnsubscribeLinks.open).
   */
  async unsubscribe(token: string, oneClick: string | null): Promise<UnsubscribeView> {
    const target = this.links.open(token, this.clock.nowMs());
    if (oneClick !== ONE_CLICK.value) {
      throw new DomainError(
        'invalid_input',
        `the form must carry ${ONE_CLICK.field}=${ONE_CLICK.value} (RFC 8058); nothing was changed`,
        [{ field: ONE_CLICK.field, message: `must be ${ONE_CLICK.value}` }],
      );
    }
    const channel = await this.channels.findChannel(target.userId, target.channelId);
    if (target.list.kind === 'workflow') {
      await this.subscriptions.unsubscribeFrom(target.userId, target.list.workflowUuid);
    } else if (channel && wants(channel.events, 'FOLLOW_FAILED')) {
      const left = eventsWithout(channel.events, 'FOLLOW_FAILED');
      if (left.length > 0) {
        await this.channels.setChannelEvents(channel.userId, channel.id, left);
      } else {
        await this.channels.deleteChannel(channel.userId, channel.id);
      }
    }
    return { list: target.list, address: channel?.target, active: false };
  }
}

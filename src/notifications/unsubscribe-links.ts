import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { DomainError } from '../common/errors/domain-error.js';
import { utcMinute } from '../common/utc-minute.js';
import { AppConfig } from '../config/app-config.js';
import type { RaisedEvent } from './events.js';

/** How long a mail's unsubscribe link works: a mail is read, or unsubscribed from, within weeks. */
export const UNSUBSCRIBE_LINK_DAYS = 60;
const DAY_MS = 24 * 3600_000;
const VERSION = 'u1';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * What a mail's unsubscribe link stops (RFC 8058: it names the recipient and the list):
 * `workflow`, the user's subscription to that workflow, which every mail of its events comes
 * from; `follow-failed`, FOLLOW_FAILED on that e-mail channel, which its owner gets whatever they
 * subscribe to.
 */
export type UnsubscribeList = { kind: 'workflow'; workflowUuid: string } | { kind: 'follow-failed' };

export interface UnsubscribeTarget {
  userId: number;
  channelId: number;
  list: UnsubscribeList;
}

/** The list a mail of `event` about `workflowUuid` belongs to. */
export function listOf(event: RaisedEvent, workflowUuid: string): UnsubscribeList {
  return event === 'FOLLOW_FAILED' ? { kind: 'follow-failed' } : { kind: 'workflow', workflowUuid };
}

/**
 * Unsubscribe links of mails (RFC 8058, RFC 2369): `<base>/unsubscribe/<token>`, the token the
 * recipient (user and channel), the list and an expiry, signed with HMAC-SHA256 under a key
 * derived (HKDF-SHA256) from JWT_SECRET for this purpose alone. The link is the only credential
 * its POST needs (no cookie, no token, as RFC 8058 asks): a link that is altered, made under
 * another secret, or past its expiry opens nothing.
 */
@Injectable()
export class UnsubscribeLinks {
  private readonly key: Buffer;

  constructor(config: AppConfig) {
    this.key = Buffer.from(hkdfSync('sha256', config.auth.jwtSecret, '', 'mail unsubscribe link', 32));
  }

  /** The link for a mail sent at `nowMs`, working UNSUBSCRIBE_LINK_DAYS from then. */
  linkFor(baseUrl: string, target: UnsubscribeTarget, nowMs: number): string {
    const expires = Math.ceil((nowMs + UNSUBSCRIBE_LINK_DAYS * DAY_MS) / 1000);
    const list = target.list.kind === 'workflow' ? `w:${target.list.workflowUuid}` : 'f';
    const message = [VERSION, target.userId, target.channelId, list, expires].join('|');
    return `${baseUrl}/unsubscribe/${Buffer.from(message).toString('base64url')}.${this.mac(message)}`;
  }

  /**
   * What the token of a link stops. Throws DomainError invalid_input when it is not a token of
   * ours (malformed, altered, signed under another secret), forbidden when it expired.
   */
  open(token: string, nowMs: number): UnsubscribeTarget {
    const [encoded, mac, ...rest] = token.split('.');
    const message = Buffer.from(encoded ?? '', 'base64url').toString('utf8');
    // Compared as the text signed, not as the bytes it decodes to: base64url ignores a last
    // character's spare bits and skips what it cannot read, so another spelling of the same bytes
    // is refused as any other change is.
    const presented = Buffer.from(mac ?? '');
    const expected = Buffer.from(this.mac(message));
    if (
      rest.length > 0 ||
      presented.length !== expected.length ||
      !timingSafeEqual(presented, expected) ||
      Buffer.from(message).toString('base64url') !== encoded
    ) {
      throw new DomainError(
        'invalid_input',
        'this unsubscribe link is not valid: it was changed, or it is not one of this service',
      );
    }
    const [version, user, channel, list, expires] = message.split('|');
    const target = parseTarget(version, user, channel, list);
    if (!target || !/^\d+$/.test(expires ?? '')) {
      throw new DomainError('invalid_input', 'this unsubscribe link is not valid: it is not in a known form');
    }
    const expiresMs = Number(expires) * 1000;
    if (nowMs >= expiresMs) {
      const how =
        target.list.kind === 'workflow'
          ? `POST /workflows/${target.list.workflowUuid}/unsubscribe with your token`
          : 'remove the channel (DELETE /users/current/channels/{id}) with your token';
      throw new DomainError(
        'forbidden',
        `This unsubscribe link expired on ${utcMinute(new Date(expiresMs))}: nothing was changed. ` +
          `A newer mail has a link that works; or ${how}.`,
      );
    }
    return target;
  }

  private mac(message: string): string {
    return createHmac('sha256', this.key).update(message, 'utf8').digest('base64url');
  }
}

function parseTarget(
  version: string | undefined,
  user: string | undefined,
  channel: string | undefined,
  list: string | undefined,
): UnsubscribeTarget | undefined {
  if (version !== VERSION || !/^[1-9]\d{0,15}$/.test(user ?? '') || !/^[1-9]\d{0,15}$/.test(channel ?? '')) {
    return undefined;
  }
  const ids = { userId: Number(user), channelId: Number(channel) };
  if (list === 'f') {
    return { ...ids, list: { kind: 'follow-failed' } };
  }
  const workflowUuid = list?.startsWith('w:') ? list.slice(2) : '';
  return UUID.test(workflowUuid) ? { ...ids, list: { kind: 'workflow', workflowUuid } } : undefined;
}

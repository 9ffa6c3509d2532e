import type { AppConfig } from '../../config/app-config.js';
import type { ChannelEntity, ChannelType } from '../entities/channel.entity.js';
import type { RaisedEvent } from '../events.js';
import type { NotificationView } from '../notification-data.js';

/** One delivery's content. */
export interface DeliveryPayload {
  /** X-Delivery: the same on every attempt of this delivery. */
  deliveryUuid: string;
  event: RaisedEvent;
  notification: NotificationView;
  /** The workflow's status page. */
  statusUrl: string;
}

/** How an attempt ended; `error` never carries a secret. */
export interface SendOutcome {
  sent: boolean;
  statusCode?: number;
  error?: string;
}

/** Sends a delivery to one kind of channel; never rejects, and ends within its timeout. */
export interface ChannelSender {
  readonly type: ChannelType;
  send(channel: ChannelEntity, payload: DeliveryPayload): Promise<SendOutcome>;
}

export const CHANNEL_SENDERS = Symbol('CHANNEL_SENDERS');

/**
 * One attempt's bound (UPSTREAM_TIMEOUT_SECONDS, as every outbound call): a receiver that answers
 * slowly holds one delivery this long at most, never the worker.
 */
export function sendTimeoutMs(config: AppConfig): number {
  return config.monitoring.upstreamTimeoutMs;
}

/** The facts of a notification in one line of text (Slack, e-mail). */
export function summaryOf(payload: DeliveryPayload): string {
  const { data } = payload.notification;
  const instance = data.instance.name ?? data.instance.uuid;
  const build = data.build
    ? `build ${data.build.build_id} ${data.build.status}${data.build.links.origin ? ` (${data.build.links.origin})` : ''}`
    : 'no finished build';
  return (
    `${payload.event}: workflow "${data.workflow.name}" version ${data.workflow.version}, ` +
    `instance "${instance}": ${build}. Status: ${payload.statusUrl}`
  );
}

/** Removes secrets from a message that may quote them (an error of a library, a URL). */
export function withoutSecrets(message: string, secrets: readonly (string | undefined | null)[]): string {
  let clean = message;
  for (const secret of secrets) {
    if (secret) {
      clean = clean.split(secret).join('***');
    }
  }
  return clean;
}

import { createHmac } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { plainName } from '../../common/bidi.js';
import { AppConfig } from '../../config/app-config.js';
import { OutboundError, sendRequest } from '../../common/net/http-client.js';
import type { ChannelEntity, ChannelType } from '../entities/channel.entity.js';
import {
  sendTimeoutMs,
  summaryOf,
  withoutSecrets,
  type ChannelSender,
  type DeliveryPayload,
  type SendOutcome,
} from './channel-sender.js';

/**
 * POSTs JSON to a URL: the private-address guard on every send (unless
 * ALLOW_PRIVATE_NETWORK_LINKS), no redirect followed (a 3xx is a failed attempt), the whole
 * exchange bounded by the send timeout, the answer's body not read.
 */
async function postJson(
  url: string,
  body: string,
  headers: Record<string, string>,
  allowPrivate: boolean,
  timeoutMs: number,
  secrets: readonly (string | null)[],
): Promise<SendOutcome> {
  try {
    const response = await sendRequest(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
      timeoutMs,
      allowPrivate,
      maxRedirects: 0,
    });
    response.body.destroy();
    if (response.status >= 200 && response.status < 300) {
      return { sent: true, statusCode: response.status };
    }
    const why = response.status >= 300 && response.status < 400 ? ' (redirects are not followed)' : '';
    return {
      sent: false,
      statusCode: response.status,
      error: `the receiver answered ${response.status}${why}`,
    };
  } catch (error) {
    const message = error instanceof OutboundError ? error.message : 'the request failed';
    return { sent: false, error: withoutSecrets(message, secrets) };
  }
}

/** `webhook`: `{"event", "notification"}` signed with the channel's secret (API.md 6.4). */
@Injectable()
export class WebhookSender implements ChannelSender {
  readonly type: ChannelType = 'webhook';

  constructor(private readonly config: AppConfig) {}

  send(channel: ChannelEntity, payload: DeliveryPayload): Promise<SendOutcome> {
    const body = JSON.stringify({ event: payload.event, notification: payload.notification });
    const headers: Record<string, string> = {
      'x-event': payload.event,
      'x-delivery': payload.deliveryUuid,
    };
    if (channel.secret) {
      headers['x-signature-256'] = signature(channel.secret, body);
    }
    return postJson(
      channel.target,
      body,
      headers,
      this.config.notifications.allowPrivateTargets,
      sendTimeoutMs(this.config),
      [channel.secret],
    );
  }
}

/** `slack`: Slack's (and Matrix hookshot's) incoming-webhook `{"text"}`. */
@Injectable()
export class SlackSender implements ChannelSender {
  readonly type: ChannelType = 'slack';

  constructor(private readonly config: AppConfig) {}

  send(channel: ChannelEntity, payload: DeliveryPayload): Promise<SendOutcome> {
    const name = plainName(payload.notification.data.workflow.name);
    const body = JSON.stringify({ text: slackEscape(`[${name}] ${summaryOf(payload)}`) });
    return postJson(
      channel.target,
      body,
      { 'x-delivery': payload.deliveryUuid },
      this.config.notifications.allowPrivateTargets,
      sendTimeoutMs(this.config),
      // A Slack target URL is itself the secret: errors never quote it.
      [channel.target],
    );
  }
}

/**
 * Slack's formatting escapes (docs.slack.dev, "Formatting text for app surfaces": escaping text):
 * `&`, `<` and `>` as `&amp;`, `&lt;`, `&gt;`, so that a name such as `<!channel>` or
 * `<https://evil.example|re-run here>` is shown as written, never as a mention or a disguised link.
 */
export function slackEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** `sha256=<hex HMAC-SHA256 of body with secret>`, as GitHub signs its webhooks. */
export function signature(secret: string, body: string | Buffer): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

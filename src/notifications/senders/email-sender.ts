import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import { createTransport } from 'nodemailer';
import { plainName } from '../../common/bidi.js';
import { Clock } from '../../common/clock.js';
import { AppConfig } from '../../config/app-config.js';
import type { ChannelEntity, ChannelType } from '../entities/channel.entity.js';
import {
  mailTextOf,
  sendTimeoutMs,
  withoutSecrets,
  type ChannelSender,
  type DeliveryPayload,
  type SendOutcome,
} from './channel-sender.js';
import { listOf, UnsubscribeLinks } from '../unsubscribe-links.js';

/**
 * `email`: a text mail through SMTP_URL from MAIL_FROM; a 250 ends the delivery. Each mail carries
 * its one-click unsubscribe link (RFC 8058: `List-Unsubscribe` with the HTTPS link and
 * `List-Unsubscribe-Post: List-Unsubscribe=One-Click`), which its body gives too.
 */
@Injectable()
export class EmailSender implements ChannelSender, OnModuleDestroy {
  readonly type: ChannelType = 'email';
  private transport?: ReturnType<typeof createTransport>;

  constructor(
    private readonly config: AppConfig,
    private readonly links: UnsubscribeLinks,
    private readonly clock: Clock,
  ) {}

  async send(channel: ChannelEntity, payload: DeliveryPayload): Promise<SendOutcome> {
    const smtpUrl = this.config.notifications.smtpUrl;
    if (!smtpUrl) {
      return { sent: false, error: 'SMTP_URL is not set' };
    }
    const { workflow } = payload.notification.data;
    const unsubscribe = this.links.linkFor(
      payload.baseUrl,
      { userId: channel.userId, channelId: channel.id, list: listOf(payload.event, workflow.uuid) },
      this.clock.nowMs(),
    );
    try {
      const info = (await this.transporter(smtpUrl).sendMail({
        from: this.config.notifications.mailFrom,
        to: channel.target,
        subject: `[${plainName(workflow.name)}] ${payload.event}`,
        text: mailTextOf(payload, channel.id, unsubscribe),
        headers: {
          'X-Delivery': payload.deliveryUuid,
          'List-Unsubscribe': `<${unsubscribe}>`,
          'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
        },
      })) as { response?: unknown };
      const code = Number(
        /^(\d{3})/.exec(typeof info.response === 'string' ? info.response : '')?.[1] ?? 250,
      );
      return { sent: true, statusCode: code };
    } catch (error) {
      const failure = error as { message?: string; responseCode?: number };
      return {
        sent: false,
        statusCode: typeof failure.responseCode === 'number' ? failure.responseCode : undefined,
        error: withoutSecrets(failure.message ?? 'sending the mail failed', smtpSecrets(smtpUrl)),
      };
    }
  }

  onModuleDestroy(): void {
    this.transport?.close();
  }

  private transporter(smtpUrl: string): ReturnType<typeof createTransport> {
    this.transport ??= createTransport({
      url: smtpUrl,
      connectionTimeout: sendTimeoutMs(this.config),
      greetingTimeout: sendTimeoutMs(this.config),
      socketTimeout: sendTimeoutMs(this.config),
    });
    return this.transport;
  }
}

/** The URL's user and password, as they appear raw and decoded. */
function smtpSecrets(smtpUrl: string): string[] {
  try {
    const url = new URL(smtpUrl);
    return [url.password, decodeURIComponent(url.password), url.username, smtpUrl].filter(Boolean);
  } catch {
    return [smtpUrl];
  }
}

import { plainName } from '../../common/bidi.js';
import type { AppConfig } from '../../config/app-config.js';
import type { ChannelEntity, ChannelType } from '../entities/channel.entity.js';
import type { RaisedEvent } from '../events.js';
import type { NotificationView } from '../notification-data.js';
import { utcMinute } from '../../common/utc-minute.js';

/** One delivery's content. */
export interface DeliveryPayload {
  /** X-Delivery: the same on every attempt of this delivery. */
  deliveryUuid: string;
  event: RaisedEvent;
  notification: NotificationView;
  /** The workflow's status page. */
  statusUrl: string;
  /** Where the service is reached (PUBLIC_BASE_URL), for the links a mail gives. */
  baseUrl: string;
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

/** The facts of a notification in one line of text (Slack); names without bidi controls. */
export function summaryOf(payload: DeliveryPayload): string {
  const { data } = payload.notification;
  if (!data.instance) {
    return (
      `${payload.event}: workflow "${plainName(data.workflow.name)}": ${followFailureText(data)}. ` +
      `Status: ${payload.statusUrl}`
    );
  }
  const instance = plainName(data.instance.name ?? data.instance.uuid);
  const build = data.build
    ? `build ${data.build.build_id} ${data.build.status}` +
      (data.build.failure ? ` [${data.build.failure.class}: ${plainName(data.build.failure.reason)}]` : '') +
      (data.build.links.origin ? ` (${data.build.links.origin})` : '')
    : 'no finished build';
  return (
    `${payload.event}: workflow "${plainName(data.workflow.name)}" version ${plainName(data.workflow.version)}, ` +
    `instance "${instance}": ${build}. Status: ${payload.statusUrl}`
  );
}

const EVENT_LINES: Record<DeliveryPayload['event'], string> = {
  BUILD_FAILED: 'A test build failed after one had passed.',
  BUILD_RECOVERED: 'A test build passed again after failing.',
  TESTS_STOPPED: 'No test build has finished for a long time, or the CI workflow was disabled.',
  SCHEDULE_DISABLED:
    'The CI has switched the workflow off (GitHub does so to scheduled workflows after 60 days without ' +
    'activity in the repository): no test runs, scheduled or started from here, until someone enables it again.',
  FOLLOW_FAILED: 'A new version of the GitHub repository the workflow follows could not be registered.',
};

/** What failed in following a repository, in a sentence without its final stop. */
function followFailureText(data: DeliveryPayload['notification']['data']): string {
  const repository = plainName(data.repository?.full_name ?? 'its repository');
  const what = data.ref
    ? `the ${data.ref.type} ${plainName(data.ref.name)} of ${repository} could not be registered`
    : `the repository ${repository} could not be read`;
  return `${what}: ${plainName(data.error ?? 'no reason given').replace(/\.$/, '')}`;
}

/** A notification's time (epoch seconds, as its payload carries it) as mails show it. */
function utc(epochSeconds: string): string {
  return utcMinute(new Date(Number(epochSeconds) * 1000));
}

/**
 * A notification as a plain-text mail body: what happened, then one fact a line (workflow,
 * version, instance, status, when, the CI run, the status page), then how to stop these mails:
 * first the mail's unsubscribe link, then the API's ways.
 */
export function mailTextOf(payload: DeliveryPayload, channelId: number, unsubscribeUrl: string): string {
  const { data } = payload.notification;
  if (!data.instance) {
    return followFailureMail(payload, channelId, unsubscribeUrl);
  }
  const build = data.build;
  const facts: [string, string][] = [
    ['Workflow', plainName(data.workflow.name)],
    ['Version', plainName(data.workflow.version)],
    ['Instance', plainName(data.instance.name ?? data.instance.uuid)],
    ['Status', build ? `${build.status} (build ${build.build_id})` : 'no finished build'],
    ...(build?.failure
      ? [['Failure', `${build.failure.class}: ${plainName(build.failure.reason)}`] as [string, string]]
      : []),
    ['When', build ? utc(build.timestamp) : utc(payload.notification.created)],
    ['CI run', build?.links.origin || '(none)'],
    ['Status page', payload.statusUrl],
  ];
  const width = Math.max(...facts.map(([label]) => label.length)) + 2;
  const workflow = data.workflow.uuid;
  return [
    `${payload.event}: ${EVENT_LINES[payload.event]}`,
    '',
    ...facts.map(([label, value]) => `${`${label}:`.padEnd(width)}${value}`),
    '',
    'You get this mail as you follow the workflow, with this address',
    'as a notification channel. To stop these mails, unsubscribe here:',
    `  ${unsubscribeUrl}`,
    'or with your token:',
    `  POST ${payload.baseUrl}/workflows/${workflow}/unsubscribe`,
    'or remove the channel:',
    `  DELETE ${payload.baseUrl}/users/current/channels/${channelId}`,
    '',
    `Delivery ${payload.deliveryUuid}`,
    '',
  ].join('\n');
}

/** FOLLOW_FAILED as a mail: told to the workflow's owner, whatever their subscriptions. */
function followFailureMail(payload: DeliveryPayload, channelId: number, unsubscribeUrl: string): string {
  const { data } = payload.notification;
  const facts: [string, string][] = [
    ['Workflow', plainName(data.workflow.name)],
    ['Repository', data.repository?.url ?? '(unknown)'],
    [
      'Ref',
      data.ref
        ? `${data.ref.type} ${plainName(data.ref.name)}${data.ref.commit ? ` (${data.ref.commit})` : ''}`
        : '(none)',
    ],
    ['Why', plainName(data.error ?? '(no reason given)')],
    ['When', utc(payload.notification.created)],
    ['Status page', payload.statusUrl],
  ];
  const width = Math.max(...facts.map(([label]) => label.length)) + 2;
  return [
    `${payload.event}: ${EVENT_LINES[payload.event]}`,
    '',
    ...facts.map(([label, value]) => `${`${label}:`.padEnd(width)}${value}`),
    '',
    'You get this mail as the owner of the workflow, with this address as a',
    'notification channel. To stop these mails at this address, here:',
    `  ${unsubscribeUrl}`,
    'or remove the channel:',
    `  DELETE ${payload.baseUrl}/users/current/channels/${channelId}`,
    '',
    `Delivery ${payload.deliveryUuid}`,
    '',
  ].join('\n');
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

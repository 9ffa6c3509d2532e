import { absoluteLinkOf } from '../common/base-url.js';
import type { RecordedBuild } from '../test-monitoring/index.js';
import type { FollowFailure } from '../repositories/index.js';
import type { InstanceFacts } from '../workflows/index.js';
import type { NotificationEntity } from './entities/notification.entity.js';
import { isEventName, type RaisedEvent } from './events.js';

/**
 * The `data` of a notification (API.md 6.3), stored as JSON with it. FOLLOW_FAILED has no
 * instance or build (null) but the repository, the ref that could not be registered (null when
 * the repository is gone) and why.
 */
export interface NotificationData {
  workflow: { uuid: string; name: string; version: string };
  instance: { uuid: string; name: string | null } | null;
  build: {
    build_id: string;
    status: string;
    timestamp: string;
    links: { origin: string };
    /** Why it failed (API.md 16), on a failing build: BUILD_FAILED carries the class. */
    failure?: { class: string; reason: string; evidence: string[] };
  } | null;
  repository?: { full_name: string; url: string };
  ref?: { type: 'tag' | 'branch'; name: string; commit: string | null } | null;
  error?: string;
}

/** A notification as replies, webhooks and e-mails show it. */
export interface NotificationView {
  uuid: string;
  created: string;
  read: string | null;
  emailed: string | null;
  event: RaisedEvent;
  data: NotificationData;
}

/** `baseUrl` makes a build link stored as a path of this service (a managed run's) absolute. */
export function notificationData(
  facts: InstanceFacts,
  build: RecordedBuild | undefined,
  baseUrl: string,
): NotificationData {
  return {
    workflow: { uuid: facts.workflowUuid, name: facts.name, version: facts.version },
    instance: { uuid: facts.instanceUuid, name: facts.instanceName },
    build: build
      ? {
          build_id: build.buildId,
          status: build.status,
          timestamp: epochSeconds(build.startedAt),
          links: { origin: absoluteLinkOf(build.url, baseUrl) },
          ...(build.failure && {
            failure: {
              class: build.failure.class,
              reason: build.failure.reason,
              evidence: [...build.failure.evidence],
            },
          }),
        }
      : null,
  };
}

/** FOLLOW_FAILED's data (API.md 12). */
export function followFailureData(failure: FollowFailure): NotificationData {
  return {
    workflow: { uuid: failure.workflowUuid, name: failure.name, version: failure.version },
    instance: null,
    build: null,
    repository: { full_name: failure.repository, url: `https://github.com/${failure.repository}` },
    ref: failure.ref && { type: failure.ref.kind, name: failure.ref.name, commit: failure.ref.commit },
    error: failure.error,
  };
}

/** Decimal seconds since the epoch, as LifeMonitor writes its timestamps. */
export function epochSeconds(date: Date): string {
  return String(Math.floor(date.getTime() / 1000));
}

/** A stored notification as replies, webhooks and e-mails show it. */
export function toNotificationView(row: NotificationEntity): NotificationView {
  return {
    uuid: row.uuid,
    created: epochSeconds(row.createdAt),
    read: row.readAt ? epochSeconds(row.readAt) : null,
    emailed: row.emailedAt ? epochSeconds(row.emailedAt) : null,
    event: isEventName(row.event) && row.event !== 'ALL' ? row.event : 'BUILD_FAILED',
    data: JSON.parse(row.data) as NotificationData,
  };
}

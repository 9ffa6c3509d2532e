/**
 * The events of API.md 6.2 and when an instance's recorded check raises them, as pure functions
 * (no clock, no database): the caller hands in what the check recorded and the time.
 */
import type { RecordedCheck, RecordedBuild } from '../test-monitoring/index.js';

/**
 * The events of API.md 6.2, SCHEDULE_DISABLED (API.md 16: the CI switched an instance's workflow
 * off), and FOLLOW_FAILED (API.md 12): a version of a followed repository could not be
 * registered, or the repository is gone; told to the workflow's owner only.
 */
export const EVENT_NAMES = [
  'ALL',
  'BUILD_FAILED',
  'BUILD_RECOVERED',
  'TESTS_STOPPED',
  'SCHEDULE_DISABLED',
  'FOLLOW_FAILED',
] as const;
export type EventName = (typeof EVENT_NAMES)[number];
/** What can actually happen; `ALL` is a subscription to every one of them. */
export type RaisedEvent = Exclude<EventName, 'ALL'>;

export function isEventName(value: unknown): value is EventName {
  return typeof value === 'string' && (EVENT_NAMES as readonly string[]).includes(value);
}

/** Whether a subscription or channel with `events` wants `event`. */
export function wants(events: readonly EventName[], event: RaisedEvent): boolean {
  return events.includes('ALL') || events.includes(event);
}

/** `events` less `event` (ALL stands for each of the others); empty when nothing else is left. */
export function eventsWithout(events: readonly EventName[], event: RaisedEvent): EventName[] {
  const each = events.includes('ALL') ? EVENT_NAMES.filter((name) => name !== 'ALL') : events;
  return normalizeEvents(each.filter((name) => name !== event));
}

/** Stored as a comma-separated list, in EVENT_NAMES order, without duplicates. */
export const eventsColumn = {
  to: (events: EventName[]): string => normalizeEvents(events).join(','),
  from: (stored: string): EventName[] => stored.split(',').filter(isEventName),
};

export function normalizeEvents(events: readonly EventName[]): EventName[] {
  return EVENT_NAMES.filter((name) => events.includes(name));
}

/** An event due for one instance: the build it is keyed on (empty when there is none). */
export interface DueEvent {
  instanceId: number;
  event: RaisedEvent;
  buildId: string;
  build?: RecordedBuild;
}

const FAILING = new Set(['failed', 'error', 'aborted']);

/**
 * The events one recorded check makes due. Transitions are judged only when this check changed
 * the instance's latest finished build and the instance had one before (the first build ever
 * seen raises none): BUILD_FAILED when the new one is failing and the finished build before it
 * passed, BUILD_RECOVERED the reverse. TESTS_STOPPED when the latest finished build ended more
 * than `maxBuildAgeMs` before the check, or the CI says the workflow is disabled; it is keyed on
 * the latest finished build, so the unique key lets it be raised once until a new one arrives.
 * SCHEDULE_DISABLED (API.md 16) when the check read the workflow's state as disabled, keyed the
 * same way: once, until a new finished build shows the workflow ran again.
 */
export function dueEvents(check: RecordedCheck, maxBuildAgeMs: number): DueEvent[] {
  const due: DueEvent[] = [];
  const { latestFinished: latest, previousFinished: previous, latestFinishedBefore: before } = check;
  if (latest && previous && before && before.buildId !== latest.buildId) {
    if (FAILING.has(latest.status) && previous.status === 'passed') {
      due.push({
        instanceId: check.instanceId,
        event: 'BUILD_FAILED',
        buildId: latest.buildId,
        build: latest,
      });
    } else if (latest.status === 'passed' && FAILING.has(previous.status)) {
      due.push({
        instanceId: check.instanceId,
        event: 'BUILD_RECOVERED',
        buildId: latest.buildId,
        build: latest,
      });
    }
  }
  const endedMs = latest ? latest.startedAt.getTime() + latest.durationSeconds * 1000 : undefined;
  const tooOld = endedMs !== undefined && check.checkedAt.getTime() - endedMs > maxBuildAgeMs;
  if (tooOld || check.workflowDisabled) {
    due.push({
      instanceId: check.instanceId,
      event: 'TESTS_STOPPED',
      buildId: latest?.buildId ?? '',
      build: latest,
    });
  }
  if (check.workflowDisabled) {
    due.push({
      instanceId: check.instanceId,
      event: 'SCHEDULE_DISABLED',
      buildId: latest?.buildId ?? '',
      build: latest,
    });
  }
  return due;
}

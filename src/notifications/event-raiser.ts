import { Injectable, type OnModuleInit } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { unrequestedBaseUrlOf } from '../common/base-url.js';
import { AppConfig } from '../config/app-config.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { CheckResults, type RecordedCheck } from '../test-monitoring/index.js';
import { RegisteredInstances, RegistryEvents } from '../workflows/index.js';
import { type FollowFailure } from '../repositories/index.js';
import { dueEvents } from './events.js';
import { followFailureData, notificationData } from './notification-data.js';
import { NotificationsRepository, type EventToRaise } from './notifications.repository.js';

const DAY_MS = 24 * 3600 * 1000;

/**
 * Raises events where check results are recorded: in the recording's transaction, so an event,
 * its notifications and their outbox rows commit with the builds that caused them, or not at all.
 * FOLLOW_FAILED likewise, in the transaction that records a followed repository's failure.
 */
@Injectable()
export class EventRaiser implements OnModuleInit {
  constructor(
    private readonly results: CheckResults,
    private readonly instances: RegisteredInstances,
    private readonly registry: RegistryEvents,
    private readonly repo: NotificationsRepository,
    private readonly metrics: MetricsService,
    private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    this.results.onRecorded((tx, checks) => this.raise(tx, checks));
    this.registry.onFollowFailed((tx, failure, at) => this.followFailed(tx, failure, at));
  }

  /** FOLLOW_FAILED, to the workflow's owner (API.md 12): the registry tells of each failure once. */
  async followFailed(tx: EntityManager, failure: FollowFailure, at: Date): Promise<void> {
    await this.repo.notifyUser(
      tx,
      failure.ownerId,
      { event: 'FOLLOW_FAILED', data: followFailureData(failure) },
      at,
    );
    this.metrics.notificationsRaised.inc(1);
  }

  async raise(tx: EntityManager, checks: readonly RecordedCheck[]): Promise<void> {
    const maxAgeMs = this.config.notifications.maxBuildAgeDays * DAY_MS;
    const due = checks.flatMap((check) => dueEvents(check, maxAgeMs).map((event) => ({ event, check })));
    if (due.length === 0) {
      return;
    }
    const facts = await this.instances.facts(
      tx,
      due.map(({ event }) => event.instanceId),
    );
    const events: EventToRaise[] = due.flatMap(({ event }) => {
      const fact = facts.get(event.instanceId);
      return fact
        ? [
            {
              instanceId: event.instanceId,
              workflowId: fact.workflowId,
              buildId: event.buildId,
              event: event.event,
              data: notificationData(fact, event.build, unrequestedBaseUrlOf(this.config)),
            },
          ]
        : [];
    });
    const at = due[0].check.checkedAt;
    const raised = await this.repo.raise(tx, events, at);
    if (raised.notifications > 0) {
      // Counted before commit: a rolled-back recording is retried and raises again, so the
      // counter can run ahead of the table by a retry, never behind it.
      this.metrics.notificationsRaised.inc(raised.notifications);
    }
  }
}

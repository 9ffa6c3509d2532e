import { Injectable, Logger } from '@nestjs/common';
import { Clock } from '../common/clock.js';
import { CheckStateRepository } from './check-state.repository.js';
import { RefreshScheduler } from './refresh.scheduler.js';

/**
 * Checks now, rather than at their next regular time, instances that something outside says have
 * changed (a GitHub `workflow_run` webhook). They become due in the database, so whichever copy
 * ticks first checks them, and this copy ticks at once.
 */
@Injectable()
export class Rechecks {
  private readonly logger = new Logger(Rechecks.name);

  constructor(
    private readonly checkStates: CheckStateRepository,
    private readonly scheduler: RefreshScheduler,
    private readonly clock: Clock,
  ) {}

  /** Makes the instances due now and starts a tick; resolves once they are due (not checked). */
  async now(instanceIds: readonly number[]): Promise<void> {
    if (instanceIds.length === 0) {
      return;
    }
    await this.checkStates.makeDue(instanceIds, new Date(this.clock.nowMs()));
    // A tick already running leaves them to the next one, a second or so later.
    this.scheduler.tick().catch((error: unknown) => this.logger.error({ err: error }, 'recheck tick failed'));
  }
}

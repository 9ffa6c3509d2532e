import { randomUUID } from 'node:crypto';
import type {
  BeforeApplicationShutdown,
  Logger,
  OnApplicationBootstrap,
  OnModuleDestroy,
} from '@nestjs/common';
import type { Clock } from '../common/clock.js';

/**
 * The tick of a scheduler that shares its work through database claims (STYLE.md 7, the refresh
 * scheduler's idea): every `tickMs` (±25 % jitter, which keeps copies from ticking in one phase) it runs
 * `run(now)`, which claims due rows as `owner` and works on them. A tick while another runs, or after
 * shutdown began, does nothing; shutdown waits for the tick in flight. Tests call `tick(now)`.
 */
export abstract class ClaimTicker
  implements OnApplicationBootstrap, OnModuleDestroy, BeforeApplicationShutdown
{
  /** This copy's identity in `claim_owner`. */
  readonly owner = randomUUID();
  protected abstract readonly logger: Logger;
  private current?: Promise<number>;
  private timer?: NodeJS.Timeout;
  private stopping = false;

  protected constructor(
    protected readonly clock: Clock,
    private readonly tickMs: number,
  ) {}

  /** Claims and works on what is due at `now`; resolves with how many rows it handled. */
  protected abstract run(now: Date): Promise<number>;

  onApplicationBootstrap(): void {
    this.scheduleTick();
  }

  onModuleDestroy(): void {
    this.stopping = true;
    clearTimeout(this.timer);
  }

  /** Waits for the work in flight, before the database closes. */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    await this.current?.catch(() => undefined);
  }

  tick(now = new Date(this.clock.nowMs())): Promise<number> {
    if (this.current || this.stopping) {
      return Promise.resolve(0);
    }
    this.current = this.run(now).finally(() => {
      this.current = undefined;
    });
    return this.current;
  }

  protected get isStopping(): boolean {
    return this.stopping;
  }

  private scheduleTick(): void {
    if (this.stopping) {
      return;
    }
    this.timer = setTimeout(
      () => {
        this.tick()
          .catch((error: unknown) => this.logger.error({ err: error }, 'tick failed'))
          .finally(() => this.scheduleTick());
      },
      Math.round(this.tickMs * (0.75 + 0.5 * Math.random())),
    );
  }
}

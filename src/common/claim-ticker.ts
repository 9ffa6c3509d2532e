import { randomUUID } from 'node:crypto';
import type {
  BeforeApplicationShutdown,
  Logger,
  OnApplicationBootstrap,
  OnModuleDestroy,
} from '@nestjs/common';
import type { Clock } from './clock.js';

/**
 * The tick of a scheduler that shares its work through database claims (STYLE.md 7, the refresh
 * scheduler's idea): every `tickMs` (±25 % jitter, which keeps copies from ticking in one phase) it runs
 * `run(now)`, which claims due rows as `owner` and works on them; `tickMs` 0 runs no timer (only
 * `kick`s). A tick while another runs, or after shutdown began, does nothing; shutdown waits for the
 * tick in flight. Tests call `tick(now)`.
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
  /** A kick came while a tick ran: one more tick follows it. */
  private again = false;

  protected constructor(
    protected readonly clock: Clock,
    private readonly tickMs: number,
  ) {}

  /** Claims and works on what is due at `now`; resolves with how many rows it handled. */
  protected abstract run(now: Date): Promise<number>;

  async onApplicationBootstrap(): Promise<void> {
    await this.beforeTicks();
    this.scheduleTick();
  }

  /** Runs once at start-up, before the first tick is scheduled. */
  protected beforeTicks(): Promise<void> {
    return Promise.resolve();
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
      if (this.again) {
        this.again = false;
        this.kick();
      }
    });
    return this.current;
  }

  /**
   * Work became due now (a request queued it): a tick at once, or right after the one running,
   * which may have claimed its rows before the new work was written. Failures are logged.
   */
  kick(): void {
    if (this.current) {
      this.again = true;
      return;
    }
    this.tick().catch((error: unknown) => this.logger.error({ err: error }, 'tick failed'));
  }

  /** Resolves once no tick runs and none is asked for (a tick run by hand then does its work). */
  async settled(): Promise<void> {
    while (this.current) {
      await this.current.catch(() => undefined);
      // The tick that ended may have started the one a kick asked for.
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  protected get isStopping(): boolean {
    return this.stopping;
  }

  private scheduleTick(): void {
    if (this.stopping || this.tickMs === 0) {
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

import { Injectable } from '@nestjs/common';
import { UsersService } from '../auth/users.service.js';
import { Clock } from '../common/clock.js';
import { DomainError } from '../common/errors/domain-error.js';
import { AppConfig } from '../config/app-config.js';
import type { Caller } from './caller.js';
import { JobsRepository } from './jobs.repository.js';
import { usageOf, type CloudUsage, type Quota } from './quota-rules.js';
import { QuotasRepository, type StoredQuota } from './quotas.repository.js';

/** A user's quota as replies show it: null is no limit; `own` false when it is the defaults. */
export interface QuotaView extends StoredQuota {
  readonly userId: number;
  readonly own: boolean;
}

/** One row of usage: a user's use of one cloud, with their quota. */
export interface UsageRow extends CloudUsage {
  readonly quota: QuotaView;
}

const DEFAULT_WINDOW_MS = 30 * 24 * 3_600_000;

/**
 * Quotas and usage (API.md 13): rules over the service's own records of starts (vm_jobs) and the users'
 * quotas (user_quotas), never a cloud's. A user without a quota of their own has QUOTA_MAX_*.
 */
@Injectable()
export class QuotasService {
  constructor(
    private readonly quotas: QuotasRepository,
    private readonly jobs: JobsRepository,
    private readonly users: UsersService,
    private readonly config: AppConfig,
    private readonly clock: Clock,
  ) {}

  /** The user's quota; 'not_found' for an unknown user. */
  async get(userId: number): Promise<QuotaView> {
    await this.users.get(userId);
    return this.view(userId, (await this.quotas.ofUsers([userId])).get(userId));
  }

  /**
   * Sets the limits named (a number, or null for no limit); the others keep their current value (the
   * default for a user without a quota of their own). 'not_found' for an unknown user.
   */
  async set(userId: number, changes: Partial<StoredQuota>): Promise<QuotaView> {
    const current = await this.get(userId);
    const quota: StoredQuota = {
      maxNodes: changes.maxNodes === undefined ? current.maxNodes : changes.maxNodes,
      maxVcpus: changes.maxVcpus === undefined ? current.maxVcpus : changes.maxVcpus,
      maxRamMib: changes.maxRamMib === undefined ? current.maxRamMib : changes.maxRamMib,
    };
    await this.quotas.save(userId, quota);
    return this.view(userId, quota);
  }

  /** The user goes back to the defaults. 'not_found' for an unknown user. */
  async clear(userId: number): Promise<QuotaView> {
    await this.users.get(userId);
    await this.quotas.remove(userId);
    return this.view(userId, undefined);
  }

  /** The limits a start of this user is held to. */
  async limitsOf(userId: number): Promise<Quota> {
    const quota = this.view(userId, (await this.quotas.ofUsers([userId])).get(userId));
    return {
      maxNodes: quota.maxNodes ?? undefined,
      maxVcpus: quota.maxVcpus ?? undefined,
      maxRamMib: quota.maxRamMib ?? undefined,
    };
  }

  /**
   * Node-hours and vCPU-hours per user and cloud between `from` and `to` (default: the last 30 days),
   * running nodes counted up to now, with the nodes held now and the quota: the caller's own, or an
   * admin's view of everybody's. 'invalid_input' when `from` is not before `to`.
   */
  async usage(caller: Caller, from?: Date, to?: Date): Promise<{ from: Date; to: Date; rows: UsageRow[] }> {
    const now = new Date(this.clock.nowMs());
    const end = to ?? now;
    const start = from ?? new Date(end.getTime() - DEFAULT_WINDOW_MS);
    if (start.getTime() >= end.getTime()) {
      throw new DomainError('invalid_input', 'from must be before to', [
        { field: 'from', message: 'from must be before to' },
      ]);
    }
    const records = await this.jobs.records(start, end, caller.admin ? undefined : caller.id);
    const usage = usageOf(records, start, end, now);
    const own = await this.quotas.ofUsers(usage.map((row) => row.ownerId));
    return {
      from: start,
      to: end,
      rows: usage.map((row) => ({ ...row, quota: this.view(row.ownerId, own.get(row.ownerId)) })),
    };
  }

  private view(userId: number, own: StoredQuota | undefined): QuotaView {
    const defaults = this.config.orchestration.defaultQuota;
    return own
      ? { userId, ...own, own: true }
      : {
          userId,
          maxNodes: defaults.maxNodes ?? null,
          maxVcpus: defaults.maxVcpus ?? null,
          maxRamMib: defaults.maxRamMib ?? null,
          own: false,
        };
  }
}

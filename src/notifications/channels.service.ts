import { Injectable } from '@nestjs/common';
import type { AuthUser } from '../auth/auth-user.js';
import { Clock } from '../common/clock.js';
import { DomainError } from '../common/errors/domain-error.js';
import { AppConfig } from '../config/app-config.js';
import { checkChannel, type ChannelRequest } from './channel-rules.js';
import { DeliveriesRepository } from './deliveries.repository.js';
import type { ChannelEntity } from './entities/channel.entity.js';
import type { DeliveryAttemptEntity } from './entities/delivery-attempt.entity.js';

/** The caller's delivery channels and their delivery logs (API.md 6.4). */
@Injectable()
export class ChannelsService {
  constructor(
    private readonly repo: DeliveriesRepository,
    private readonly config: AppConfig,
    private readonly clock: Clock,
  ) {}

  async create(user: AuthUser, request: ChannelRequest): Promise<ChannelEntity> {
    const checked = await checkChannel(request, {
      allowPrivateTargets: this.config.notifications.allowPrivateTargets,
      smtpConfigured: this.config.notifications.smtpUrl !== undefined,
    });
    return this.repo.createChannel({
      userId: user.id,
      type: request.type,
      ...checked,
      createdAt: new Date(this.clock.nowMs()),
    });
  }

  list(user: AuthUser): Promise<ChannelEntity[]> {
    return this.repo.channelsOf(user.id);
  }

  async delete(user: AuthUser, id: number): Promise<void> {
    if (!(await this.repo.deleteChannel(user.id, id))) {
      throw notFound(id);
    }
  }

  async deliveries(
    user: AuthUser,
    id: number,
  ): Promise<(DeliveryAttemptEntity & { deliveryUuid: string })[]> {
    const channel = await this.repo.findChannel(user.id, id);
    if (!channel) {
      throw notFound(id);
    }
    return this.repo.attemptsOf(channel.id);
  }
}

function notFound(id: number): DomainError {
  return new DomainError('not_found', `No channel ${id}`);
}

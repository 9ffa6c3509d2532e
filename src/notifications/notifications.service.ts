import { Injectable } from '@nestjs/common';
import type { AuthUser } from '../auth/auth-user.js';
import { Clock } from '../common/clock.js';
import { DomainError } from '../common/errors/domain-error.js';
import type { NotificationEntity } from './entities/notification.entity.js';
import { NotificationsRepository } from './notifications.repository.js';

/** The caller's notifications (API.md 6.3): read, mark read, delete. Nobody sees another's. */
@Injectable()
export class NotificationsService {
  constructor(
    private readonly repo: NotificationsRepository,
    private readonly clock: Clock,
  ) {}

  list(user: AuthUser): Promise<NotificationEntity[]> {
    return this.repo.notificationsOf(user.id);
  }

  /** Marks read (or unread again) by uuid; uuids that are not the caller's change nothing. */
  async mark(user: AuthUser, items: readonly { uuid: string; read: boolean }[]): Promise<void> {
    const now = new Date(this.clock.nowMs());
    await this.repo.markRead(
      user.id,
      items.filter((item) => item.read).map((item) => item.uuid),
      now,
    );
    await this.repo.markRead(
      user.id,
      items.filter((item) => !item.read).map((item) => item.uuid),
      null,
    );
  }

  /** Deletes by uuid; uuids that are not the caller's (or gone already) are skipped. */
  async deleteMany(user: AuthUser, uuids: readonly string[]): Promise<void> {
    await this.repo.deleteNotifications(user.id, uuids);
  }

  async deleteOne(user: AuthUser, uuid: string): Promise<void> {
    if ((await this.repo.deleteNotifications(user.id, [uuid])) === 0) {
      throw new DomainError('not_found', `No notification ${uuid}`);
    }
  }
}

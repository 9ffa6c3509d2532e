import { Injectable } from '@nestjs/common';
import { Clock } from '../common/clock.js';
import { DomainError } from '../common/errors/domain-error.js';
import { byApplication, type ApplicationAccess } from './approvals.js';
import { ClientsRepository } from './clients.repository.js';
import { GrantsRepository } from './grants.repository.js';

/** The approvals a person gave applications (API.md 15): seen, and taken back. */
@Injectable()
export class ApprovalsService {
  constructor(
    private readonly grants: GrantsRepository,
    private readonly clients: ClientsRepository,
    private readonly clock: Clock,
  ) {}

  async list(userId: number): Promise<ApplicationAccess[]> {
    return byApplication(await this.grants.approvalsOf(userId, new Date(this.clock.nowMs())));
  }

  /**
   * Revokes everything the user allowed the application: its codes, refresh and access tokens stop
   * at once (each is read from the database on every use). not_found when the user allowed it nothing.
   */
  async revoke(userId: number, clientId: string): Promise<void> {
    const client = await this.clients.findByClientId(clientId);
    if (!client || (await this.grants.revokeApprovals(userId, client.id)) === 0) {
      throw new DomainError('not_found', `You gave no application ${clientId.slice(0, 64)} access`);
    }
  }
}

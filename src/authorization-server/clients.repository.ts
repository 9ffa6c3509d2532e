import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { isUniqueViolation } from '../common/errors/unique-violation.js';
import { findOneJoined } from '../database/find-one-joined.js';
import { OAuthClientEntity } from './entities/oauth-client.entity.js';

export interface NewClient {
  clientId: string;
  userId: number;
  name: string;
  redirectUris: string[];
  confidential: boolean;
  clientSecretHash: string | null;
  createdAt: Date;
}

/** The SQL of the applications people register. */
@Injectable()
export class ClientsRepository {
  constructor(@InjectRepository(OAuthClientEntity) private readonly clients: Repository<OAuthClientEntity>) {}

  /** Saves a new client; undefined when its client id is taken already (the caller makes another). */
  async create(client: NewClient): Promise<OAuthClientEntity | undefined> {
    try {
      return await this.clients.save(this.clients.create(client));
    } catch (error) {
      if (isUniqueViolation(error)) {
        return undefined;
      }
      throw error;
    }
  }

  countOf(userId: number): Promise<number> {
    return this.clients.countBy({ userId });
  }

  listOf(userId: number): Promise<OAuthClientEntity[]> {
    return this.clients.find({ where: { userId }, order: { id: 'ASC' } });
  }

  /**
   * The client with this id and the user who registered it, or null. The id is compared exactly
   * here: MariaDB's default collation would also find one differing only in case.
   */
  async findByClientId(clientId: string): Promise<OAuthClientEntity | null> {
    const found = await findOneJoined(this.clients, { where: { clientId }, relations: { user: true } });
    return found?.clientId === clientId ? found : null;
  }

  /** Deletes one of the user's clients, its grants and tokens by cascade; false when the user has none by this id. */
  async remove(userId: number, clientId: string): Promise<boolean> {
    const found = await this.clients.findOneBy({ clientId, userId });
    if (found?.clientId !== clientId) {
      return false;
    }
    return ((await this.clients.delete({ id: found.id, userId })).affected ?? 0) > 0;
  }
}

import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { isUniqueViolation } from '../common/errors/unique-violation.js';
import { findOneJoined } from '../database/find-one-joined.js';
import { ApiKeyEntity } from './entities/api-key.entity.js';

export interface NewApiKeyRow {
  userId: number;
  name: string;
  prefix: string;
  keyHash: string;
  createdAt: Date;
  expiresAt: Date | null;
}

@Injectable()
export class ApiKeysRepository {
  constructor(@InjectRepository(ApiKeyEntity) private readonly keys: Repository<ApiKeyEntity>) {}

  /** Saves a new key; undefined when its prefix is taken already (the caller makes another key). */
  async create(row: NewApiKeyRow): Promise<ApiKeyEntity | undefined> {
    try {
      return await this.keys.save(this.keys.create(row));
    } catch (error) {
      if (isUniqueViolation(error)) {
        return undefined;
      }
      throw error;
    }
  }

  countOf(userId: number): Promise<number> {
    return this.keys.countBy({ userId });
  }

  listOf(userId: number): Promise<ApiKeyEntity[]> {
    return this.keys.find({ where: { userId }, order: { id: 'ASC' } });
  }

  /** False when the user has no key with this id. */
  async remove(userId: number, id: number): Promise<boolean> {
    const result = await this.keys.delete({ id, userId });
    return (result.affected ?? 0) > 0;
  }

  /** The key with this prefix and its owner, in one indexed read (the unique prefix, then the user's primary key). */
  findWithOwner(prefix: string): Promise<ApiKeyEntity | null> {
    return findOneJoined(this.keys, { where: { prefix }, relations: { user: true } });
  }
}

import type { MigrationInterface } from 'typeorm';
import { CreateUsers1763700000000 } from '../../migrations/1763700000000-create-users.js';

/**
 * Every migration, oldest first. Listed here rather than found by a file glob, so the
 * same list works from `dist/`, from ts-jest and from the CLI. `npm run migration:create` appends to it.
 */
export const MIGRATIONS: (new () => MigrationInterface)[] = [CreateUsers1763700000000];

import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { underNamedLock } from '../../database/dialect.js';

/** How long a writer waits for another copy of the service that holds the same archive. */
export const ARCHIVE_LOCK_SECONDS = 60;

/**
 * Keeps "is any version still using this archive?" and "store it / delete it" together: every
 * registry write that touches a stored archive runs under `exclusive`.
 *
 * In-process, writes queue one after another: TypeORM runs everything on SQLite over one
 * connection, where two open transactions would nest as savepoints and commit or roll back
 * each other's rows; on MariaDB, a writer holds one pooled connection for its named lock and
 * needs a second for its transaction, so unbounded concurrent writers could exhaust the pool
 * while each waits for a second connection. The critical section is short (a rename and a
 * few inserts); downloads and reading happen before it. Across copies, a named lock per
 * archive keeps one copy from deleting a file that another copy has just stored for a
 * version it is about to commit.
 */
@Injectable()
export class ArchiveLock {
  /** The tail of the queue of this process's archive writes. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  exclusive<T>(sha256: string, work: () => Promise<T>): Promise<T> {
    // 56 hex digits of a SHA-256 are as unique as we need and fit MariaDB's 64-character names.
    const name = `crate_${sha256.slice(0, 56)}`;
    const run = this.queue.then(() => underNamedLock(this.dataSource, name, ARCHIVE_LOCK_SECONDS, work));
    this.queue = run.catch(() => undefined);
    return run;
  }
}

import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { underNamedLock } from '../database/dialect.js';

/** How long a writer waits for another copy of the service that holds the same archive. */
export const ARCHIVE_LOCK_SECONDS = 60;

/**
 * How many archive writes of this process run at once. On MariaDB each holds one pooled
 * connection for its named lock and needs a second for its transaction: with no bound, writers
 * holding the whole pool (20 connections, data-source.ts) would each wait for a second
 * connection for ever. Eight leave room for everything else.
 */
export const ARCHIVE_WRITERS = 8;

/**
 * Keeps "is any version still using this archive?" and "store it / delete it" together: every
 * registry write that touches a stored archive runs under `exclusive` for that archive.
 *
 * Writes of one archive run one after another, in this process (a queue per archive) and across
 * copies (a named lock per archive on MariaDB), so that one never deletes a file that another
 * has just stored for a version it is about to commit. Writes of different archives run side
 * by side, up to ARCHIVE_WRITERS at once: one queue for every archive made 20 concurrent
 * registrations wait for each other's file moves, which the shared disk and thread pool
 * stretched to most of a second each. SQLite's transactions still follow one another
 * (sqlite-serializer.ts); that is the short part. Downloads and reading happen before this.
 */
@Injectable()
export class ArchiveLock {
  /** The tail of each archive's queue of writes in this process; gone when the queue is empty. */
  private readonly tails = new Map<string, Promise<unknown>>();
  private readonly writers = new Slots(ARCHIVE_WRITERS);

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  exclusive<T>(sha256: string, work: () => Promise<T>): Promise<T> {
    // 56 hex digits of a SHA-256 are as unique as we need and fit MariaDB's 64-character names.
    const name = `crate_${sha256.slice(0, 56)}`;
    const previous = this.tails.get(sha256) ?? Promise.resolve();
    const run = previous.then(() =>
      this.writers.run(() => underNamedLock(this.dataSource, name, ARCHIVE_LOCK_SECONDS, work)),
    );
    const tail = run.catch(() => undefined);
    this.tails.set(sha256, tail);
    void tail.then(() => {
      if (this.tails.get(sha256) === tail) {
        this.tails.delete(sha256);
      }
    });
    return run;
  }
}

/** At most `limit` tasks at a time, the others in arrival order. */
class Slots {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.limit) {
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.running++;
    }
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) {
        // The slot passes straight to the next task.
        next();
      } else {
        this.running--;
      }
    }
  }
}

import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { AppConfig } from '../config/app-config.js';
import { ArchiveLock } from './archive-lock.js';
import { CrateStore } from './crate-store.js';
import { Clock } from '../common/clock.js';

const SWEEP_EVERY_MS = 10 * 60 * 1000;
/**
 * Beyond the download timeout: the wait for another copy's lock on the same archive
 * (60 s, see ArchiveLock) and a margin for reading and storing.
 */
const STORE_MARGIN_MS = 2 * 60 * 1000;

/** Which stored archives some version still uses: the registry knows, crates/ does not. */
export interface ArchiveReferences {
  /** The archives some version uses, in one read: a snapshot, checked again under the lock. */
  usedArchives(): Promise<Set<string>>;
  /** True while some version still uses the archive. */
  isArchiveUsed(sha256: string): Promise<boolean>;
}

/** Injection token of the ArchiveReferences the janitor asks (the registry's WorkflowsRepository). */
export const ARCHIVE_REFERENCES = Symbol('ARCHIVE_REFERENCES');

export interface SweepResult {
  temporaryFiles: number;
  orphanArchives: number;
}

/**
 * Removes what a crashed or killed copy of the service leaves on disk: temporary downloads,
 * and archives it stored but never committed a version for. Runs at start-up and every ten
 * minutes. A file is only considered once it is older than any registration in flight in
 * any copy sharing DATA_DIR could be, and an archive is removed under the same lock a
 * registration takes, after checking again that no version uses it. Provided by the registry's
 * module, which knows the archives its versions use (ARCHIVE_REFERENCES).
 */
@Injectable()
export class CrateJanitor implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(CrateJanitor.name);
  private sweeping: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly store: CrateStore,
    @Inject(ARCHIVE_REFERENCES) private readonly repo: ArchiveReferences,
    private readonly archiveLock: ArchiveLock,
    private readonly scheduler: SchedulerRegistry,
    private readonly config: AppConfig,
    private readonly clock: Clock,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.sweepAndLog();
    this.scheduler.addInterval(
      'crate-janitor',
      setInterval(() => {
        this.sweeping = this.sweepAndLog();
      }, SWEEP_EVERY_MS).unref(),
    );
  }

  /** Lets a sweep in progress finish before the database closes. */
  async beforeApplicationShutdown(): Promise<void> {
    if (this.scheduler.doesExist('interval', 'crate-janitor')) {
      this.scheduler.deleteInterval('crate-janitor');
    }
    await this.sweeping;
  }

  async sweep(now: number = this.clock.nowMs()): Promise<SweepResult> {
    const staleAfterMs = this.config.registry.downloadTimeoutMs + STORE_MARGIN_MS;
    const temporaryFiles = await this.store.sweepTemp(staleAfterMs, now);
    let orphanArchives = 0;
    const stale = (await this.store.listArchives()).filter((archive) => now - archive.mtimeMs > staleAfterMs);
    if (stale.length === 0) {
      return { temporaryFiles, orphanArchives };
    }
    // One query for the whole store instead of a lock and a query per archive: the sweep runs every ten
    // minutes and nearly every archive is in use. The set can only be out of date towards "unused" for an
    // archive registered since, and those are checked again under the lock.
    const used = await this.repo.usedArchives();
    for (const archive of stale.filter((candidate) => !used.has(candidate.sha256))) {
      await this.archiveLock.exclusive(archive.sha256, async () => {
        if (!(await this.repo.isArchiveUsed(archive.sha256))) {
          await this.store.remove(archive.sha256);
          orphanArchives += 1;
        }
      });
    }
    return { temporaryFiles, orphanArchives };
  }

  private async sweepAndLog(): Promise<void> {
    try {
      const { temporaryFiles, orphanArchives } = await this.sweep();
      if (temporaryFiles + orphanArchives > 0) {
        this.logger.log(
          `removed ${temporaryFiles} stale download(s) and ${orphanArchives} orphan archive(s)`,
        );
      }
    } catch (error) {
      this.logger.error({ err: error }, 'the sweep of stale crate files failed');
    }
  }
}

import {
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import {
  CrateReader,
  CrateStore,
  type ParsedWorkflow,
  parseMainWorkflowOf,
  workflowLanguageOf,
} from '../crates/index.js';
import { COLUMN_LENGTHS } from './columns.js';
import { WorkflowsRepository } from './workflows.repository.js';

/** Versions read per batch: one query, then their archives one after another. */
const BATCH = 100;

/**
 * Versions registered before the registry kept the main workflow (migration 1795734002929) get it
 * from their stored archives, in the background after start-up, so that GA4GH TRS lists their
 * descriptor types. Idempotent: several copies starting together write the same values, and a
 * version whose crate names no main workflow (or whose archive cannot be read) is left as it is
 * and looked at again at the next start.
 */
@Injectable()
export class MainWorkflowBackfill implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(MainWorkflowBackfill.name);
  private running: Promise<unknown> = Promise.resolve();
  private stopping = false;

  constructor(
    private readonly repo: WorkflowsRepository,
    private readonly reader: CrateReader,
    private readonly store: CrateStore,
    private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.running = this.run().then(
      (recorded) => {
        if (recorded > 0) {
          this.logger.log(`read the main workflow of ${recorded} version(s) registered before it was kept`);
        }
      },
      (error: unknown) =>
        this.logger.error({ err: error }, 'reading the main workflows of older versions failed'),
    );
  }

  /** Lets a batch in progress finish before the database closes. */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    await this.running;
  }

  /** Reads every version still without its main workflow; returns how many got it. */
  async run(): Promise<number> {
    let recorded = 0;
    let after = 0;
    while (!this.stopping) {
      const versions = await this.repo.versionsWithoutMainWorkflow(after, BATCH);
      if (versions.length === 0) {
        break;
      }
      after = versions[versions.length - 1].id;
      const mains = new Map<string, ParsedWorkflow | null>();
      for (const version of versions) {
        if (!mains.has(version.archiveSha256)) {
          mains.set(version.archiveSha256, await this.mainWorkflowIn(version.archiveSha256));
        }
        const main = mains.get(version.archiveSha256);
        if (main) {
          await this.repo.recordMainWorkflow(version.id, main.id, workflowLanguageOf(main) ?? null);
          recorded += 1;
        }
      }
    }
    return recorded;
  }

  private async mainWorkflowIn(sha256: string): Promise<ParsedWorkflow | null> {
    try {
      const { metadata } = await this.reader.read(
        this.store.pathOf(sha256),
        this.config.registry.maxUncompressedBytes,
      );
      const main = parseMainWorkflowOf(metadata);
      // Registration refuses a longer one now; an older crate's stays unrecorded.
      return main && main.id.length <= COLUMN_LENGTHS.path ? main : null;
    } catch (error) {
      // Gone with a concurrent deletion, or unreadable: nothing to record for it now.
      this.logger.debug({ err: error }, `could not read the main workflow of archive ${sha256}`);
      return null;
    }
  }
}

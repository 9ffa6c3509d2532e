import { Injectable, Logger } from '@nestjs/common';
import { CrateStore } from '../crates/index.js';
import { WorkflowsRepository } from './workflows.repository.js';

/**
 * The stored archives of versions: one is removed when the last version using it goes, or when
 * the version that would have used it was not saved. Registration and deletion both end here.
 */
@Injectable()
export class VersionArchives {
  private readonly logger = new Logger(VersionArchives.name);

  constructor(
    private readonly repo: WorkflowsRepository,
    private readonly store: CrateStore,
  ) {}

  /** Called under the archive's lock, after the version that would have used it was not saved or was deleted. */
  async forgetIfUnused(sha256: string): Promise<void> {
    try {
      if (!(await this.repo.isArchiveUsed(sha256))) {
        await this.store.remove(sha256);
      }
    } catch (error) {
      // The failure that brought us here matters more; an orphaned archive only costs disk space.
      this.logger.error({ err: error }, `could not clean up archive ${sha256}`);
    }
  }
}

import { Module } from '@nestjs/common';
import { Clock } from '../common/clock.js';
import { WorkflowsModule } from '../workflows/index.js';
import { CrateChecksums } from './crate-checksums.js';
import { DockstorePathTrsController, TrsController } from './trs.controller.js';
import { TrsService } from './trs.service.js';

/**
 * GA4GH TRS v2, read-only (API.md 10.2): a read model over the registry's reads and its stored
 * crates (through WorkflowsModule's exports) and test monitoring's builds (its module is global).
 * No tables of its own.
 */
@Module({
  imports: [WorkflowsModule],
  controllers: [TrsController, DockstorePathTrsController],
  providers: [TrsService, CrateChecksums, Clock],
})
export class TrsModule {}

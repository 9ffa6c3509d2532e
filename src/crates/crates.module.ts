import { Module } from '@nestjs/common';
import { ArchiveLock } from './archive-lock.js';
import { CrateDownloader } from './crate-downloader.js';
import { CrateReader } from './crate-reader.js';
import { CrateStore } from './crate-store.js';

/**
 * Crates as files: downloading one (limits, the address guard), reading its archive, storing it
 * by content and locking an archive across copies. It knows no workflow: the registry
 * (workflows/) decides what a crate becomes, and repositories/ where one comes from. The crate
 * checks are plain classes here; the registry lists them with the other checks.
 */
@Module({
  providers: [CrateDownloader, CrateReader, CrateStore, ArchiveLock],
  exports: [CrateDownloader, CrateReader, CrateStore, ArchiveLock],
})
export class CratesModule {}

import type { FollowedRefEntity } from './entities/followed-ref.entity.js';
import type { FollowGlobs, FollowSource } from './follow-rules.js';

/** What a workflow reply and the status page show of following (API.md 12). */
export interface FollowView {
  /** Where the repository's host has its pages (RepositoryLink.site). */
  site: string;
  owner: string;
  repo: string;
  globs: FollowGlobs;
  source: FollowSource;
  polledAt: Date | null;
  pollError: string | null;
  goneAt: Date | null;
  /** What following did lately (refs only noted left out), the latest first. */
  refs: FollowedRefEntity[];
}

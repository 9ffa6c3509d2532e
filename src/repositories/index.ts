/**
 * What repositories/ offers the other features; the lint rule in eslint.config.js lets them
 * import from `repositories/` only through this file.
 */
export { RepositoriesModule } from './repositories.module.js';
export { InvalidConfigFileCheck, MissingFollowedBranchCheck } from './checks/following.checks.js';
export { GithubConfigController } from './config/github-config.controller.js';
export { CONFIG_COMPANIONS, configSettings, readRepositoryConfig } from './config/repository-config.js';
export { FollowDto, FollowRequestDto, toFollowResponse } from './follow/dto/follow.dto.js';
export { FollowedRefEntity } from './follow/entities/followed-ref.entity.js';
export { FollowedRepositoryEntity } from './follow/entities/followed-repository.entity.js';
export { GithubApiPauseEntity } from './follow/entities/github-api-pause.entity.js';
export { MAX_GLOBS } from './follow/follow-limits.js';
export { FollowQueue } from './follow/follow-queue.js';
export { followInForce, globProblem, type FollowGlobs } from './follow/follow-rules.js';
export type { FollowView } from './follow/follow-view.js';
export { FollowScheduler } from './follow/follow.scheduler.js';
export {
  FollowedRepositoriesService,
  type RefEventOutcome,
  type RepositoryRefEvent,
} from './follow/followed-repositories.service.js';
export { FollowsRepository } from './follow/follows.repository.js';
export { GITHUB_SITE, GithubRepositories, parseRepositoryLink } from './hosts/github-repository.js';
export {
  RepositoryHosts,
  type RepositoryArchive,
  type RepositoryHost,
  type RepositoryLink,
  type RepositorySource,
} from './hosts/repository-host.js';
export {
  RegistryPort,
  type FollowedRegistration,
  type FollowedRegistry,
  type FollowFailure,
  type FollowFailureSink,
} from './registry-port.js';

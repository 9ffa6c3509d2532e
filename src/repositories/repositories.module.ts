import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Clock } from '../common/clock.js';
import { FollowedRefEntity } from './follow/entities/followed-ref.entity.js';
import { FollowedRepositoryEntity } from './follow/entities/followed-repository.entity.js';
import { GithubApiPauseEntity } from './follow/entities/github-api-pause.entity.js';
import { FollowQueue } from './follow/follow-queue.js';
import { FollowScheduler } from './follow/follow.scheduler.js';
import { FollowedRepositoriesService } from './follow/followed-repositories.service.js';
import { FollowsRepository } from './follow/follows.repository.js';
import { GithubRepositories } from './hosts/github-repository.js';
import { GitlabRepositories } from './hosts/gitlab-repository.js';
import { REPOSITORY_HOSTS_PROVIDER, RepositoryHosts } from './hosts/repository-host.js';
import { RegistryPort } from './registry-port.js';

/**
 * The built-in repository hosts, classes marked @RegisterRepositoryHost() (a link goes to the
 * first that knows it; another module's hosts come after these).
 */
const HOSTS = [GithubRepositories, GitlabRepositories];

/**
 * Repositories a workflow is registered from (API.md 7.1, 12, 18): the repository hosts (a
 * RepositoryHost each), following a repository's tags and branches, and its `.lifemonitor.yaml`. The registry
 * (workflows/) uses this module; following reaches the registry back only through the
 * RegistryPort it connects at start-up. Notifications hands the hosts' ref events to
 * `FollowedRepositoriesService`. Its controller, GithubConfigController, is mounted by the
 * registry's module, after the registry's own (the order the API document lists routes in).
 */
@Module({
  imports: [
    DiscoveryModule,
    TypeOrmModule.forFeature([FollowedRepositoryEntity, FollowedRefEntity, GithubApiPauseEntity]),
  ],
  providers: [
    ...HOSTS,
    REPOSITORY_HOSTS_PROVIDER,
    RepositoryHosts,
    RegistryPort,
    FollowsRepository,
    FollowQueue,
    FollowedRepositoriesService,
    FollowScheduler,
    Clock,
  ],
  exports: [
    GithubRepositories,
    RepositoryHosts,
    RegistryPort,
    FollowsRepository,
    FollowQueue,
    FollowedRepositoriesService,
  ],
})
export class RepositoriesModule {}

import type { MigrationInterface } from 'typeorm';
import { CreateUsers1763700000000 } from '../../migrations/1763700000000-create-users.js';
import { CreateRegistry1763710000000 } from '../../migrations/1763710000000-create-registry.js';
import { CreateBuilds1763720000000 } from '../../migrations/1763720000000-create-builds.js';
import { CreateOrchestration1763730000000 } from '../../migrations/1763730000000-create-orchestration.js';
import { ExactMatchKeys1763750000000 } from '../../migrations/1763750000000-exact-match-keys.js';
import { MonitoringCheckState1763800000000 } from '../../migrations/1763800000000-monitoring-check-state.js';
import { DummyNodeState1763900000000 } from '../../migrations/1763900000000-dummy-node-state.js';
import { CreateVmLeases1763910000000 } from '../../migrations/1763910000000-create-vm-leases.js';
import { CreateVmJobs1763920000000 } from '../../migrations/1763920000000-create-vm-jobs.js';
import { IndexForeignKeys1764200000000 } from '../../migrations/1764200000000-index-foreign-keys.js';
import { WorkflowListOrder1764210000000 } from '../../migrations/1764210000000-workflow-list-order.js';
import { PublicWorkflows1764300000000 } from '../../migrations/1764300000000-public-workflows.js';
import { BadgeTokens1764300000001 } from '../../migrations/1764300000001-badge-tokens.js';
import { CreateNotifications1764400000000 } from '../../migrations/1764400000000-create-notifications.js';
import { GithubWorkflowInstances1764400000001 } from '../../migrations/1764400000001-github-workflow-instances.js';
import { VersionSource1764500000000 } from '../../migrations/1764500000000-version-source.js';
import { CreateApiKeys1764550000000 } from '../../migrations/1764550000000-create-api-keys.js';
import { InstancesThroughTheApi1764560000000 } from '../../migrations/1764560000000-instances-through-the-api.js';
import { VersionIssues1795730871956 } from '../../migrations/1795730871956-version-issues.js';
import { MachinesPeopleCanUse1795731896513 } from '../../migrations/1795731896513-machines-people-can-use.js';
import { DeliveriesOutliveNotifications1795732023364 } from '../../migrations/1795732023364-deliveries-outlive-notifications.js';
import { VersionMainWorkflow1795734002929 } from '../../migrations/1795734002929-version-main-workflow.js';
import { CheckTimesAndTriggers1795734038184 } from '../../migrations/1795734038184-check-times-and-triggers.js';
import { Registries1795735080206 } from '../../migrations/1795735080206-registries.js';
import { FollowedRepositories1795735901419 } from '../../migrations/1795735901419-followed-repositories.js';
import { WorkflowRerunInterval1795746357022 } from '../../migrations/1795746357022-workflow-rerun-interval.js';
import { VmJobsStoppedAt1795752170583 } from '../../migrations/1795752170583-vm-jobs-stopped-at.js';
import { RerunSearchKeys1795760000000 } from '../../migrations/1795760000000-rerun-search-keys.js';
import { BuildChanges1795780000000 } from '../../migrations/1795780000000-build-changes.js';
import { StoredTestStatuses1795770000000 } from '../../migrations/1795770000000-stored-test-statuses.js';
import { BuildFailureClasses1795781234567 } from '../../migrations/1795781234567-build-failure-classes.js';
import { RepositoryHosts1795790000000 } from '../../migrations/1795790000000-repository-hosts.js';
import { GitlabProjectInstances1795790000001 } from '../../migrations/1795790000001-gitlab-project-instances.js';
import { SignInIdentities1795800000000 } from '../../migrations/1795800000000-sign-in-identities.js';
import { AuthorizationServer1795810000000 } from '../../migrations/1795810000000-authorization-server.js';
import { ManagedRuns1795820000000 } from '../../migrations/1795820000000-managed-runs.js';
import { CiWorkflowDisabled1795940291861 } from '../../migrations/1795940291861-ci-workflow-disabled.js';
import { OneQueuedRunPerInstance1795950000000 } from '../../migrations/1795950000000-one-queued-run-per-instance.js';

/**
 * Every migration, oldest first. Listed here rather than found by a file glob, so the
 * same list works from `dist/`, from ts-jest and from the CLI. `npm run migration:create` appends to it.
 */
export const MIGRATIONS: (new () => MigrationInterface)[] = [
  CreateUsers1763700000000,
  CreateRegistry1763710000000,
  CreateBuilds1763720000000,
  CreateOrchestration1763730000000,
  ExactMatchKeys1763750000000,
  MonitoringCheckState1763800000000,
  DummyNodeState1763900000000,
  CreateVmLeases1763910000000,
  CreateVmJobs1763920000000,
  IndexForeignKeys1764200000000,
  WorkflowListOrder1764210000000,
  PublicWorkflows1764300000000,
  BadgeTokens1764300000001,
  CreateNotifications1764400000000,
  GithubWorkflowInstances1764400000001,
  VersionSource1764500000000,
  CreateApiKeys1764550000000,
  InstancesThroughTheApi1764560000000,
  VersionIssues1795730871956,
  MachinesPeopleCanUse1795731896513,
  DeliveriesOutliveNotifications1795732023364,
  VersionMainWorkflow1795734002929,
  CheckTimesAndTriggers1795734038184,
  Registries1795735080206,
  FollowedRepositories1795735901419,
  WorkflowRerunInterval1795746357022,
  VmJobsStoppedAt1795752170583,
  RerunSearchKeys1795760000000,
  StoredTestStatuses1795770000000,
  BuildChanges1795780000000,
  BuildFailureClasses1795781234567,
  RepositoryHosts1795790000000,
  GitlabProjectInstances1795790000001,
  SignInIdentities1795800000000,
  AuthorizationServer1795810000000,
  ManagedRuns1795820000000,
  CiWorkflowDisabled1795940291861,
  OneQueuedRunPerInstance1795950000000,
];

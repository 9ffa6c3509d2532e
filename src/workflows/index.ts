/**
 * What the registry offers other features; the lint rule in eslint.config.js lets them import
 * from `workflows/` only through this file. Entities go out as types only (replies show them):
 * no other feature gets their repositories.
 */
export { WorkflowsModule } from './workflows.module.js';
export {
  WorkflowAccess,
  canEdit,
  visibleToSql,
  type BadgeVersion,
  type VisibleVersion,
} from './workflow-access.service.js';
export {
  RegisteredInstances,
  type CheckTarget,
  type InstanceFacts,
  type RunSource,
  type TargetVersion,
} from './registered-instances.js';
export {
  RegistryEvents,
  type AddedInstance,
  type AddedVersion,
  type DeletedInstance,
  type InstanceDeletedListener,
  type FollowFailedListener,
  type InstanceRetargetedListener,
  type RetargetedInstance,
  type InstancesAddedListener,
  type RerunIntervalChangedListener,
  type VersionAddedListener,
} from './registry-events.js';
export {
  NOT_AVAILABLE,
  NOT_AVAILABLE_LISTED,
  WORKFLOW_STATUS_SOURCE,
  type AggregateTestStatus,
  type LastCheck,
  type LastChecks,
  type LatestBuildSummary,
  type ListedStatusSummary,
  type VersionStatusSummary,
  type WorkflowStatusSource,
} from './workflow-status-source.js';
export { BUILD_STATUSES, FAILURE_CLASSES, type BuildStatus, type FailureClass } from './build-status.js';
export { latestVersionOf, versionsOf } from './workflow-versions.js';
export { RegistryReads } from './registry-reads.decorator.js';
export { StoredTestStatuses } from './stored-test-statuses.js';
export { BuildDto, LastCheckDto, toBuildResponse } from './dto/suite-response.dto.js';
export { toIssueTypeResponse } from './dto/issue-types.dto.js';
export {
  LIFEMONITOR_API_VERSION,
  RegistryRefDto,
  SelfLinkDto,
  toRegistryRef,
  toIssueResponse,
  toVersionHeader,
  VersionHeaderDto,
  VersionListMetaDto,
  WorkflowRefDto,
} from './dto/workflow-response.dto.js';
export {
  ListedVersionDto,
  RegistryWorkflowListDto,
  toRegistryWorkflowItem,
  type RegistryWorkflowView,
} from './dto/registry-list-response.dto.js';
export { REGISTRY_DIRECTORY, type RegistryDirectory, type RegistrySummary } from './registry-directory.js';
export {
  InstanceUuidParam,
  OptionalVersionQuery,
  SuiteUuidParam,
  WorkflowUuidParam,
} from './dto/workflow-requests.dto.js';
export type {
  TestInstanceEntity,
  TestSuiteEntity,
  WorkflowEntity,
  WorkflowVersionEntity,
} from './entities/registry.entities.js';
export type { TestServiceEntity } from './entities/test-service.entity.js';
export { WorkflowsService, type ArchiveDownload, type VersionCrate } from './workflows.service.js';
export type { Registered, RegistrySource } from './registration.service.js';
export type { VersionStatusView, WorkflowSelection } from './workflow-lists.service.js';
export type { ListWindow, WorkflowSearch } from './workflow-list.reader.js';
export type { WorkflowSummaryView } from './dto/workflow-response.dto.js';
export { IsPublicFlag, RegisteredWorkflowDto } from './dto/register-workflow.dto.js';

/**
 * What test monitoring offers other features (the lint rule in eslint.config.js lets them import
 * from `test-monitoring/` only through this file). The registry gets the status of its versions
 * through WORKFLOW_STATUS_SOURCE, which it defines and this module provides.
 */
export { TestMonitoringModule } from './test-monitoring.module.js';
export { RefreshMetrics } from './refresh-metrics.js';
export {
  CheckResults,
  type CheckResultsListener,
  type RecordedBuild,
  type RecordedCheck,
} from './check-results.js';
export { Rechecks } from './rechecks.js';
export { StatusSubscriptions, type WorkflowSubscription } from './status-subscriptions.js';
export { TestRunsService } from './test-runs.service.js';
export { BuildChangesService, type BuildChangesView } from './build-changes.service.js';
export { buildSelectionOf, inRegistrationWindow, type BuildSelection } from './build-selection.js';
export {
  TestStatusService,
  type BuildView,
  type VersionOverview,
  type VersionStatus,
} from './test-status.service.js';
export { badgeOf, renderBadgeSvg, statusMessage } from './badge.js';
export { STALE_REASONS, staleSentence, type StaleReason } from './staleness.js';
export type { DayCount } from './history.js';
export type { StoredBuild } from './builds.repository.js';
export {
  isFailingStatus,
  isFinishedStatus,
  RegisterTestingService,
  normalizeServiceUrl,
  TestingServiceRegistry,
  type Build,
  type BuildCheckRequest,
  type BuildCheckResult,
  type BuildDetailsResult,
  type BuildLogRequest,
  type BuildLogResult,
  type BuildStatus,
  type CancelRequest,
  type CancelResult,
  type ResourceTarget,
  type TestingService,
  type TriggerRequest,
  type TriggerResult,
} from './testing-services/testing-service.js';
export { parseGitlabResource } from './testing-services/gitlab-pipelines.js';

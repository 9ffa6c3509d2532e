/**
 * What crates/ offers the other features; the lint rule in eslint.config.js lets them import
 * from `crates/` only through this file.
 */
export { CratesModule } from './crates.module.js';
export { ArchiveLock } from './archive-lock.js';
export { formatBytes } from './byte-size.js';
export {
  ARCHIVE_REFERENCES,
  CrateJanitor,
  type ArchiveReferences,
  type SweepResult,
} from './crate-janitor.js';
export {
  CrateDownloader,
  removeQuietly,
  type DerivedLink,
  type DownloadedCrate,
} from './crate-downloader.js';
export { folderOf, pathInCrate, resolveInCrate } from './crate-paths.js';
export {
  CrateReader,
  DEFAULT_MAX_METADATA_BYTES,
  IN_MEMORY_ARCHIVE_BYTES,
  METADATA_FILE,
  MissingMetadataError,
  type CompanionFiles,
  type CrateContents,
  type CrateFile,
} from './crate-reader.js';
export { CrateStore, isNotFound } from './crate-store.js';
export {
  parseCrateGraph,
  parseMainWorkflowOf,
  readCrateGraph,
  type ParsedCrate,
  type ParsedSuite,
  type ParsedWorkflow,
} from './ro-crate-parser.js';
export {
  canonicalTarget,
  resourceProblem,
  TESTING_SERVICE_CATALOG,
  type CrateServiceType,
  type InstanceTarget,
  type TestingServiceCatalog,
} from './testing-service-catalog.js';
export { LinkFailure, UpstreamUnavailable } from './upstream-unavailable.js';
export { WORKFLOW_LANGUAGES, workflowLanguageOf, type WorkflowLanguage } from './workflow-language.js';
export { singleFileZip } from './zip-writer.js';
export {
  ISSUE_CHECKS,
  ISSUE_CHECKS_PROVIDER,
  ISSUE_SEVERITIES,
  RegisterIssueCheck,
  type CheckedCrate,
  type CheckedRepository,
  type IssueCheck,
  type IssueChecks,
  type IssueFinding,
  type IssueSeverity,
  type IssueType,
} from './checks/issue-check.js';
export { isSelected, type IssueSelection } from './checks/issue-selection.js';
export {
  MissingLicenseCheck,
  MissingReadmeCheck,
  MissingWorkflowFileCheck,
} from './checks/crate-files.checks.js';
export {
  MissingTestDefinitionCheck,
  MissingTestSuiteCheck,
  TestSuiteWithoutInstancesCheck,
  UNCHECKABLE_INSTANCE,
  UncheckableTestInstanceCheck,
} from './checks/test-suites.checks.js';
export { WorkflowTestingProfileCheck } from './checks/workflow-testing-profile.check.js';

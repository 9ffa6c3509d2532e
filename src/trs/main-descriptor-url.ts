import type { WorkflowLanguage } from '../crates/index.js';
import { plainDescriptorUrlOf } from './dto/trs-responses.dto.js';
import { toolPathOf } from './tool-files.js';
import { TRS_PREFIX } from './trs.controller.js';

/** What names a version's main workflow in TRS. */
export interface VersionMainWorkflow {
  workflowUuid: string;
  /** The version string (TRS's version id). */
  version: string;
  /** The main workflow's language; null when it is none TRS knows (no descriptor type). */
  language: WorkflowLanguage | null;
  /** The main workflow's path in the crate; undefined when the crate names none in it. */
  mainWorkflowPath: string | undefined;
}

/**
 * The URL at which this service's TRS serves a version's main workflow bare (API.md 10.2), from
 * `baseUrl` (PUBLIC_BASE_URL): the `workflow_url` a WES endpoint fetches (API.md 17). It names
 * the main workflow by its tool path, the name `/files` gives it, which TRS tries first
 * (`cratePathsOf`), so that it names the main workflow whatever else the crate holds without the
 * crate being read; imports relative to it resolve to the files TRS serves beside it. Undefined
 * for a version without a main workflow in its crate or without a descriptor type.
 */
export function mainDescriptorUrlOf(baseUrl: string, version: VersionMainWorkflow): string | undefined {
  const { language, mainWorkflowPath } = version;
  if (language === null || mainWorkflowPath === undefined) {
    return undefined;
  }
  return plainDescriptorUrlOf({ url: `${baseUrl}${TRS_PREFIX}` }, version.workflowUuid, version.version, {
    language,
    urlPath: toolPathOf(mainWorkflowPath, mainWorkflowPath),
  });
}

import { loaded } from './dto/loaded.js';
import type { WorkflowEntity, WorkflowVersionEntity } from './entities/registry.entities.js';

/** The workflow's versions, older first (ids grow with registration). */
export function versionsOf(workflow: WorkflowEntity): WorkflowVersionEntity[] {
  return [...loaded(workflow.versions, 'workflow.versions')].sort((a, b) => a.id - b.id);
}

/** The version registered last; a workflow without one is a bug (registration stores both at once). */
export function latestVersionOf(workflow: WorkflowEntity): WorkflowVersionEntity {
  const versions = versionsOf(workflow);
  const latest = versions[versions.length - 1];
  if (latest === undefined) {
    throw new Error(`workflow ${workflow.uuid} has no version`);
  }
  return latest;
}

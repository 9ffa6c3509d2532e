import type { IssueType } from './issue-check.js';

/**
 * Which checks' findings a registration records: a `.lifemonitor.yaml`'s `issues` section
 * (LifeMonitor's schema: `check`, `include`, `exclude`). Absent members: everything recorded.
 */
export interface IssueSelection {
  /** false: no check runs. */
  check?: boolean;
  /** Types recorded even when `exclude` names them. */
  include?: readonly string[];
  /** Types not recorded. */
  exclude?: readonly string[];
}

/**
 * Whether findings of `type` are recorded, as LifeMonitor decides it: a type `include` names is,
 * else one `exclude` names is not, else it is. A name matches a type by its whole id
 * (`repo_layout.MissingROCrateWorkflowFile`) or by the part after the group
 * (`MissingROCrateWorkflowFile`, as LifeMonitor compares class names), ignoring case, `_` and
 * `-` (`missing_ro_crate_workflow_file`).
 */
export function isSelected(type: IssueType, selection: IssueSelection = {}): boolean {
  if (selection.check === false) {
    return false;
  }
  if (selection.include?.some((name) => names(name, type))) {
    return true;
  }
  return !selection.exclude?.some((name) => names(name, type));
}

function names(name: string, type: IssueType): boolean {
  const wanted = folded(name);
  const local = type.id.slice(type.id.lastIndexOf('.') + 1);
  return wanted === folded(type.id) || wanted === folded(local);
}

function folded(name: string): string {
  return name.trim().replace(/[_-]/g, '').toLowerCase();
}

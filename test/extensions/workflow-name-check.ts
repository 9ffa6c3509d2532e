import { Injectable, Module } from '@nestjs/common';
import {
  RegisterIssueCheck,
  type CheckedCrate,
  type IssueCheck,
  type IssueFinding,
  type IssueType,
} from '../../src/crates/checks/issue-check.js';

/**
 * A repository check that lives only in the tests: the walk-through of docs/extending.md ("a new
 * repository check") done for real. It warns about a main workflow without a name of its own.
 */

/** Step 1: the issue type. */
export const UNNAMED_WORKFLOW: IssueType = {
  id: 'metadata.MissingWorkflowName',
  name: 'Missing workflow name in metadata',
  description: 'The main workflow of the crate has no name: name it in ro-crate-metadata.json.',
  severity: 'warning',
  labels: ['metadata'],
};

/** Step 2: the check. */
@RegisterIssueCheck()
@Injectable()
export class UnnamedWorkflowCheck implements IssueCheck {
  readonly types = [UNNAMED_WORKFLOW];

  check({ crate }: CheckedCrate): IssueFinding[] {
    const main = crate.mainWorkflow;
    return main && main.name === undefined
      ? [{ type: UNNAMED_WORKFLOW, detail: `the main workflow ${main.id} has no name` }]
      : [];
  }
}

/** Step 3: the one registration line, here in a test module instead of WorkflowsModule. */
@Module({ providers: [UnnamedWorkflowCheck] })
export class WorkflowNameCheckModule {}

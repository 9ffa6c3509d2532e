import { Injectable } from '@nestjs/common';
import { rootOf } from '../ro-crate-parser.js';
import { LICENSE } from '../crate-graph.js';
import {
  RegisterIssueCheck,
  type CheckedCrate,
  type IssueCheck,
  type IssueFinding,
  type IssueType,
} from './issue-check.js';

/** LifeMonitor's type of the same name and id. */
export const MISSING_WORKFLOW_FILE: IssueType = {
  id: 'repo_layout.MissingROCrateWorkflowFile',
  name: 'Missing RO-Crate workflow file',
  description:
    'The workflow file declared on RO-Crate metadata (the mainEntity of the root dataset) is missing in the crate: ' +
    'add the file, or name the file that is there.',
  severity: 'error',
  labels: ['metadata'],
};

export const MISSING_LICENSE: IssueType = {
  id: 'best_practices.MissingLicense',
  name: 'Missing LICENSE',
  description:
    'The crate has neither a licence file (LICENSE, LICENCE or COPYING, with any extension) at its root nor a ' +
    'license on its root dataset: without one, nobody may reuse the workflow.',
  severity: 'warning',
  labels: ['best-practices'],
};

export const MISSING_README: IssueType = {
  id: 'best_practices.MissingReadme',
  name: 'Missing README',
  description:
    'The crate has no README file (README, with any extension) at its root to tell people what the workflow does.',
  severity: 'warning',
  labels: ['best-practices'],
};

/** The main workflow is named by the crate and its file is in the archive (unless it is on the web). */
@RegisterIssueCheck()
@Injectable()
export class MissingWorkflowFileCheck implements IssueCheck {
  readonly types = [MISSING_WORKFLOW_FILE];

  check({ crate, files }: CheckedCrate): IssueFinding[] {
    const main = crate.mainWorkflow;
    if (!main) {
      return [{ type: MISSING_WORKFLOW_FILE, detail: 'the crate names no main workflow (mainEntity)' }];
    }
    const path = crateFilePath(main.id);
    if (path === undefined || files.has(path)) {
      return [];
    }
    return [{ type: MISSING_WORKFLOW_FILE, detail: `the main workflow ${main.id} is not in the crate` }];
  }
}

@RegisterIssueCheck()
@Injectable()
export class MissingLicenseCheck implements IssueCheck {
  readonly types = [MISSING_LICENSE];

  check({ graph, files }: CheckedCrate): IssueFinding[] {
    if (
      (rootOf(graph)?.props.get(LICENSE)?.length ?? 0) > 0 ||
      hasRootFile(files, /^(licen[cs]e|copying)([._-].*)?$/i)
    ) {
      return [];
    }
    return [
      {
        type: MISSING_LICENSE,
        detail: 'the crate has no licence file at its root and its root dataset has no license',
      },
    ];
  }
}

@RegisterIssueCheck()
@Injectable()
export class MissingReadmeCheck implements IssueCheck {
  readonly types = [MISSING_README];

  check({ files }: CheckedCrate): IssueFinding[] {
    return hasRootFile(files, /^readme([._-].*)?$/i)
      ? []
      : [{ type: MISSING_README, detail: 'the crate has no README file at its root' }];
  }
}

/**
 * The path in the archive of a data entity's `@id`, or undefined for one that is not a file of
 * the crate (an absolute URI: a web-based data entity). Ids are URI references: `%20` is a space.
 */
export function crateFilePath(id: string): string | undefined {
  if (/^[A-Za-z][A-Za-z0-9+.-]*:/.test(id)) {
    return undefined;
  }
  let path: string;
  try {
    path = decodeURIComponent(id.replace(/[?#].*$/, ''));
  } catch {
    path = id;
  }
  return path.replace(/^(\.\/)+/, '').replace(/^\/+/, '');
}

function hasRootFile(files: ReadonlySet<string>, pattern: RegExp): boolean {
  for (const file of files) {
    if (!file.includes('/') && pattern.test(file)) {
      return true;
    }
  }
  return false;
}

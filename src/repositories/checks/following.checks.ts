import { Injectable } from '@nestjs/common';
import { RepositoryHosts, type RepositoryRef } from '../hosts/repository-host.js';
import { matchesAny } from '../follow/follow-rules.js';
import {
  type CheckedCrate,
  type IssueCheck,
  type IssueFinding,
  type IssueType,
  RegisterIssueCheck,
} from '../../crates/index.js';

/** LifeMonitor's type of the same name and id. */
export const INVALID_CONFIG_FILE: IssueType = {
  id: 'lm.InvalidConfigFile',
  name: 'Invalid LifeMonitor configuration file',
  description:
    'The LifeMonitor configuration file found on this repository is not valid according to the schema ' +
    '(GET /integrations/github/config/schema.json): it is left out, as if absent, until it is fixed ' +
    '(POST /integrations/github/config/validate says where it is wrong).',
  severity: 'error',
  labels: ['lifemonitor'],
};

export const MISSING_FOLLOWED_BRANCH: IssueType = {
  id: 'lm.MissingFollowedBranch',
  name: 'Followed branch missing',
  description:
    'A branch the workflow follows (its follow.branches, or the push.branches of its .lifemonitor.yaml) is not in ' +
    'the repository: no push to it can register a version. Create the branch, or follow one that is there.',
  severity: 'warning',
  labels: ['lifemonitor'],
  dependsOn: [INVALID_CONFIG_FILE.id],
};

/** At most this many pages of branches are read (5,000 branches). */
const MAX_PAGES = 50;

/** The repository's `.lifemonitor.yaml` is valid, when there is one. */
@RegisterIssueCheck()
@Injectable()
export class InvalidConfigFileCheck implements IssueCheck {
  readonly types = [INVALID_CONFIG_FILE];

  check({ following }: CheckedCrate): IssueFinding[] {
    if (!following?.file || following.problem === undefined) {
      return [];
    }
    return [{ type: INVALID_CONFIG_FILE, detail: `${following.file} is not valid: ${following.problem}` }];
  }
}

/**
 * Every branch glob followed matches a branch of the repository. Reads the host's branches: when
 * the host cannot answer, the check throws and the registration goes on without its finding.
 */
@RegisterIssueCheck()
@Injectable()
export class MissingFollowedBranchCheck implements IssueCheck {
  readonly types = [MISSING_FOLLOWED_BRANCH];

  constructor(private readonly hosts: RepositoryHosts) {}

  async check({ repository, following }: CheckedCrate): Promise<IssueFinding[]> {
    if (!repository || !following || following.branches.length === 0) {
      return [];
    }
    const host = this.hosts.of(repository);
    const branches: RepositoryRef[] = [];
    for (let page = 1; page <= MAX_PAGES; page++) {
      const answer = await host.refsPage(repository, 'heads', page);
      if (answer.kind === 'unchanged') {
        break;
      }
      branches.push(...answer.refs);
      if (answer.last) {
        break;
      }
    }
    return following.branches
      .filter((glob) => !branches.some((branch) => matchesAny([glob], branch.name)))
      .map((glob) => ({
        type: MISSING_FOLLOWED_BRANCH,
        detail: /[*?[{]/.test(glob)
          ? `no branch of ${repository.owner}/${repository.repo} matches '${glob}'`
          : `the branch '${glob}' is not in ${repository.owner}/${repository.repo}`,
      }));
  }
}

import { Injectable } from '@nestjs/common';
import { INSTANCE } from '../crate-graph.js';
import {
  RegisterIssueCheck,
  type CheckedCrate,
  type IssueCheck,
  type IssueFinding,
  type IssueType,
} from './issue-check.js';

export const MISSING_TEST_SUITE: IssueType = {
  id: 'testing.MissingTestSuite',
  name: 'No test suite',
  description:
    'The crate describes no TestSuite: there is nothing to monitor. Describe the tests and where they run ' +
    '(Workflow Testing RO-Crate: a TestSuite mentioned by the root dataset, with its TestInstances and TestDefinition).',
  severity: 'error',
  labels: ['tests'],
};

export const SUITE_WITHOUT_INSTANCES: IssueType = {
  id: 'testing.TestSuiteWithoutInstances',
  name: 'Test suite without test instances',
  description:
    'A TestSuite names no TestInstance (a CI service and the project on it that runs the tests): nothing runs ' +
    'its tests where this service can see them.',
  severity: 'warning',
  labels: ['tests'],
  dependsOn: [MISSING_TEST_SUITE.id],
};

export const MISSING_TEST_DEFINITION: IssueType = {
  id: 'testing.MissingTestDefinition',
  name: 'Test suite without test definition',
  description:
    'A TestSuite has no TestDefinition (the test file and the engine it is written for, e.g. Planemo): people ' +
    'cannot run its tests themselves.',
  severity: 'warning',
  labels: ['tests'],
  dependsOn: [MISSING_TEST_SUITE.id],
};

export const UNCHECKABLE_INSTANCE: IssueType = {
  id: 'testing.UncheckableTestInstance',
  name: 'Test instance that cannot be checked',
  description:
    'A TestInstance has no resource, or one its CI service cannot check: it is registered but never checked. ' +
    'Give it the resource of its project on the service (e.g. repos/{owner}/{repo}/actions/workflows/{file} on GitHub).',
  severity: 'error',
  labels: ['tests'],
  dependsOn: [MISSING_TEST_SUITE.id],
};

@RegisterIssueCheck()
@Injectable()
export class MissingTestSuiteCheck implements IssueCheck {
  readonly types = [MISSING_TEST_SUITE];

  check({ crate }: CheckedCrate): IssueFinding[] {
    return crate.suites.length > 0
      ? []
      : [{ type: MISSING_TEST_SUITE, detail: 'the crate describes no test suite' }];
  }
}

@RegisterIssueCheck()
@Injectable()
export class TestSuiteWithoutInstancesCheck implements IssueCheck {
  readonly types = [SUITE_WITHOUT_INSTANCES];

  check({ crate, graph }: CheckedCrate): IssueFinding[] {
    return crate.suites
      .filter((suite) => suite.instances.length === 0)
      .map((suite) => {
        // What it names as instances was left out by the parser: the crate does not describe it as one.
        const named = graph.refs(graph.byId.get(suite.id)?.props.get(INSTANCE));
        const why =
          named.length === 0
            ? ''
            : ` (it names ${named.join(', ')}, which the crate does not describe as a TestInstance)`;
        return {
          type: SUITE_WITHOUT_INSTANCES,
          detail: `the test suite ${suite.id} has no test instances${why}`,
        };
      });
  }
}

@RegisterIssueCheck()
@Injectable()
export class MissingTestDefinitionCheck implements IssueCheck {
  readonly types = [MISSING_TEST_DEFINITION];

  check({ crate }: CheckedCrate): IssueFinding[] {
    return crate.suites
      .filter((suite) => suite.definition === null)
      .map((suite) => ({
        type: MISSING_TEST_DEFINITION,
        detail: `the test suite ${suite.id} has no test definition`,
      }));
  }
}

@RegisterIssueCheck()
@Injectable()
export class UncheckableTestInstanceCheck implements IssueCheck {
  readonly types = [UNCHECKABLE_INSTANCE];

  check({ crate }: CheckedCrate): IssueFinding[] {
    return crate.suites.flatMap((suite) =>
      suite.instances.flatMap((instance) =>
        instance.uncheckedReason === undefined
          ? []
          : [
              {
                type: UNCHECKABLE_INSTANCE,
                detail: `the test instance ${instance.id} is never checked: ${instance.uncheckedReason}`,
              },
            ],
      ),
    );
  }
}

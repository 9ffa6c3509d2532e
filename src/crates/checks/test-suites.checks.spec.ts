import { crateMetadata, TEST_TERMS } from '../../../test/support/registry.js';
import { checkedCrate } from '../../../test/support/checked-crate.js';
import { CRATE_SERVICES } from '../../../test/support/crate-services.js';
import {
  MissingTestDefinitionCheck,
  MissingTestSuiteCheck,
  TestSuiteWithoutInstancesCheck,
  UncheckableTestInstanceCheck,
} from './test-suites.checks.js';

type Graph = { '@graph': Record<string, unknown>[] };

function node(metadata: Graph, id: string): Record<string, unknown> {
  const found = metadata['@graph'].find((entity) => entity['@id'] === id);
  if (!found) {
    throw new Error(`no ${id}`);
  }
  return found;
}

describe('the checks of test suites', () => {
  it('find nothing wrong with a suite that has instances, a definition and resources', async () => {
    const subject = checkedCrate(crateMetadata());
    for (const check of [
      new MissingTestSuiteCheck(),
      new TestSuiteWithoutInstancesCheck(),
      new MissingTestDefinitionCheck(),
      new UncheckableTestInstanceCheck(),
    ]) {
      await expect(Promise.resolve(check.check(subject))).resolves.toEqual([]);
    }
  });

  it('report a crate without any test suite (an error)', () => {
    const metadata = crateMetadata() as Graph;
    metadata['@graph'] = metadata['@graph'].filter((entity) => entity['@type'] !== 'TestSuite');
    const found = new MissingTestSuiteCheck().check(checkedCrate(metadata));
    expect(found.map((f) => [f.type.id, f.type.severity, f.detail])).toEqual([
      ['testing.MissingTestSuite', 'error', 'the crate describes no test suite'],
    ]);
  });

  it('report a suite without instances, naming what it names that is not one, and one without a definition', () => {
    const metadata = crateMetadata() as Graph;
    node(metadata, '#suite1').instance = [{ '@id': 'workflow.ga' }];
    delete node(metadata, '#suite1').definition;
    const subject = checkedCrate(metadata);
    expect(
      new TestSuiteWithoutInstancesCheck().check(subject).map((f) => [f.type.severity, f.detail]),
    ).toEqual([
      [
        'warning',
        'the test suite #suite1 has no test instances (it names workflow.ga, which the crate does not describe as a TestInstance)',
      ],
    ]);
    expect(new MissingTestDefinitionCheck().check(subject).map((f) => [f.type.severity, f.detail])).toEqual([
      ['warning', 'the test suite #suite1 has no test definition'],
    ]);
  });

  it('report each instance that is never checked, and why (an error)', () => {
    const metadata = crateMetadata({
      instances: [
        { id: '#fine', resource: 'repos/o/r/actions/workflows/ci.yml' },
        { id: '#bad', resource: 'repos/o/r' },
        { id: '#none', runsOn: `${TEST_TERMS}JenkinsService`, url: 'https://ci.example.org' },
      ],
    }) as Graph;
    delete node(metadata, '#none').resource;
    const services = CRATE_SERVICES.map((service) =>
      service.type === 'github'
        ? {
            ...service,
            resourceProblem: (resource: string) =>
              resource.includes('/actions/') ? undefined : 'no workflow',
          }
        : service,
    );
    const found = new UncheckableTestInstanceCheck().check(checkedCrate(metadata, undefined, services));
    expect(found.map((f) => f.type.severity)).toEqual(['error', 'error']);
    expect(found[0].detail).toMatch(
      /^the test instance #bad is never checked: its resource cannot be checked on github: no workflow$/,
    );
    expect(found[1].detail).toMatch(
      /^the test instance #none is never checked: the crate gives it no resource/,
    );
  });
});

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { WITH_SERVICES } from '../../../test/support/crate-services.js';
import { readCrateGraph } from '../ro-crate-parser.js';
import { PROFILE_RULES, profileFindings } from './workflow-testing-profile.check.js';

/** crs4/rocrate-validator's test crates of the profile (see the README there). */
const FIXTURES = 'test/fixtures/crates/workflow-testing-profile';

function findingsOf(folder: string) {
  const metadata = JSON.parse(
    readFileSync(join(FIXTURES, folder, 'ro-crate-metadata.json'), 'utf8'),
  ) as unknown;
  return profileFindings(readCrateGraph(metadata, WITH_SERVICES));
}

/**
 * Each invalid crate with the rule the validator's tests expect it to break
 * (`tests/integration/profiles/workflow-testing-ro-crate/test_wtroc_*.py`), and the shape's message.
 */
const EXPECTED: [string, string, RegExp][] = [
  ['invalid/testsuite_not_mentioned', 'wftest.TestSuiteMentionedByRoot', /#test2 is not mentioned/],
  [
    'invalid/testsuite_no_instance_no_def',
    'wftest.TestSuiteInstanceOrDefinition',
    /#test1 refers to neither/,
  ],
  [
    'invalid/testsuite_bad_instance',
    'wftest.TestSuiteInstanceOrDefinition',
    /#test1 refers only to sort-and-change-case.ga/,
  ],
  [
    'invalid/testsuite_bad_definition',
    'wftest.TestSuiteInstanceOrDefinition',
    /#test1 refers only to sort-and-change-case.ga/,
  ],
  ['invalid/testsuite_no_mainentity', 'wftest.TestSuiteMainEntity', /#test1 has no mainEntity/],
  ['invalid/testsuite_bad_mainentity', 'wftest.TestSuiteMainEntity', /Apache-2.0.html, is not a workflow/],
  ['invalid/testinstance_no_service', 'wftest.TestInstanceRunsOn', /#test1_1 has no runsOn/],
  [
    'invalid/testinstance_bad_runson',
    'wftest.TestInstanceRunsOn',
    /#test1_1 runs on sort-and-change-case.ga, which the crate does not describe as a TestService/,
  ],
  ['invalid/testinstance_no_url', 'wftest.TestInstanceUrl', /#test1_1 has no url/],
  ['invalid/testinstance_bad_url', 'wftest.TestInstanceUrl', /the url of #test1_1 does not start with http/],
  ['invalid/testinstance_no_resource', 'wftest.TestInstanceResource', /#test1_1 has no resource/],
  [
    'invalid/testinstance_bad_resource',
    'wftest.TestInstanceResource',
    /the resource of #test1_1 is not a text/,
  ],
  [
    'invalid/testdefinition_bad_type',
    'wftest.TestDefinitionType',
    /sort-and-change-case-tests.yml is not a File/,
  ],
  ['invalid/testdefinition_no_engine', 'wftest.TestDefinitionConformsTo', /tests.yml has no conformsTo/],
  [
    'invalid/testdefinition_bad_conformsto',
    'wftest.TestDefinitionConformsTo',
    /conforms to https:\/\/spdx.org\/licenses\/Apache-2.0.html, which the crate does not describe as a SoftwareApplication/,
  ],
  [
    'invalid/testdefinition_no_engineversion',
    'wftest.TestDefinitionEngineVersion',
    /tests.yml has no engineVersion/,
  ],
  [
    'invalid/testdefinition_bad_engineversion',
    'wftest.TestDefinitionEngineVersion',
    /the engineVersion of sort-and-change-case-tests.yml is not a text/,
  ],
  ['no-test-suites', 'wftest.RootDataEntityMentions', /the root data entity mentions nothing/],
];

describe('the Workflow Testing RO-Crate profile, on the crates of crs4/rocrate-validator', () => {
  it('finds nothing wrong with the valid crate', () => {
    expect(findingsOf('valid')).toEqual([]);
  });

  it.each(EXPECTED)('%s breaks exactly %s, said where', (folder, rule, where) => {
    const findings = findingsOf(folder);
    expect(findings.map((finding) => finding.type.id)).toEqual([rule]);
    const [finding] = findings;
    const profileRule = PROFILE_RULES.find((candidate) => candidate.type.id === rule);
    // The shape's message first, then what breaks it.
    expect(finding.detail.startsWith(`${profileRule?.message}: `)).toBe(true);
    expect(finding.detail).toMatch(where);
  });

  it('covers every rule of the profile with one of its crates', () => {
    expect(new Set(EXPECTED.map(([, rule]) => rule))).toEqual(
      new Set(PROFILE_RULES.map((profileRule) => profileRule.type.id)),
    );
  });

  it('makes a MUST broken an error and a SHOULD broken a warning, naming the rule', () => {
    const severity = Object.fromEntries(PROFILE_RULES.map((r) => [r.type.id, r.type.severity]));
    expect(severity['wftest.TestSuiteMainEntity']).toBe('warning');
    expect(Object.entries(severity).filter(([, level]) => level === 'warning')).toHaveLength(1);
    expect(PROFILE_RULES.find((r) => r.type.id === 'wftest.TestInstanceResource')?.type).toMatchObject({
      name: 'Workflow Testing RO-Crate: TestInstance resource',
      severity: 'error',
    });
  });

  it('takes text given as a value object, and refuses one in a language', () => {
    const metadata = JSON.parse(readFileSync(join(FIXTURES, 'valid', 'ro-crate-metadata.json'), 'utf8')) as {
      '@graph': Record<string, unknown>[];
    };
    const instance = metadata['@graph'].find((node) => node['@id'] === '#test1_1');
    if (!instance) {
      throw new Error('no #test1_1 in the valid crate');
    }
    instance.resource = { '@value': 'job/tests/' };
    expect(profileFindings(readCrateGraph(metadata, WITH_SERVICES))).toEqual([]);
    instance.resource = { '@value': 'job/tests/', '@language': 'en' };
    expect(profileFindings(readCrateGraph(metadata, WITH_SERVICES)).map((f) => f.type.id)).toEqual([
      'wftest.TestInstanceResource',
    ]);
  });
});

import { readFileSync } from 'node:fs';
import { AppConfig } from '../config/app-config.js';
import { GithubActionsService } from '../test-monitoring/testing-services/github-actions.service.js';
import { JenkinsService } from '../test-monitoring/testing-services/jenkins.service.js';
import { TestingServiceRegistry } from '../test-monitoring/testing-services/testing-service.js';
import { TravisService } from '../test-monitoring/testing-services/travis.service.js';
import { parseRoCrate } from './ro-crate-parser.js';

/**
 * The crate forms of API.md 7.1 (test/fixtures/crates/forms/README.md says where each comes from),
 * read with the app's real clients telling the parser which spellings of a service they accept.
 */
const config = Object.assign(new AppConfig(), { monitoring: { services: [] } });
const registry = new TestingServiceRegistry(
  () => [new GithubActionsService(config), new TravisService(config), new JenkinsService(config)],
  config,
);
registry.onModuleInit();
const services = registry.serviceTypes();

/** The entity of a form with this @id, to change. */
function entity(metadata: unknown, id: string): Record<string, unknown> {
  const graph = (metadata as { '@graph': Record<string, unknown>[] })['@graph'];
  const found = graph.find((node) => node['@id'] === id);
  if (!found) {
    throw new Error(`no ${id}`);
  }
  return found;
}

function form(name: string): unknown {
  return JSON.parse(readFileSync(`test/fixtures/crates/forms/${name}`, 'utf8'));
}

const targets = (metadata: unknown) =>
  parseRoCrate(metadata, { services }).suites.flatMap((suite) =>
    suite.instances.map(({ id, serviceType, serviceUrl, resource }) => ({
      id,
      serviceType,
      serviceUrl,
      resource,
    })),
  );

describe('crate forms (API.md 7.1)', () => {
  it('reads RO-Crate 1.1 with the Workflow Testing 0.1 terms in an inline context, and a Travis web site', () => {
    const parsed = parseRoCrate(form('rocrate-1.1-wftest-0.1-inline-context.json'), { services });
    expect(parsed.name).toBe('Assembly-decontamination-VGP9');
    expect(parsed.mainWorkflow).toMatchObject({
      id: 'Assembly-decontamination-VGP9.ga',
      name: 'Assembly decontamination VGP9',
    });
    expect(parsed.suites[0].definition).toEqual({
      path: 'Assembly-decontamination-VGP9-tests.yml',
      engineType: 'planemo',
      engineVersion: '>=0.74.6',
    });
    expect(targets(form('rocrate-1.1-wftest-0.1-inline-context.json'))).toEqual([
      {
        id: '#test1_1',
        serviceType: 'github',
        serviceUrl: 'https://api.github.com',
        resource: 'repos/iwc-workflows/Assembly-decontamination-VGP9/actions/workflows/wftest.yml',
      },
      {
        id: '#test1_2',
        serviceType: 'travis',
        serviceUrl: 'https://api.travis-ci.com',
        resource: 'repo/iwc-workflows%2FAssembly-decontamination-VGP9',
      },
    ]);
  });

  it('reads RO-Crate 1.2 with the remote test context, 1.2 Bioschemas IRIs, and a GitHub resource as a full API URL', () => {
    const parsed = parseRoCrate(form('rocrate-1.2-wftest-0.1-remote-context.json'), { services });
    expect(parsed.name).toBe('nf-core/demo');
    expect(parsed.mainWorkflow?.programmingLanguage).toEqual({ id: '#nextflow', name: 'Nextflow' });
    expect(parsed.suites[0].definition?.engineType).toBe('nextflow');
    expect(targets(form('rocrate-1.2-wftest-0.1-remote-context.json'))).toEqual([
      {
        id: '#ci_gha',
        serviceType: 'github',
        serviceUrl: 'https://api.github.com',
        resource: 'repos/nf-core/demo/actions/workflows/ci.yml',
      },
    ]);
  });

  it('reads RO-Crate 1.3 with Workflow Testing 0.2, 1.3 Bioschemas IRIs, GitHub and Travis web-site forms', () => {
    const parsed = parseRoCrate(form('rocrate-1.3-wftest-0.2.json'), { services });
    expect(parsed.name).toBe('sort-and-change-case');
    expect(parsed.suites.map((suite) => suite.id)).toEqual(['#test1']);
    expect(targets(form('rocrate-1.3-wftest-0.2.json'))).toEqual([
      {
        id: '#test1_1',
        serviceType: 'github',
        serviceUrl: 'https://api.github.com',
        resource: 'repos/crs4/sort-and-change-case/actions/workflows/test.yml',
      },
      {
        id: '#test1_2',
        serviceType: 'travis',
        serviceUrl: 'https://api.travis-ci.com',
        resource: 'repo/crs4%2Fsort-and-change-case',
      },
    ]);
  });

  it('finds the main workflow by its Bioschemas type, in any spelling, when the root names none', () => {
    const parsed = parseRoCrate(form('expanded-iris-no-main-entity.json'), { services });
    expect(parsed.mainWorkflow).toMatchObject({ id: 'workflow/Snakefile', name: 'fair-crcc-send-data' });
    expect(targets(form('expanded-iris-no-main-entity.json'))).toEqual([
      {
        id: '#jenkins',
        serviceType: 'jenkins',
        serviceUrl: 'https://ci.example.org',
        resource: 'job/fair-crcc/job/main',
      },
    ]);
    for (const spelling of [
      'https://bioschemas.org/ComputationalWorkflow',
      'https://bioschemas.org/terms/ComputationalWorkflow',
      'https://bioschemas.org/types/ComputationalWorkflow/1.0-RELEASE',
      'bioschemas:ComputationalWorkflow',
      'ComputationalWorkflow',
    ]) {
      const metadata = form('expanded-iris-no-main-entity.json');
      entity(metadata, 'workflow/Snakefile')['@type'] = ['File', spelling];
      expect(parseRoCrate(metadata, { services }).mainWorkflow?.id).toBe('workflow/Snakefile');
    }
  });

  it('does not take a main workflow when the crate has two and names neither', () => {
    const metadata = form('expanded-iris-no-main-entity.json') as { '@graph': Record<string, unknown>[] };
    metadata['@graph'].push({
      '@id': 'other.cwl',
      '@type': 'https://bioschemas.org/terms/ComputationalWorkflow',
    });
    expect(parseRoCrate(metadata, { services }).mainWorkflow).toBeUndefined();
  });

  it.each([
    ['https://travis-ci.com', 'https://api.travis-ci.com'],
    ['https://app.travis-ci.com/', 'https://api.travis-ci.com'],
    ['https://travis-ci.org', 'https://api.travis-ci.com'],
    ['https://api.travis-ci.com', 'https://api.travis-ci.com'],
    ['https://travis.example.org/api', 'https://travis.example.org/api'],
    // A page of the site is not the site: kept as given (and then fails its checks visibly).
    ['https://app.travis-ci.com/github/o/r', 'https://app.travis-ci.com/github/o/r'],
  ])('stores the Travis url %s as %s', (url, stored) => {
    const metadata = form('rocrate-1.3-wftest-0.2.json');
    entity(metadata, '#test1_2').url = url;
    expect(targets(metadata)[1].serviceUrl).toBe(stored);
  });

  it.each([
    [
      'https://api.github.com/repos/o/r/actions/workflows/ci.yml',
      'https://api.github.com',
      'repos/o/r/actions/workflows/ci.yml',
    ],
    [
      'https://ghe.example.org/api/v3/repos/o/r/actions/workflows/7',
      'https://ghe.example.org/api/v3',
      'repos/o/r/actions/workflows/7',
    ],
    [
      'https://github.com/o/r/actions/workflows/ci.yml',
      'https://api.github.com',
      'repos/o/r/actions/workflows/ci.yml',
    ],
    ['repos/o/r/actions/workflows/ci.yml', 'https://api.github.com', 'repos/o/r/actions/workflows/ci.yml'],
  ])('stores the GitHub resource %s as %s + %s', (resource, url, stored) => {
    const metadata = form('rocrate-1.3-wftest-0.2.json');
    entity(metadata, '#test1_1').resource = resource;
    expect(targets(metadata)[0]).toMatchObject({ serviceUrl: url, resource: stored });
  });
});

import { DomainError } from '../common/errors/domain-error.js';
import { engineTypeOf, parseRoCrate, serviceTypeOf } from './ro-crate-parser.js';
import { CRATE_SERVICES, WITH_SERVICES } from '../../test/support/crate-services.js';

const T = 'https://w3id.org/ro/terms/test#';

/** The local context the Workflow Testing RO-Crate examples carry. */
const TEST_CONTEXT = {
  TestSuite: `${T}TestSuite`,
  TestInstance: `${T}TestInstance`,
  TestService: `${T}TestService`,
  TestDefinition: `${T}TestDefinition`,
  PlanemoEngine: `${T}PlanemoEngine`,
  JenkinsService: `${T}JenkinsService`,
  TravisService: `${T}TravisService`,
  GithubService: `${T}GithubService`,
  instance: `${T}instance`,
  runsOn: `${T}runsOn`,
  resource: `${T}resource`,
  definition: `${T}definition`,
  engineVersion: `${T}engineVersion`,
};

const DESCRIPTOR = {
  '@id': 'ro-crate-metadata.json',
  '@type': 'CreativeWork',
  about: { '@id': './' },
  conformsTo: { '@id': 'https://w3id.org/ro/crate/1.1' },
};

function compactCrate(): Record<string, unknown> {
  return structuredClone({
    '@context': ['https://w3id.org/ro/crate/1.1/context', TEST_CONTEXT],
    '@graph': [
      DESCRIPTOR,
      {
        '@id': './',
        '@type': 'Dataset',
        name: 'sort-and-change-case-crate',
        mainEntity: { '@id': 'sort-and-change-case.ga' },
        mentions: [{ '@id': '#test1' }],
      },
      {
        '@id': 'sort-and-change-case.ga',
        '@type': ['File', 'SoftwareSourceCode', 'ComputationalWorkflow'],
        programmingLanguage: { '@id': '#galaxy' },
        name: 'sort-and-change-case',
      },
      { '@id': '#galaxy', '@type': 'ComputerLanguage', name: 'Galaxy' },
      {
        '@id': '#test1',
        name: 'test1',
        '@type': 'TestSuite',
        instance: [{ '@id': '#test1_1' }, { '@id': '#test1_2' }],
        definition: { '@id': 'test/test1/sort-and-change-case-test.yml' },
      },
      {
        '@id': '#test1_1',
        name: 'test1_1',
        '@type': 'TestInstance',
        runsOn: { '@id': `${T}TravisService` },
        url: 'https://api.travis-ci.org/',
        resource: 'repo/1002447',
      },
      {
        '@id': '#test1_2',
        '@type': 'TestInstance',
        runsOn: { '@id': `${T}JenkinsService` },
        url: 'https://ci.example.org/jenkins',
        resource: 'job/tests/job/main',
      },
      {
        '@id': 'test/test1/sort-and-change-case-test.yml',
        '@type': ['File', 'TestDefinition'],
        conformsTo: { '@id': `${T}PlanemoEngine` },
        engineVersion: '>=0.70',
      },
    ],
  });
}

/** The same kind of crate written with full IRIs only, single values and plain-string references. */
function fullIriCrate(): Record<string, unknown> {
  return {
    '@context': 'https://w3id.org/ro/crate/1.1/context',
    '@graph': [
      { '@id': 'ro-crate-metadata.json', '@type': 'CreativeWork', 'http://schema.org/about': './' },
      {
        '@id': './',
        '@type': ['http://schema.org/Dataset'],
        'https://schema.org/name': [{ '@value': 'full-iri-crate' }],
        'http://schema.org/mainEntity': 'main.cwl',
      },
      { '@id': 'main.cwl', '@type': 'ComputationalWorkflow', 'http://schema.org/name': 'main' },
      {
        '@id': '#gh',
        '@type': `${T}TestSuite`,
        'http://schema.org/name': 'on github',
        [`${T}instance`]: { '@id': '#gh_1' },
        [`${T}definition`]: 'tests/main-test.yml',
      },
      {
        '@id': '#gh_1',
        '@type': [`${T}TestInstance`],
        [`${T}runsOn`]: `${T}GithubService`,
        'http://schema.org/url': { '@id': 'https://api.github.com' },
        [`${T}resource`]: 'repos/crs4/life_monitor/actions/workflows/main.yml',
      },
      {
        '@id': 'tests/main-test.yml',
        '@type': `${T}TestDefinition`,
        'http://purl.org/dc/terms/conformsTo': [
          { '@id': 'https://example.org/some-profile' },
          { '@id': 'https://w3id.org/ro/terms/test#CwltestEngine' },
        ],
        [`${T}engineVersion`]: 2.1,
      },
    ],
  };
}

function expectInvalid(run: () => unknown, detail: RegExp): void {
  let caught: unknown;
  try {
    run();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(DomainError);
  if (caught instanceof DomainError) {
    expect(caught.kind).toBe('invalid_input');
    expect(caught.message).toMatch(detail);
  }
}

function withGraph(
  crate: Record<string, unknown>,
  edit: (graph: Record<string, unknown>[]) => void,
): unknown {
  edit(crate['@graph'] as Record<string, unknown>[]);
  return crate;
}

function entity(crate: Record<string, unknown>, id: string): Record<string, unknown> {
  const found = (crate['@graph'] as Record<string, unknown>[]).find((node) => node['@id'] === id);
  if (!found) {
    throw new Error(`no ${id} in the test crate`);
  }
  return found;
}

describe('parseRoCrate', () => {
  it('reads a crate written with the compact terms of the test context', () => {
    const crate = compactCrate();
    expect(parseRoCrate(crate, WITH_SERVICES)).toEqual({
      name: 'sort-and-change-case-crate',
      mainWorkflow: {
        id: 'sort-and-change-case.ga',
        name: 'sort-and-change-case',
        types: ['File', 'SoftwareSourceCode', 'ComputationalWorkflow'],
        programmingLanguage: { id: '#galaxy', name: 'Galaxy' },
      },
      suites: [
        {
          id: '#test1',
          name: 'test1',
          definition: {
            path: 'test/test1/sort-and-change-case-test.yml',
            engineType: 'planemo',
            engineVersion: '>=0.70',
          },
          instances: [
            {
              id: '#test1_1',
              name: 'test1_1',
              serviceType: 'travis',
              serviceUrl: 'https://api.travis-ci.org',
              resource: 'repo/1002447',
            },
            {
              id: '#test1_2',
              serviceType: 'jenkins',
              serviceUrl: 'https://ci.example.org/jenkins',
              resource: 'job/tests/job/main',
            },
          ],
        },
      ],
      metadata: crate,
    });
  });

  it('reads a crate written with full IRIs, single values and plain-string references', () => {
    expect(parseRoCrate(fullIriCrate(), WITH_SERVICES)).toMatchObject({
      name: 'full-iri-crate',
      mainWorkflow: { id: 'main.cwl', name: 'main', types: ['ComputationalWorkflow'] },
      suites: [
        {
          id: '#gh',
          name: 'on github',
          definition: { path: 'tests/main-test.yml', engineType: 'cwltest', engineVersion: '2.1' },
          instances: [
            {
              id: '#gh_1',
              serviceType: 'github',
              serviceUrl: 'https://api.github.com',
              resource: 'repos/crs4/life_monitor/actions/workflows/main.yml',
            },
          ],
        },
      ],
    });
  });

  it('understands compact IRIs through a prefix of the inline context', () => {
    const crate = {
      '@context': ['https://w3id.org/ro/crate/1.1/context', { t: T, s: 'https://schema.org/' }],
      '@graph': [
        DESCRIPTOR,
        { '@id': './', '@type': 'Dataset', 's:name': 'prefixed', mentions: { '@id': '#s' } },
        {
          '@id': '#s',
          '@type': 't:TestSuite',
          't:instance': { '@id': '#i' },
          't:definition': { '@id': 'd.yml' },
        },
        {
          '@id': '#i',
          '@type': 't:TestInstance',
          't:runsOn': { '@id': 't:JenkinsService' },
          url: 'http://jenkins.example.org',
          't:resource': 'job/x',
        },
        {
          '@id': 'd.yml',
          '@type': 't:TestDefinition',
          conformsTo: { '@id': 't:PlanemoEngine' },
          't:engineVersion': '0.74',
        },
      ],
    };
    expect(parseRoCrate(crate, WITH_SERVICES)).toMatchObject({
      name: 'prefixed',
      suites: [
        {
          id: '#s',
          definition: { path: 'd.yml', engineType: 'planemo', engineVersion: '0.74' },
          instances: [
            { id: '#i', serviceType: 'jenkins', serviceUrl: 'http://jenkins.example.org', resource: 'job/x' },
          ],
        },
      ],
    });
  });

  it('uses the built-in term table when the crate has no inline context at all', () => {
    const crate = compactCrate();
    crate['@context'] = 'https://w3id.org/ro/crate/1.1/context';
    const parsed = parseRoCrate(crate, WITH_SERVICES);
    expect(parsed.suites.map((suite) => suite.id)).toEqual(['#test1']);
    expect(parsed.suites[0].instances.map((instance) => instance.serviceType)).toEqual(['travis', 'jenkins']);
    expect(parsed.suites[0].definition?.engineType).toBe('planemo');
  });

  it('accepts the legacy ro-crate-metadata.jsonld descriptor', () => {
    const crate = withGraph(compactCrate(), (graph) => {
      graph[0] = { ...DESCRIPTOR, '@id': 'ro-crate-metadata.jsonld' };
    });
    expect(parseRoCrate(crate, WITH_SERVICES).name).toBe('sort-and-change-case-crate');
  });

  it('finds a crate whose descriptor has an absolute identifier', () => {
    const crate = withGraph(compactCrate(), (graph) => {
      graph[0] = { ...DESCRIPTOR, '@id': 'https://example.org/crates/x/ro-crate-metadata.json' };
    });
    expect(parseRoCrate(crate, WITH_SERVICES).name).toBe('sort-and-change-case-crate');
  });

  it('finds TestSuites that the root dataset does not mention, after the mentioned ones', () => {
    const crate = withGraph(compactCrate(), (graph) => {
      graph.push({ '@id': '#unmentioned', '@type': 'TestSuite', name: 'scan me' });
      graph.splice(1, 0, { '@id': '#early', '@type': 'TestSuite' });
    });
    expect(parseRoCrate(crate, WITH_SERVICES).suites.map((suite) => suite.id)).toEqual([
      '#test1',
      '#early',
      '#unmentioned',
    ]);
  });

  it('reads test instances and definitions embedded in the suite', () => {
    const crate = withGraph(compactCrate(), (graph) => {
      const suite = graph.find((node) => node['@id'] === '#test1');
      if (suite) {
        suite.instance = {
          '@id': '#inline',
          '@type': 'TestInstance',
          runsOn: 'GithubService',
          url: 'https://api.github.com',
          resource: 'repos/a/b/actions/workflows/c.yml',
        };
        suite.definition = { '@id': 'inline.yml', conformsTo: 'PlanemoEngine' };
      }
    });
    const [suite] = parseRoCrate(crate, WITH_SERVICES).suites;
    expect(suite.instances).toEqual([
      {
        id: '#inline',
        serviceType: 'github',
        serviceUrl: 'https://api.github.com',
        resource: 'repos/a/b/actions/workflows/c.yml',
      },
    ]);
    expect(suite.definition).toEqual({ path: 'inline.yml', engineType: 'planemo', engineVersion: null });
  });

  it('returns a suite without instances and a suite without a definition', () => {
    const crate = withGraph(compactCrate(), (graph) => {
      graph.push({ '@id': '#bare', '@type': 'TestSuite', name: 'bare' });
    });
    const suites = parseRoCrate(crate, WITH_SERVICES).suites;
    expect(suites[1]).toEqual({ id: '#bare', name: 'bare', definition: null, instances: [] });
  });

  it('keeps a definition path whose entity is missing, with null engine members', () => {
    const crate = withGraph(compactCrate(), (graph) => {
      graph.pop();
    });
    expect(parseRoCrate(crate, WITH_SERVICES).suites[0].definition).toEqual({
      path: 'test/test1/sort-and-change-case-test.yml',
      engineType: null,
      engineVersion: null,
    });
  });

  it('ignores a test definition that no suite uses', () => {
    const crate = withGraph(compactCrate(), (graph) => {
      graph.splice(
        graph.findIndex((node) => node['@id'] === '#test1'),
        2,
      );
      const root = graph.find((node) => node['@id'] === './');
      if (root) {
        delete root.mentions;
      }
    });
    expect(parseRoCrate(crate, WITH_SERVICES).suites).toEqual([]);
  });

  it('leaves out the name and the main workflow when the crate has neither', () => {
    const crate = compactCrate();
    const root = entity(crate, './');
    delete root.name;
    delete root.mainEntity;
    // Nor a ComputationalWorkflow to stand in for the missing mainEntity.
    entity(crate, 'sort-and-change-case.ga')['@type'] = ['File', 'SoftwareSourceCode'];
    const parsed = parseRoCrate(crate, WITH_SERVICES);
    expect(parsed.name).toBeUndefined();
    expect(parsed.mainWorkflow).toBeUndefined();
  });

  it('reads a main workflow that the graph does not describe as just its id', () => {
    const crate = compactCrate();
    entity(crate, './').mainEntity = 'elsewhere.cwl';
    expect(parseRoCrate(crate, WITH_SERVICES).mainWorkflow).toEqual({ id: 'elsewhere.cwl', types: [] });
  });

  it('accepts a top-level array of entities', () => {
    const graph = compactCrate()['@graph'];
    expect(parseRoCrate(graph, WITH_SERVICES).suites).toHaveLength(1);
  });

  it('refuses metadata that is not a JSON object', () => {
    expectInvalid(() => parseRoCrate('ro-crate', WITH_SERVICES), /not a JSON object/);
    expectInvalid(() => parseRoCrate(null, WITH_SERVICES), /not a JSON object/);
  });

  it('refuses a crate without a metadata descriptor', () => {
    const crate = withGraph(compactCrate(), (graph) => {
      graph.shift();
    });
    expectInvalid(() => parseRoCrate(crate, WITH_SERVICES), /^the crate metadata has no root dataset/);
  });

  it('refuses a descriptor that is about nothing in the crate', () => {
    const crate = compactCrate();
    entity(crate, 'ro-crate-metadata.json').about = { '@id': './missing/' };
    expectInvalid(() => parseRoCrate(crate, WITH_SERVICES), /^the crate metadata has no root dataset/);
  });

  it('reports an unknown service type', () => {
    const crate = compactCrate();
    entity(crate, '#test1_1').runsOn = { '@id': `${T}GitlabService` };
    expectInvalid(
      () => parseRoCrate(crate, WITH_SERVICES),
      /^a test instance uses an unknown service type: https:\/\/w3id.org\/ro\/terms\/test#GitlabService/,
    );
  });

  it('checks service types against the list the caller passes', () => {
    const crate = compactCrate();
    expectInvalid(
      () => parseRoCrate(crate, { services: CRATE_SERVICES.filter((service) => service.type === 'github') }),
      /unknown service type.*TravisService/,
    );
    entity(crate, '#test1_1').runsOn = { '@id': `${T}GitlabService` };
    entity(crate, '#test1_2').runsOn = { '@id': `${T}GitlabService` };
    expect(
      parseRoCrate(crate, { services: [{ type: 'gitlab', crateTerm: 'GitlabService' }] }).suites[0]
        .instances[0].serviceType,
    ).toBe('gitlab');
  });

  it("takes an instance whose runsOn names no known service to the service that claims its url's host", () => {
    const crate = compactCrate();
    entity(crate, '#test1_1').runsOn = { '@id': `${T}GitLabCIService` };
    entity(crate, '#test1_1').url = { '@id': 'https://gitlab.example.org' };
    const claiming = [
      ...CRATE_SERVICES,
      {
        type: 'gitlab',
        crateTerm: 'GitlabService',
        claimsUrl: (url: string) => url.startsWith('https://gitlab.'),
      },
    ];
    const [instance] = parseRoCrate(crate, { services: claiming }).suites[0].instances;
    expect(instance).toMatchObject({ serviceType: 'gitlab', serviceUrl: 'https://gitlab.example.org' });
    entity(crate, '#test1_1').url = { '@id': 'https://ci.example.org' };
    expectInvalid(
      () => parseRoCrate(crate, { services: claiming }),
      /^a test instance uses an unknown service type: https:\/\/w3id.org\/ro\/terms\/test#GitLabCIService/,
    );
  });

  it('refuses an instance url that is not http(s)', () => {
    const crate = compactCrate();
    entity(crate, '#test1_1').url = 'file:///etc/passwd';
    expectInvalid(() => parseRoCrate(crate, WITH_SERVICES), /#test1_1 has a url that is not http\(s\)/);
    entity(crate, '#test1_1').url = 'not a url';
    expectInvalid(() => parseRoCrate(crate, WITH_SERVICES), /#test1_1 has a url that is not http\(s\)/);
  });

  it('refuses an instance without runsOn or url', () => {
    for (const key of ['runsOn', 'url']) {
      const crate = compactCrate();
      delete entity(crate, '#test1_2')[key];
      expectInvalid(
        () => parseRoCrate(crate, WITH_SERVICES),
        new RegExp(`#test1_2 (does not say which service|has no ${key})`),
      );
    }
  });

  it('keeps an instance without a resource (or with one that is not text), saying why it is never checked', () => {
    for (const resource of [undefined, { '@id': 'https://spdx.org/licenses/Apache-2.0.html' }]) {
      const crate = compactCrate();
      entity(crate, '#test1_2').resource = resource;
      const [, instance] = parseRoCrate(crate, WITH_SERVICES).suites[0].instances;
      expect(instance).toMatchObject({ id: '#test1_2', serviceType: 'jenkins', resource: '' });
      expect(instance.uncheckedReason).toMatch(/no resource/);
    }
    expect(
      parseRoCrate(compactCrate(), WITH_SERVICES).suites[0].instances[1].uncheckedReason,
    ).toBeUndefined();
  });

  it('leaves out what a suite names as an instance but the crate does not describe as one', () => {
    const crate = compactCrate();
    entity(crate, '#test1').instance = [
      { '@id': '#ghost' },
      { '@id': 'sort-and-change-case.ga' },
      { '@id': '#test1_1' },
    ];
    expect(parseRoCrate(crate, WITH_SERVICES).suites[0].instances.map((instance) => instance.id)).toEqual([
      '#test1_1',
    ]);
  });

  it('takes an untyped instance that says where it runs', () => {
    const crate = compactCrate();
    delete entity(crate, '#test1_1')['@type'];
    expect(parseRoCrate(crate, WITH_SERVICES).suites[0].instances.map((instance) => instance.id)).toEqual([
      '#test1_1',
      '#test1_2',
    ]);
  });

  it('refuses a TestSuite without an @id', () => {
    const crate = compactCrate();
    entity(crate, './').mentions = { '@type': 'TestSuite', name: 'anonymous' };
    expectInvalid(() => parseRoCrate(crate, WITH_SERVICES), /TestSuite of the crate has no @id/);
  });
});

describe('engineTypeOf and serviceTypeOf', () => {
  it('take the last IRI segment, lower-cased, without the Engine or Service suffix', () => {
    expect(engineTypeOf(`${T}PlanemoEngine`)).toBe('planemo');
    expect(engineTypeOf('https://example.org/engines/Snakemake')).toBe('snakemake');
    expect(serviceTypeOf(`${T}GithubService`)).toBe('github');
    expect(serviceTypeOf('TravisService')).toBe('travis');
    expect(serviceTypeOf(`${T}Service`)).toBeNull();
  });
});

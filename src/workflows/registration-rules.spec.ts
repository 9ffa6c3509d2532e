import { DomainError } from '../common/errors/domain-error.js';
import type { ParsedCrate, ParsedSuite } from '../crates/ro-crate-parser.js';
import {
  checkInstanceAddresses,
  checkServiceAddress,
  checkStorable,
  lookupHost,
  markUncheckable,
  registrationName,
  type HostLookup,
} from './registration-rules.js';

function crate(parts: Partial<ParsedCrate> = {}): ParsedCrate {
  return { suites: [], metadata: {}, ...parts };
}

function suiteWith(url: string, id = '#ci'): ParsedSuite {
  return {
    id: '#suite',
    definition: null,
    instances: [{ id, serviceType: 'jenkins', serviceUrl: url, resource: 'job/build' }],
  };
}

async function expectInvalid(
  work: Promise<unknown> | (() => unknown),
  detail: string | RegExp,
): Promise<void> {
  const run = typeof work === 'function' ? Promise.resolve().then(work) : work;
  await expect(run).rejects.toBeInstanceOf(DomainError);
  await expect(run).rejects.toMatchObject({ kind: 'invalid_input' });
  await expect(run).rejects.toThrow(detail);
}

describe('registrationName', () => {
  const main = { id: 'wf.ga', types: ['File'], name: 'main' };

  it("takes the body's name first, then the root dataset's, then the main workflow's", () => {
    expect(registrationName('body', crate({ name: 'root', mainWorkflow: main }))).toBe('body');
    expect(registrationName(undefined, crate({ name: 'root', mainWorkflow: main }))).toBe('root');
    expect(registrationName(undefined, crate({ mainWorkflow: main }))).toBe('main');
  });

  it('refuses a workflow without any name, saying where one can come from', async () => {
    await expectInvalid(
      () => registrationName(undefined, crate({ mainWorkflow: { id: 'wf.ga', types: [] } })),
      'the workflow has no name: give one in the body (name), or name the root dataset or the main workflow of the crate',
    );
  });

  it("refuses a crate's name longer than the registry keeps", async () => {
    await expectInvalid(
      () => registrationName(undefined, crate({ name: 'n'.repeat(513) })),
      "the crate's name is longer than 512 characters: give a shorter one in the body (name)",
    );
    expect(registrationName(undefined, crate({ name: 'n'.repeat(512) }))).toHaveLength(512);
  });
});

describe('checkStorable', () => {
  const instance = {
    id: '#i',
    serviceType: 'github',
    serviceUrl: 'https://api.github.com',
    resource: 'repos/o/r',
  };

  it('accepts values within the column sizes', () => {
    expect(() =>
      checkStorable([
        {
          id: '#s',
          name: 's'.repeat(512),
          definition: { path: 'p'.repeat(1024), engineType: 'planemo', engineVersion: 'v'.repeat(64) },
          instances: [{ ...instance, resource: 'r'.repeat(1024) }],
        },
      ]),
    ).not.toThrow();
  });

  it.each<[string, ParsedSuite, string]>([
    [
      'a suite @id',
      { id: `#${'s'.repeat(512)}`, definition: null, instances: [] },
      'has an @id longer than 512',
    ],
    [
      'an engine version',
      {
        id: '#s',
        definition: { path: 'p', engineType: 'planemo', engineVersion: 'v'.repeat(65) },
        instances: [],
      },
      "the test suite '#s' has a test engine version longer than 64 characters",
    ],
    [
      'a resource',
      { id: '#s', definition: null, instances: [{ ...instance, resource: 'r'.repeat(1025) }] },
      "the test instance '#i' has a resource longer than 1024 characters",
    ],
    [
      'a service url',
      {
        id: '#s',
        definition: null,
        instances: [{ ...instance, serviceUrl: `https://ci.org/${'u'.repeat(500)}` }],
      },
      "the test instance '#i' has a url longer than 512 characters",
    ],
  ])('refuses %s that is too long, naming it', async (_what, suite, detail) => {
    await expectInvalid(() => checkStorable([suite]), detail);
  });
});

describe('checkInstanceAddresses', () => {
  const nothing: HostLookup = () => Promise.resolve([]);

  it.each([
    ['http://127.0.0.1:8080', '127.0.0.1'],
    ['http://10.0.0.7', '10.0.0.7'],
    ['http://192.168.1.1/jenkins', '192.168.1.1'],
    ['http://169.254.169.254', '169.254.169.254'],
    ['http://[::1]:8080', '::1'],
    ['http://[fd00::5]', 'fd00::5'],
    ['http://[::ffff:10.0.0.1]', '::ffff:a00:1'],
  ])('refuses an instance url on %s', async (url, address) => {
    await expectInvalid(
      checkInstanceAddresses([suiteWith(url)], nothing),
      `the test instance '#ci' has a url on a private or reserved address (${address}), which this service does not call`,
    );
  });

  it('refuses a host name that resolves to a private address, naming the host but not the address', async () => {
    const lookup: HostLookup = (host) =>
      Promise.resolve(host === 'ci.internal' ? ['8.8.8.8', '10.1.1.1'] : []);
    await expectInvalid(
      checkInstanceAddresses([suiteWith('https://ci.internal/')], lookup),
      "the test instance '#ci' has a url on a private or reserved address (ci.internal), which this service does not call",
    );
  });

  it('resolves localhost for real', async () => {
    await expectInvalid(
      checkInstanceAddresses([suiteWith('http://localhost:8080')]),
      /^the test instance '#ci' has a url on a private or reserved address \(localhost\), which/,
    );
  });

  it('accepts public addresses and names that do not resolve now, looking each host up once', async () => {
    const asked: string[] = [];
    const lookup: HostLookup = (host) => {
      asked.push(host);
      return Promise.resolve(host === 'api.github.com' ? ['140.82.112.5'] : []);
    };
    await expect(
      checkInstanceAddresses(
        [
          suiteWith('https://api.github.com', '#a'),
          suiteWith('https://api.github.com/', '#b'),
          suiteWith('https://ci.invalid', '#c'),
          suiteWith('http://8.8.8.8', '#d'),
        ],
        lookup,
      ),
    ).resolves.toBeUndefined();
    expect(asked).toEqual(['api.github.com', 'ci.invalid']);
  });

  it('lets a configured service be (its type and url), and nothing beside it', async () => {
    const configured = (type: string, url: string): boolean =>
      type === 'jenkins' && url === 'http://10.0.0.7:8080';
    const asked: string[] = [];
    const lookup: HostLookup = (host) => {
      asked.push(host);
      return Promise.resolve(['10.0.0.8']);
    };
    await expect(
      checkInstanceAddresses([suiteWith('http://10.0.0.7:8080')], lookup, configured),
    ).resolves.toBeUndefined();
    // Another port of the same host, and the same url for another service type, are not it.
    await expectInvalid(
      checkInstanceAddresses([suiteWith('http://10.0.0.7:8081')], lookup, configured),
      "the test instance '#ci' has a url on a private or reserved address (10.0.0.7), which this service does not call",
    );
    const travis = suiteWith('http://10.0.0.7:8080');
    travis.instances[0].serviceType = 'travis';
    await expectInvalid(
      checkInstanceAddresses([travis], lookup, configured),
      /^the test instance '#ci' has a url on a private or reserved address \(10\.0\.0\.7\)/,
    );
    await expect(
      checkServiceAddress('jenkins', 'http://10.0.0.7:8080', lookup, configured),
    ).resolves.toBeUndefined();
    await expectInvalid(
      checkServiceAddress('travis', 'http://10.0.0.7:8080', lookup, configured),
      'service.url is on a private or reserved address (10.0.0.7), which this service does not call',
    );
    expect(asked).toEqual([]);
  });

  it('gives no address for a name that does not resolve', async () => {
    await expect(lookupHost('no-such-host.invalid')).resolves.toEqual([]);
  });
});

describe('markUncheckable', () => {
  const jenkins = {
    type: 'jenkins',
    crateTerm: 'JenkinsService',
    resourceProblem: (resource: string) =>
      resource.startsWith('job/') ? undefined : `'${resource}' is not a job`,
  };

  it("marks an instance whose resource its service cannot check, with the service's reason", () => {
    const suite = suiteWith('https://ci.example.org');
    suite.instances[0].resource = 'view/all';
    const [marked] = markUncheckable([suite], [jenkins]);
    expect(marked.instances[0]).toMatchObject({
      id: '#ci',
      resource: 'view/all',
      uncheckedReason: "its resource cannot be checked on jenkins: 'view/all' is not a job",
    });
    expect(suite.instances[0].uncheckedReason).toBeUndefined();
  });

  it('leaves what the service takes, anything for a service that does not say, and a reason given already', () => {
    const [checkable] = markUncheckable([suiteWith('https://ci.example.org')], [jenkins]);
    expect(checkable.instances[0].uncheckedReason).toBeUndefined();
    const suite = suiteWith('https://ci.example.org');
    suite.instances[0].resource = 'anything';
    const [unsaid] = markUncheckable([suite], [{ type: 'jenkins', crateTerm: 'JenkinsService' }]);
    expect(unsaid.instances[0].uncheckedReason).toBeUndefined();
    suite.instances[0] = { ...suite.instances[0], resource: '', uncheckedReason: 'no resource' };
    const [given] = markUncheckable([suite], [jenkins]);
    expect(given.instances[0].uncheckedReason).toBe('no resource');
  });
});

describe('checkServiceAddress', () => {
  it('refuses a URL on a private address, naming the field and the host only', async () => {
    const resolve: HostLookup = () => Promise.resolve(['10.0.0.7']);
    await expectInvalid(
      checkServiceAddress('jenkins', 'https://ci.internal.example/', resolve),
      'service.url is on a private or reserved address (ci.internal.example), which this service does not call',
    );
    await expect(
      checkServiceAddress('jenkins', 'https://ci.internal.example/', resolve),
    ).rejects.toMatchObject({
      fields: [{ field: 'service.url' }],
    });
  });

  it('accepts a public address and a name that does not resolve now', async () => {
    await expect(
      checkServiceAddress('jenkins', 'https://ci.example.org', () => Promise.resolve(['93.184.216.34'])),
    ).resolves.toBeUndefined();
    await expect(
      checkServiceAddress('jenkins', 'https://ci.invalid', () => Promise.resolve([])),
    ).resolves.toBeUndefined();
  });
});

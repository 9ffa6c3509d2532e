import { DomainError } from '../../common/errors/domain-error.js';
import { AppConfig } from '../../config/app-config.js';
import type { TestingServiceCredentials } from '../../config/testing-services-file.js';
import {
  findConfiguredService,
  normalizeServiceUrl,
  TestingServiceRegistry,
  type BuildCheckResult,
  type BuildDetailsResult,
  type BuildLogResult,
  type CancelResult,
  type ResourceTarget,
  type TestingService,
  type TriggerResult,
} from './testing-service.js';

class StubService implements TestingService {
  readonly settings = ['token'] as const;

  constructor(readonly type: string) {}

  get crateTerm(): string {
    return `${this.type[0].toUpperCase()}${this.type.slice(1)}Service`;
  }

  latestBuilds(): Promise<BuildCheckResult> {
    return Promise.resolve({ kind: 'builds', builds: [] });
  }

  resourcePage(target: ResourceTarget): string | undefined {
    return `${target.serviceUrl}/${target.resource}`;
  }

  triggerBuild(): Promise<TriggerResult> {
    return Promise.resolve({ kind: 'unavailable', reason: 'a stub' });
  }

  buildLog(): Promise<BuildLogResult> {
    return Promise.resolve({ kind: 'unavailable', reason: 'a stub' });
  }

  buildDetails(): Promise<BuildDetailsResult> {
    return Promise.resolve({ kind: 'unavailable', reason: 'a stub' });
  }

  cancelBuild(): Promise<CancelResult> {
    return Promise.resolve({ kind: 'unavailable', reason: 'a stub' });
  }
}

/** A registry of these clients, built as the app builds it (with no TESTING_SERVICES_FILE). */
function registryOf(services: TestingService[]): TestingServiceRegistry {
  const config = Object.assign(new AppConfig(), { monitoring: { services: [] } });
  const registry = new TestingServiceRegistry(() => services, config);
  registry.onModuleInit();
  return registry;
}

describe('TestingServiceRegistry', () => {
  const github = new StubService('github');
  const travis = new StubService('travis');
  const jenkins = new StubService('jenkins');
  const registry = registryOf([github, travis, jenkins]);

  it("asks the type's class for a resource's web page, and links only http(s) pages", () => {
    expect(registry.resourcePage('travis', 'https://ci.example.org', 'repo/1')).toBe(
      'https://ci.example.org/repo/1',
    );
    expect(registry.resourcePage('jenkins', 'javascript:alert(1)', 'job/x')).toBeUndefined();
    expect(registry.resourcePage('unknown', 'https://ci.example.org', 'job/x')).toBeUndefined();
  });

  it('returns the client of each type', () => {
    expect(registry.for('github')).toBe(github);
    expect(registry.for('travis')).toBe(travis);
    expect(registry.for('jenkins')).toBe(jenkins);
    expect(registry.types()).toEqual(['github', 'travis', 'jenkins']);
    expect(registry.has('travis')).toBe(true);
  });

  it('throws invalid_input for a type no client serves', () => {
    expect(registry.has('circleci')).toBe(false);
    expect(() => registry.for('circleci')).toThrow(DomainError);
    expect(() => registry.for('circleci')).toThrow("Unknown testing service type 'circleci'");
    expect(() => registryOf([github]).for('jenkins')).toThrow(
      expect.objectContaining({ kind: 'invalid_input' }),
    );
  });

  it('refuses two clients for one type', () => {
    expect(() => registryOf([github, new StubService('github')])).toThrow(/Two testing service/);
  });
});

describe('findConfiguredService', () => {
  const services: TestingServiceCredentials[] = [
    { type: 'github', url: 'https://api.github.com', token: 'a' },
    { type: 'jenkins', url: 'https://CI.example.org/', username: 'bot', password: 'p' },
    { type: 'github', url: 'https://github.example.org/api/v3', token: 'b' },
  ];

  it('matches by type and URL, ignoring trailing slashes and host case', () => {
    expect(findConfiguredService(services, 'github', 'https://api.github.com/')?.token).toBe('a');
    expect(findConfiguredService(services, 'jenkins', 'https://ci.example.org')?.username).toBe('bot');
    expect(findConfiguredService(services, 'github', 'https://github.example.org/api/v3/')?.token).toBe('b');
  });

  it('does not match another type, host, port or path', () => {
    expect(findConfiguredService(services, 'travis', 'https://api.github.com')).toBeUndefined();
    expect(findConfiguredService(services, 'github', 'https://api.github.com.evil.org')).toBeUndefined();
    expect(findConfiguredService(services, 'github', 'https://api.github.com:8443')).toBeUndefined();
    expect(findConfiguredService(services, 'github', 'https://github.example.org/api')).toBeUndefined();
  });

  it('normalises URLs to origin and path', () => {
    expect(normalizeServiceUrl('HTTPS://Api.GitHub.com:443//')).toBe('https://api.github.com');
    expect(normalizeServiceUrl('http://ci.example.org:8080/jenkins/?x=1')).toBe(
      'http://ci.example.org:8080/jenkins',
    );
  });
});

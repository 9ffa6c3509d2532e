import { TravisService } from '../../src/test-monitoring/testing-services/travis.service.js';
import { TravisFake } from '../fakes/travis-fake.js';
import { subjectWithFake, testingServiceContract } from './testing-service.contract.js';

const STATES = { passed: 'passed', failed: 'failed', running: 'started' } as const;

testingServiceContract('Travis CI (loopback fake)', () => {
  const fake = new TravisFake();
  return subjectWithFake(fake, (config) => ({
    service: new TravisService(config),
    seed: (builds) => {
      fake.setRepo(
        'octo/repo',
        builds.map((kind, index) => ({ id: index + 1, state: STATES[kind] })),
      );
      return TravisFake.resource('octo/repo');
    },
    unknownResource: TravisFake.resource('octo/none'),
    malformedResource: 'builds/1',
    credentials: () => ({ type: 'travis', url: fake.url, token: 'travis-contract' }),
    seedLog: (log) => {
      fake.setRepo('octo/logs', [{ id: 500, state: 'failed' }]);
      fake.setJobLog(TravisFake.jobIdOf(500), log);
      return { resource: TravisFake.resource('octo/logs'), buildId: '500' };
    },
  }));
});

import { JenkinsService } from '../../src/test-monitoring/testing-services/jenkins.service.js';
import { JenkinsFake } from '../fakes/jenkins-fake.js';
import { subjectWithFake, testingServiceContract } from './testing-service.contract.js';

const BUILDS = {
  passed: { result: 'SUCCESS' },
  failed: { result: 'FAILURE' },
  running: { building: true },
} as const;

testingServiceContract('Jenkins (loopback fake, CSRF protection on)', () => {
  const fake = new JenkinsFake();
  fake.csrf = true;
  return subjectWithFake(fake, (config) => ({
    service: new JenkinsService(config),
    seed: (builds) => {
      fake.setJob(
        'build',
        builds.map((kind, index) => ({ number: index + 1, ...BUILDS[kind] })),
      );
      return JenkinsFake.resource('build');
    },
    unknownResource: JenkinsFake.resource('none'),
    malformedResource: 'build/1',
    credentials: () => ({ type: 'jenkins', url: fake.url, username: 'bot', password: 'jenkins-contract' }),
    seedLog: (log) => {
      fake.setJob('logs', [{ number: 12, result: 'FAILURE' }]);
      fake.setConsoleText('logs', 12, log);
      return { resource: JenkinsFake.resource('logs'), buildId: '12' };
    },
  }));
});

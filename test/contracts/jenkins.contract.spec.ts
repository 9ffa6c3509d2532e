import { JenkinsService } from '../../src/test-monitoring/testing-services/jenkins.service.js';
import { JenkinsFake } from '../fakes/jenkins-fake.js';
import { subjectWithFake, testingServiceContract } from './testing-service.contract.js';

const BUILDS = {
  passed: { result: 'SUCCESS' },
  failed: { result: 'FAILURE' },
  running: { building: true },
} as const;

testingServiceContract('Jenkins (loopback fake)', () => {
  const fake = new JenkinsFake();
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
  }));
});

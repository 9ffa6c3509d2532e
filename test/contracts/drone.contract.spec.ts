import { DroneService } from '../extensions/drone-ci.js';
import { DroneFake } from '../fakes/drone-fake.js';
import { subjectWithFake, testingServiceContract } from './testing-service.contract.js';

const STATUSES = { passed: 'success', failed: 'failure', running: 'running' } as const;

// The test-only service of docs/extending.md passes the contract every client passes.
testingServiceContract('Drone CI (test-only extension, loopback fake)', () => {
  const fake = new DroneFake();
  return subjectWithFake(fake, (config) => ({
    service: new DroneService(config),
    seed: (builds) => {
      fake.setRepo(
        'octo/repo',
        builds.map((kind, index) => ({ number: index + 1, status: STATUSES[kind] })),
      );
      return DroneFake.resource('octo/repo');
    },
    unknownResource: DroneFake.resource('octo/none'),
    malformedResource: 'repo/1',
    credentials: () => ({ type: 'drone', url: fake.url, token: 'drone-contract' }),
  }));
});

import { GithubActionsService } from '../../src/test-monitoring/testing-services/github-actions.service.js';
import { GithubFake } from '../fakes/github-fake.js';
import { subjectWithFake, testingServiceContract } from './testing-service.contract.js';

const RUNS = {
  passed: { status: 'completed', conclusion: 'success' },
  failed: { status: 'completed', conclusion: 'failure' },
  running: { status: 'in_progress', conclusion: null },
} as const;

testingServiceContract('GitHub Actions (loopback fake)', () => {
  const fake = new GithubFake();
  return subjectWithFake(fake, (config) => ({
    service: new GithubActionsService(config),
    seed: (builds) => {
      fake.setRuns(
        'octo',
        'repo',
        'ci.yml',
        builds.map((kind, index) => ({ id: index + 1, ...RUNS[kind] })),
      );
      return 'repos/octo/repo/actions/workflows/ci.yml';
    },
    unknownResource: 'repos/octo/none/actions/workflows/ci.yml',
    malformedResource: 'repos/octo/repo',
  }));
});

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
      fake.addRepository('octo', 'repo');
      fake.push('octo', 'repo', { branch: 'main', files: { 'README.md': 'a repository' } });
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
    credentials: () => ({ type: 'github', url: fake.url, token: 'ghp_contract' }),
    seedLog: (log) => {
      fake.setRuns('octo', 'logs', 'ci.yml', [{ id: 77, conclusion: 'failure' }]);
      fake.setRunLogs('octo', 'logs', 77, [
        { name: 'build', text: log, steps: [{ name: 'Set up job', text: 'set up' }] },
      ]);
      return { resource: 'repos/octo/logs/actions/workflows/ci.yml', buildId: '77_1' };
    },
  }));
});

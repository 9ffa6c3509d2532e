import type { FakeGithubRun } from '../fakes/github-fake.js';

/** The head of a GitHub job log that names its runner (API.md 16), as a hosted runner writes it. */
function runnerHeader(version: string): string {
  return [
    '2024-01-01T00:00:01.0000000Z ##[group]Operating System',
    '2024-01-01T00:00:01.0000000Z Ubuntu',
    '2024-01-01T00:00:01.0000000Z 22.04.3',
    '2024-01-01T00:00:01.0000000Z LTS',
    '2024-01-01T00:00:01.0000000Z ##[endgroup]',
    '2024-01-01T00:00:01.0000000Z ##[group]Runner Image',
    '2024-01-01T00:00:01.0000000Z Image: ubuntu-22.04',
    `2024-01-01T00:00:01.0000000Z Version: ${version}`,
    '2024-01-01T00:00:01.0000000Z ##[endgroup]',
  ].join('\n');
}

/**
 * Two runs of a matrix for an instance selecting `test (*)`: run 1 passes on commit aaaa111 (5 min),
 * run 2 fails on bbbb222 (9 min) with a newer runner image, in its job `failing` at its step `step`.
 */
export function passedThenFailed(failing: string, step: string): FakeGithubRun[] {
  const run = (id: number, conclusion: string, headSha: string, version: string, at: string) => {
    const start = Date.parse(at);
    const time = (minutes: number): string => new Date(start + minutes * 60_000).toISOString();
    return {
      id,
      conclusion,
      headSha,
      startedAt: at,
      jobs: [
        {
          name: 'test (ubuntu-latest, 3.11)',
          conclusion: 'success',
          startedAt: time(0),
          completedAt: time(3),
          log: runnerHeader(version),
        },
        {
          name: failing,
          conclusion,
          startedAt: time(1),
          completedAt: time(conclusion === 'success' ? 5 : 9),
          steps: [
            { name: 'Set up job', conclusion: 'success' },
            { name: step, conclusion },
          ],
        },
      ],
    };
  };
  return [
    run(1, 'success', 'aaaa111', '20240101.1.0', '2024-01-01T10:00:00Z'),
    run(2, 'failure', 'bbbb222', '20240108.2.0', '2024-01-02T10:00:00Z'),
  ];
}

import { Clock } from '../common/clock.js';
import type { Rechecks } from '../test-monitoring/index.js';
import { ManagedRunWatcher } from './managed-run.watcher.js';
import type { ChangedRun, ManagedRunsRepository } from './managed-runs.repository.js';

describe('ManagedRunWatcher', () => {
  const second = new Date('2026-11-29T12:00:00Z');
  let changes: ChangedRun[];
  let rechecked: number[][];
  let watcher: ManagedRunWatcher;

  beforeEach(() => {
    changes = [];
    rechecked = [];
    const runs = { changedSince: () => Promise.resolve(changes) } as unknown as ManagedRunsRepository;
    const rechecks = {
      now: (ids: number[]) => {
        rechecked.push(ids);
        return Promise.resolve();
      },
    } as unknown as Rechecks;
    // Not bootstrapped: no timer runs, the test ticks.
    watcher = new ManagedRunWatcher(runs, rechecks, new Clock());
  });

  it('rechecks an instance once per change, and again when its run changes status within the same second', async () => {
    changes = [{ id: 7, instanceId: 3, status: 'running', changedAt: second }];
    await watcher.tick(second);
    await watcher.tick(second);
    // MariaDB's DATETIME keeps whole seconds: the run ended in the second it started.
    changes = [{ id: 7, instanceId: 3, status: 'failed', changedAt: second }];
    await watcher.tick(second);
    expect(rechecked).toEqual([[3], [], [3]]);
  });
});

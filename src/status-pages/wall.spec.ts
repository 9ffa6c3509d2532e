import { WorkflowEntity } from '../workflows/entities/registry.entities.js';
import type { AggregateTestStatus } from '../workflows/index.js';
import { selectWall, type WallSource } from './wall.js';

/**
 * The viewer's workflows in list order, each in a state, answering as the stored statuses'
 * indexes do; `asked` records each state asked for and its limit.
 */
class ListedSource implements WallSource {
  readonly asked: [AggregateTestStatus, number][] = [];

  constructor(private readonly states: readonly AggregateTestStatus[]) {}

  latestIn(state: AggregateTestStatus, limit: number): Promise<WorkflowEntity[]> {
    this.asked.push([state, limit]);
    const found = this.states.flatMap((each, id) =>
      each === state ? [Object.assign(new WorkflowEntity(), { id, uuid: `wf-${id}` })] : [],
    );
    return Promise.resolve(found.slice(0, limit));
  }

  counts(states: readonly AggregateTestStatus[]): Promise<Map<AggregateTestStatus, number>> {
    const counts = new Map<AggregateTestStatus, number>();
    for (const state of this.states.filter((each) => states.includes(each))) {
      counts.set(state, (counts.get(state) ?? 0) + 1);
    }
    return Promise.resolve(counts);
  }
}

const ids = (workflows: readonly WorkflowEntity[]): number[] => workflows.map((workflow) => workflow.id);

describe('the wall’s workflows', () => {
  it('puts failing first, then some passing, without builds, passing, in list order within each', async () => {
    const source = new ListedSource([
      'all_passing',
      'all_failing',
      'not_available',
      'some_passing',
      'all_failing',
      'not_available',
      'all_passing',
    ]);
    const wall = await selectWall(source, 10);
    expect(ids(wall.workflows)).toEqual([1, 4, 3, 2, 5, 0, 6]);
    expect(wall.total).toBe(7);
    expect(Object.fromEntries(wall.counts)).toEqual({
      all_passing: 2,
      all_failing: 2,
      not_available: 2,
      some_passing: 1,
    });
  });

  it('shows the most urgent `size` however late in the list, and counts every workflow', async () => {
    // 1,000 passing, then 30 failing, 5 without builds: the failing ones come last in the list.
    const source = new ListedSource([
      ...Array.from({ length: 1000 }, (): AggregateTestStatus => 'all_passing'),
      ...Array.from({ length: 30 }, (): AggregateTestStatus => 'all_failing'),
      ...Array.from({ length: 5 }, (): AggregateTestStatus => 'not_available'),
    ]);
    const wall = await selectWall(source, 100);
    expect(ids(wall.workflows)).toEqual([
      ...Array.from({ length: 30 }, (_, i) => 1000 + i),
      ...Array.from({ length: 5 }, (_, i) => 1030 + i),
      ...Array.from({ length: 65 }, (_, i) => i),
    ]);
    expect(wall.total).toBe(1035);
    expect(Object.fromEntries(wall.counts)).toEqual({ all_passing: 1000, all_failing: 30, not_available: 5 });
  });

  it('asks each state only for the room the more urgent ones left, and none once the wall is full', async () => {
    const source = new ListedSource([
      ...Array.from({ length: 4 }, (): AggregateTestStatus => 'some_passing'),
      ...Array.from({ length: 3 }, (): AggregateTestStatus => 'all_failing'),
      ...Array.from({ length: 9 }, (): AggregateTestStatus => 'not_available'),
      'all_passing',
    ]);
    const wall = await selectWall(source, 10);
    expect(source.asked).toEqual([
      ['all_failing', 10],
      ['some_passing', 7],
      ['not_available', 3],
    ]);
    expect(ids(wall.workflows)).toEqual([4, 5, 6, 0, 1, 2, 3, 7, 8, 9]);
    expect(wall.total).toBe(17);
  });
});

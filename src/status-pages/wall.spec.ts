import { WorkflowEntity } from '../workflows/entities/registry.entities.js';
import type { AggregateTestStatus, WorkflowSummaryView } from '../workflows/index.js';
import { selectWall } from './wall.js';

/** A workflow in `state` (none: never summarised), named by its place in the list. */
function view(id: number, state: AggregateTestStatus | undefined): WorkflowSummaryView {
  const workflow = Object.assign(new WorkflowEntity(), { id, uuid: `wf-${id}` });
  return state ? { workflow, status: { aggregate: state, latestBuild: null } } : { workflow };
}

async function* batchesOf(
  views: WorkflowSummaryView[],
  size: number,
  read: { batches: number },
): AsyncGenerator<WorkflowSummaryView[]> {
  for (let i = 0; i < views.length; i += size) {
    read.batches += 1;
    // One batch at a time, as the database hands them over.
    yield await Promise.resolve(views.slice(i, i + size));
  }
}

const ids = (views: readonly WorkflowSummaryView[]): number[] => views.map((shown) => shown.workflow.id);

describe('the wall’s workflows', () => {
  it('puts failing first, then some passing, without builds, passing, in list order within each', async () => {
    const states: (AggregateTestStatus | undefined)[] = [
      'all_passing',
      'all_failing',
      undefined,
      'some_passing',
      'all_failing',
      'not_available',
      'all_passing',
    ];
    const read = { batches: 0 };
    const wall = await selectWall(
      batchesOf(
        states.map((state, index) => view(index, state)),
        3,
        read,
      ),
      10,
    );
    expect(ids(wall.tiles)).toEqual([1, 4, 3, 2, 5, 0, 6]);
    expect(wall.total).toBe(7);
    expect(Object.fromEntries(wall.counts)).toEqual({
      all_passing: 2,
      all_failing: 2,
      not_available: 2,
      some_passing: 1,
    });
    expect(read.batches).toBe(3);
  });

  it('shows the most urgent `size` however late in the list, and counts every workflow', async () => {
    // 1,000 passing, then 30 failing, 5 without builds: the failing ones come last in the list.
    const views = [
      ...Array.from({ length: 1000 }, (_, i) => view(i, 'all_passing')),
      ...Array.from({ length: 30 }, (_, i) => view(1000 + i, 'all_failing')),
      ...Array.from({ length: 5 }, (_, i) => view(2000 + i, 'not_available')),
    ];
    const wall = await selectWall(batchesOf(views, 100, { batches: 0 }), 100);
    expect(ids(wall.tiles)).toEqual([
      ...Array.from({ length: 30 }, (_, i) => 1000 + i),
      ...Array.from({ length: 5 }, (_, i) => 2000 + i),
      ...Array.from({ length: 65 }, (_, i) => i),
    ]);
    expect(wall.total).toBe(1035);
    expect(Object.fromEntries(wall.counts)).toEqual({ all_passing: 1000, all_failing: 30, not_available: 5 });
  });
});

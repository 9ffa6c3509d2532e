import type { AggregateTestStatus, WorkflowEntity } from '../workflows/index.js';

/** The wall's order: what needs someone's attention first. */
export const URGENCY: readonly AggregateTestStatus[] = [
  'all_failing',
  'some_passing',
  'not_available',
  'all_passing',
];

/**
 * Where a wall reads the workflows its viewer may see: the first `limit` in a state, in the
 * list's order, and how many there are in each state (states without any absent).
 */
export interface WallSource {
  latestIn(state: AggregateTestStatus, limit: number): Promise<WorkflowEntity[]>;
  counts(states: readonly AggregateTestStatus[]): Promise<Map<AggregateTestStatus, number>>;
}

/** What a wall shows: its most urgent workflows, and how many of each state there are in all. */
export interface WallSelection {
  workflows: WorkflowEntity[];
  total: number;
  counts: Map<AggregateTestStatus, number>;
}

/**
 * The `size` most urgent workflows (failing first, then some passing, without builds, passing;
 * in the list's order within each), with every workflow counted by state. Asks each state only
 * for what the more urgent ones left room for, and none once the wall is full: a wall over
 * 100,000 workflows reads `size` of them, not all.
 */
export async function selectWall(source: WallSource, size: number): Promise<WallSelection> {
  const workflows: WorkflowEntity[] = [];
  for (const state of URGENCY) {
    if (workflows.length >= size) {
      break;
    }
    workflows.push(...(await source.latestIn(state, size - workflows.length)));
  }
  const counts = await source.counts(URGENCY);
  let total = 0;
  for (const count of counts.values()) {
    total += count;
  }
  return { workflows, total, counts };
}

import type { AggregateTestStatus, WorkflowSummaryView } from '../workflows/index.js';

/** The wall's order: what needs someone's attention first. */
const URGENCY: readonly AggregateTestStatus[] = [
  'all_failing',
  'some_passing',
  'not_available',
  'all_passing',
];

/** What a wall shows: its most urgent workflows, and how many of each state there are in all. */
export interface WallSelection {
  tiles: WorkflowSummaryView[];
  total: number;
  counts: Map<AggregateTestStatus, number>;
}

/**
 * The `size` most urgent of the workflows the batches hold (failing first, then some passing,
 * without builds, passing; in the batches' order within each), with every workflow counted by
 * state. Holds at most `size` workflows of each state, however many the viewer may see: a wall
 * over 100,000 workflows keeps 4 × `size` of them, not all.
 */
export async function selectWall(
  batches: AsyncIterable<readonly WorkflowSummaryView[]>,
  size: number,
): Promise<WallSelection> {
  const kept = new Map<AggregateTestStatus, WorkflowSummaryView[]>(URGENCY.map((state) => [state, []]));
  const counts = new Map<AggregateTestStatus, number>();
  let total = 0;
  for await (const batch of batches) {
    for (const view of batch) {
      const state = view.status?.aggregate ?? 'not_available';
      total += 1;
      counts.set(state, (counts.get(state) ?? 0) + 1);
      const bucket = kept.get(state) ?? [];
      if (bucket.length < size) {
        bucket.push(view);
      }
    }
  }
  return { tiles: URGENCY.flatMap((state) => kept.get(state) ?? []).slice(0, size), total, counts };
}

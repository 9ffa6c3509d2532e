// A heap snapshot of a running service (started with `--heapsnapshot-signal=SIGUSR2` and
// `--diagnostic-dir`), summarised as DevTools' "Summary" view does: the V8 heap's bytes by
// constructor (or by kind for strings, code, arrays and the like), largest first.
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { sleep } from './service.mjs';

/** The node arguments that let `heapSnapshot` take a snapshot of the process into `dir`. */
export const heapSnapshotArgs = (dir) => ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${dir}`];

/**
 * Signals the service to write a snapshot into `dir`, waits until it is written (V8 writes it on
 * the main thread, so the service answers again only after it), and returns its summary. The
 * snapshot is deleted after reading: at 100 MiB of heap it is several hundred MiB of JSON.
 */
export async function heapSnapshot(service, dir, top = 12) {
  const before = new Set(readdirSync(dir));
  service.child.kill('SIGUSR2');
  let file;
  for (let i = 0; i < 600 && !file; i++) {
    await sleep(100);
    file = readdirSync(dir).find((name) => name.endsWith('.heapsnapshot') && !before.has(name));
  }
  if (!file) {
    throw new Error('the service wrote no heap snapshot');
  }
  // The service answers again once the snapshot is written. A kept-alive socket may have been
  // closed meanwhile (the write outlasts the server's keep-alive), so a reset is asked again.
  for (let attempt = 0; ; attempt++) {
    try {
      await (await fetch(`${service.url}/health/live`)).arrayBuffer();
      break;
    } catch (error) {
      if (attempt >= 3) {
        throw error;
      }
    }
  }
  // A last look that the file stopped growing, in case the answer raced the write's end.
  let size = -1;
  while (statSync(join(dir, file)).size !== size) {
    size = statSync(join(dir, file)).size;
    await sleep(200);
  }
  try {
    return summarise(JSON.parse(readFileSync(join(dir, file), 'utf8')), top);
  } finally {
    rmSync(join(dir, file), { force: true });
  }
}

/** The `top` largest groups of a parsed snapshot by shallow size, and the heap's total. */
export function summarise(snapshot, top) {
  const {
    node_fields: fields,
    node_types: [types],
  } = snapshot.snapshot.meta;
  const width = fields.length;
  const at = {
    type: fields.indexOf('type'),
    name: fields.indexOf('name'),
    size: fields.indexOf('self_size'),
  };
  const groups = new Map();
  let total = 0;
  for (let i = 0; i < snapshot.nodes.length; i += width) {
    const type = types[snapshot.nodes[i + at.type]];
    const size = snapshot.nodes[i + at.size];
    total += size;
    // Objects and closures group by constructor; everything else by its kind, as DevTools shows it.
    const key =
      type === 'object' || type === 'native'
        ? snapshot.strings[snapshot.nodes[i + at.name]]
        : type === 'closure'
          ? '(closure)'
          : `(${type})`;
    const group = groups.get(key) ?? { count: 0, bytes: 0 };
    group.count += 1;
    group.bytes += size;
    groups.set(key, group);
  }
  const largest = [...groups.entries()]
    .sort((a, b) => b[1].bytes - a[1].bytes)
    .slice(0, top)
    .map(([name, { count, bytes }]) => ({ name, count, bytes }));
  return { total, largest };
}

/** The summary as lines: the total, then one line per group. */
export function formatHeapSummary({ total, largest }) {
  const mib = (bytes) => (bytes / 1024 / 1024).toFixed(1);
  return [
    `heap snapshot: ${mib(total)} MiB in all; largest by constructor (shallow size):`,
    ...largest.map(
      ({ name, count, bytes }) =>
        `  ${mib(bytes).padStart(7)} MiB  ${String(count).padStart(8)} x ${name.slice(0, 80)}`,
    ),
  ];
}

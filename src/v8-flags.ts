import { setFlagsFromString } from 'node:v8';

/**
 * V8 allocates the objects of an allocation site straight into the old generation once most of
 * them survived a young-generation collection ("allocation-site pretenuring"), and keeps doing so.
 * Under load that happens to per-request objects: a database row lives while the rest of its
 * result set arrives, a batch of a streamed list while its statuses are read. From then on every
 * such object is old-generation garbage until a full collection, which V8 runs only once the old
 * generation has grown several times over: streaming a 100,000-workflow list grew the RSS by
 * 100-170 MiB in about half the runs, on SQLite and on MariaDB, by under 15 MiB (and took a
 * third less time) with this off (`npm run bench -- scale`). What the service keeps for long is
 * made once, at start-up, where pretenuring saves next to nothing. main.ts imports this module
 * first, before V8 has compiled the code whose allocations it would track.
 */
setFlagsFromString('--no-allocation-site-pretenuring');

/**
 * After a full collection V8 lets the old generation grow by a factor it picks from how fast it
 * collects (up to 4x) before it collects again. Under the scale benchmark's load at 10,000
 * workflows the heap then held 200-270 MiB, most of it garbage, for some 60 MiB alive, and the
 * RSS followed (320-409 MiB). Growing by 30 % at most keeps that garbage to a fraction of what
 * lives, at the price of more frequent full collections (mostly concurrent marking): RSS after the
 * speed benchmark's load 196 MiB instead of 224 (`npm run bench -- speed`).
 */
setFlagsFromString('--heap-growing-percent=30');

/*
 * The young generation is bounded on the command line instead (`node --max-semi-space-size=8`, in
 * `npm start` and the image's CMD): V8 sizes it once, when the process starts, so a flag set here
 * comes too late. Left alone it grows each of its two halves to 16 MiB as soon as start-up has
 * allocated enough, and keeps them: RSS idle 166 MiB and 218 after the speed benchmark's load,
 * against 148 and 178 with 8 MiB halves, at the same requests per second and CPU per request
 * (`npm run bench -- speed`, both side by side). What a request allocates dies young either way;
 * 8 MiB still holds several hundred requests' garbage between scavenges.
 */

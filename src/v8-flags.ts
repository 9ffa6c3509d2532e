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

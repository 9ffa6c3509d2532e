/**
 * libuv runs file system, DNS and zlib work on a pool of threads it starts with the first such
 * task, sized by UV_THREADPOOL_SIZE as it is then (default 4). A registration makes some thirty
 * small file operations (download, reading the zip, the move into the store); with 20 at once on a
 * busy disk the four threads queued them for most of a second each, and the store's moves waited
 * behind downloads (`npm run bench -- register-concurrent`). main.ts imports this module first,
 * so that the size is set before anything can start the pool; a value in the environment wins.
 */
export const DEFAULT_THREAD_POOL_SIZE = 16;

process.env.UV_THREADPOOL_SIZE ??= String(DEFAULT_THREAD_POOL_SIZE);

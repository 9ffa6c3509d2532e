import { createRequire } from 'node:module';
import { ConfigError } from '../config/config-error.js';

/**
 * The Node-API version better-sqlite3 13 is built against (its binding.gyp defines NAPI_VERSION=10).
 * Node 20 offers 9, and there 13's addon crashes on load (a segmentation fault, not an error).
 */
const NAPI_OF_BETTER_SQLITE3_13 = 10;

/**
 * The better-sqlite3 module TypeORM's SQLite driver runs on (its `driver` option), chosen by what
 * the running Node can load. better-sqlite3 13 (Node-API, prebuilt for Linux, macOS and Windows in
 * its own package) is the driver on Node 22.14 and later. better-sqlite3 12, the optional
 * dependency `better-sqlite3-node20` compiled at install, stands in where Node-API 10 is missing
 * (Node 20, Node 22 before 22.14). 12 is never used on Node 24: its statements' destructor aborts
 * the process there when the garbage collector frees one (WiseLibs/better-sqlite3#1515).
 * Dropping Node 20 drops the optional dependency and this choice.
 */
export function sqliteDriver(
  napiVersion = Number(process.versions.napi),
  load: (name: string) => unknown = createRequire(import.meta.url),
): unknown {
  const name = sqliteDriverPackage(napiVersion);
  try {
    const driver = load(name) as new (file: string) => { close(): void };
    // better-sqlite3 12 looks for its compiled addon only when a database is first opened.
    new driver(':memory:').close();
    return driver;
  } catch (error) {
    const missing =
      (error as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND' ||
      /Could not locate the bindings file/.test((error as Error).message);
    if (name !== 'better-sqlite3-node20' || !missing) {
      throw error;
    }
    // npm goes on without an optional dependency whose build failed (no C++ tool chain, say).
    throw new ConfigError(
      'DATABASE_URL',
      `SQLite on Node ${process.version} needs the optional dependency ${name}, which is not installed ` +
        'or not built (npm builds it from source: install python3, make and g++ and run ' +
        `npm run build:sqlite-node20), or run on Node 22.14 or later, or use a mysql:// or mariadb:// DATABASE_URL`,
    );
  }
}

/** The package name sqliteDriver loads on a Node offering `napiVersion`. */
export function sqliteDriverPackage(napiVersion: number): 'better-sqlite3' | 'better-sqlite3-node20' {
  return napiVersion >= NAPI_OF_BETTER_SQLITE3_13 ? 'better-sqlite3' : 'better-sqlite3-node20';
}

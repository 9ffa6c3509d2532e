#!/usr/bin/env node
// The project's `postinstall`: compiles `better-sqlite3-node20` (better-sqlite3 12, the SQLite
// driver where Node-API 10 is missing, i.e. Node 20) on such a Node only. `allowScripts` denies
// better-sqlite3's own install scripts, which npm would run on every Node: the stand-in's build
// took 105 of a Node 24 install's 139 s for an addon Node 24 never loads, and better-sqlite3 13
// comes with its addon built. src/database/sqlite-driver.ts chooses by the same Node-API rule.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** Node-API of better-sqlite3 13 (its binding.gyp's NAPI_VERSION); below it the stand-in is the driver. */
export const NAPI_OF_BETTER_SQLITE3_13 = 10;
export const STAND_IN = 'better-sqlite3-node20';

/** Whether a Node offering `napiVersion` runs SQLite on the stand-in, and so needs it compiled. */
export function needsStandIn(napiVersion) {
  return napiVersion < NAPI_OF_BETTER_SQLITE3_13;
}

/** The stand-in loads and opens a database on this Node: built, and built for it. */
function standInWorks(folder) {
  const check = spawnSync(
    process.execPath,
    ['-e', `new (require(${JSON.stringify(folder)}))(':memory:').close()`],
    { stdio: 'ignore' },
  );
  return check.status === 0;
}

/** npm's own node-gyp: npm names it to lifecycle scripts; else beside the npm that runs us. */
function nodeGyp() {
  const named = process.env.npm_config_node_gyp;
  if (named && existsSync(named)) {
    return named;
  }
  const npmCli = process.env.npm_execpath;
  const besideNpm = npmCli ? resolve(dirname(npmCli), '../node_modules/node-gyp/bin/node-gyp.js') : '';
  return existsSync(besideNpm) ? besideNpm : undefined;
}

/**
 * What the install did for the stand-in: `not-needed` (this Node's driver is better-sqlite3 13),
 * `not-installed` (optional dependencies omitted: start-up then says what to do), `working`
 * (built already), `built`, `build-failed` or `no-node-gyp`.
 */
export function buildStandIn(root = process.cwd(), napiVersion = Number(process.versions.napi)) {
  const folder = join(root, 'node_modules', STAND_IN);
  if (!needsStandIn(napiVersion)) {
    process.stdout.write(
      `${STAND_IN}: not needed with Node-API ${napiVersion} (Node ${process.version}: better-sqlite3 13, built in its package, is the driver)\n`,
    );
    return 'not-needed';
  }
  if (!existsSync(join(folder, 'package.json'))) {
    process.stdout.write(
      `${STAND_IN}: not installed (optional dependencies omitted); SQLite needs it on Node ${process.version}\n`,
    );
    return 'not-installed';
  }
  if (standInWorks(folder)) {
    return 'working';
  }
  const gyp = nodeGyp();
  if (!gyp) {
    process.stderr.write(
      `${STAND_IN}: npm's node-gyp not found; run this through npm (npm run build:sqlite-node20)\n`,
    );
    return 'no-node-gyp';
  }
  process.stdout.write(`${STAND_IN}: compiling better-sqlite3 12 for Node ${process.version} (about 75 s)\n`);
  const build = spawnSync(process.execPath, [gyp, 'rebuild', '--release'], { cwd: folder, stdio: 'inherit' });
  if (build.status === 0) {
    return 'built';
  }
  process.stderr.write(
    `${STAND_IN}: the build failed (install python3, make and g++, then npm run build:sqlite-node20); ` +
      'SQLite needs it on this Node, MariaDB/MySQL does not\n',
  );
  return 'build-failed';
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const outcome = buildStandIn(resolve(dirname(fileURLToPath(import.meta.url)), '..'));
  // As `postinstall`, a failed build of this optional dependency does not fail the install (SQLite on
  // this Node says at start-up what is missing; MariaDB/MySQL needs none of it); run by hand, it fails.
  const failed = outcome === 'build-failed' || outcome === 'no-node-gyp';
  process.exitCode = failed && process.env.npm_lifecycle_event !== 'postinstall' ? 1 : 0;
}

import { readFileSync } from 'node:fs';
import semver from 'semver';

interface LockEntry {
  dev?: boolean;
  engines?: Record<string, string> | string[];
}

/**
 * Loaded by nothing this service runs: @nestjs/common imports it lazily, for its file-upload
 * validators only, which no route here uses. It is the one dependency whose floor (Node 22) is
 * above Node 20's line, which the service still supports (see the README's Node section).
 */
const NEVER_LOADED = new Set(['file-type']);

/**
 * Packages of which the service loads one, chosen by the running Node (src/database/sqlite-driver.ts):
 * better-sqlite3 13 needs Node 22, its optional stand-in 12 covers Node 20. Together they must cover
 * every supported Node; each alone need not.
 */
const ALTERNATIVES = [['better-sqlite3', 'better-sqlite3-node20']];

/** Every production package of the lock with the Node versions it declares it runs on. */
function productionEngines(): { name: string; node: string }[] {
  const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as {
    packages: Record<string, LockEntry>;
  };
  return Object.entries(lock.packages).flatMap(([path, entry]) => {
    const node =
      !entry.dev && entry.engines && !Array.isArray(entry.engines) ? entry.engines.node : undefined;
    return path === '' || node === undefined ? [] : [{ name: path.replace(/^.*node_modules\//, ''), node }];
  });
}

describe('the Node versions the service supports (package.json engines)', () => {
  const engines = (JSON.parse(readFileSync('package.json', 'utf8')) as { engines: { node: string } }).engines
    .node;

  it('are all versions every production dependency supports', () => {
    const dependencies = productionEngines();
    expect(dependencies.length).toBeGreaterThan(100);
    const alternative = new Set(ALTERNATIVES.flat());
    const narrower = dependencies.filter(
      ({ name, node }) =>
        !NEVER_LOADED.has(name) &&
        !alternative.has(name) &&
        !semver.subset(engines, node, { includePrerelease: false }),
    );
    expect(narrower).toEqual([]);
    for (const names of ALTERNATIVES) {
      const ranges = names.map((name) => dependencies.find((dependency) => dependency.name === name)?.node);
      expect({ names, ranges: ranges.map((range) => range !== undefined) }).toEqual({
        names,
        ranges: names.map(() => true),
      });
      expect({ names, cover: semver.subset(engines, ranges.join(' || ')) }).toEqual({ names, cover: true });
    }
  });

  it('are Node 24 LTS, the Docker image and CI stage, and 22; and 20, which this project is still built on', () => {
    for (const version of ['24.11.0', '24.21.0', '22.13.0', '20.19.0']) {
      expect({ version, supported: semver.satisfies(version, engines) }).toEqual({
        version,
        supported: true,
      });
    }
    // The releases some dependencies refuse: @nestjs/swagger and typeorm below 20.19, typeorm on 24 before 24.11.
    for (const version of ['20.12.0', '20.18.0', '22.12.0', '24.10.0']) {
      expect({ version, supported: semver.satisfies(version, engines) }).toEqual({
        version,
        supported: false,
      });
    }
  });
});

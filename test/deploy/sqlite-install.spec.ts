import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildStandIn, needsStandIn, STAND_IN } from '../../scripts/build-sqlite-node20.mjs';
import { sqliteDriverPackage } from '../../src/database/sqlite-driver.js';

/** What a Node offering each Node-API version installs and loads: 9 is Node 20, 10 Node 22.14 and 24. */
const NAPI_VERSIONS = [8, 9, 10, 11];

describe('installing the SQLite driver (scripts/build-sqlite-node20.mjs)', () => {
  const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as {
    scripts: Record<string, string>;
    allowScripts: Record<string, boolean>;
  };

  it('compiles the stand-in exactly on the Nodes whose driver it is', () => {
    for (const napi of NAPI_VERSIONS) {
      expect([napi, needsStandIn(napi)]).toEqual([napi, sqliteDriverPackage(napi) === STAND_IN]);
    }
  });

  it("leaves better-sqlite3's own install scripts to npm's deny list and runs the script after install", () => {
    // Both better-sqlite3 13 and its alias better-sqlite3-node20 are `better-sqlite3` to npm.
    expect(pkg.allowScripts['better-sqlite3']).toBe(false);
    expect(pkg.scripts.postinstall).toBe('node scripts/build-sqlite-node20.mjs');
    expect(pkg.scripts['build:sqlite-node20']).toBe(pkg.scripts.postinstall);
  });

  it('compiles nothing on a Node with Node-API 10, even where the stand-in is installed unbuilt', () => {
    const root = mkdtempSync(join(tmpdir(), 'sqlite-install-'));
    try {
      mkdirSync(join(root, 'node_modules', STAND_IN), { recursive: true });
      writeFileSync(join(root, 'node_modules', STAND_IN, 'package.json'), '{"name":"better-sqlite3"}');
      expect(buildStandIn(root, 10)).toBe('not-needed');
      expect(buildStandIn(root, 9)).not.toBe('not-needed');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('goes on without the stand-in where optional dependencies were omitted', () => {
    const root = mkdtempSync(join(tmpdir(), 'sqlite-install-'));
    try {
      expect(buildStandIn(root, 9)).toBe('not-installed');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

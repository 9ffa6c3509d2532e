import { createRequire } from 'node:module';
import { ConfigError } from '../config/config-error.js';
import { sqliteDriver, sqliteDriverPackage } from './sqlite-driver.js';

const require = createRequire(import.meta.url);

describe('the SQLite driver module', () => {
  it('is better-sqlite3 13 where Node offers Node-API 10, its optional 12 below', () => {
    expect(sqliteDriverPackage(9)).toBe('better-sqlite3-node20');
    expect(sqliteDriverPackage(10)).toBe('better-sqlite3');
    expect(sqliteDriverPackage(11)).toBe('better-sqlite3');
  });

  it('on the running Node is the chosen package, which opens a database', () => {
    const name = sqliteDriverPackage(Number(process.versions.napi));
    const { version } = require(`${name}/package.json`) as { version: string };
    // 12 only where 13 cannot load: on Node 24 (.ci/node24) the 13 it aborts without.
    expect(version.split('.')[0]).toBe(name === 'better-sqlite3' ? '13' : '12');
    expect(sqliteDriver()).toBe(require(name));
    const Database = sqliteDriver() as new (file: string) => {
      prepare(sql: string): { get(): unknown };
      close(): void;
    };
    const db = new Database(':memory:');
    expect(db.prepare('SELECT 1 + 1 AS two').get()).toEqual({ two: 2 });
    db.close();
  });

  it.each([
    ['not installed', { code: 'MODULE_NOT_FOUND', message: "Cannot find module 'better-sqlite3-node20'" }],
    // better-sqlite3 12 installed, its addon never compiled: `bindings` says so when a database opens.
    ['not built', { message: 'Could not locate the bindings file. Tried:\n → …/build/better_sqlite3.node' }],
  ])('%s, the Node 20 stand-in stops start-up with one line saying what to do', (_case, failure) => {
    const unusable = (): never => {
      throw Object.assign(new Error(failure.message), failure);
    };
    const unbuilt = class {
      constructor() {
        unusable();
      }
    };
    for (const load of [unusable, () => unbuilt]) {
      let error: unknown;
      try {
        sqliteDriver(9, load);
      } catch (thrown) {
        error = thrown;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toMatch(
        /^Invalid setting DATABASE_URL: SQLite on Node v[\d.]+ needs the optional dependency better-sqlite3-node20, which is not installed or not built .*python3, make and g\+\+.*npm run build:sqlite-node20.*Node 22\.14 or later.*mysql:\/\//,
      );
      expect((error as Error).message).not.toContain('\n');
    }
  });

  it('failing to load for another reason, or better-sqlite3 13 missing, is that error, not a hint to install', () => {
    const broken = new Error('invalid ELF header');
    expect(() =>
      sqliteDriver(9, () => {
        throw broken;
      }),
    ).toThrow(broken);
    const missing = Object.assign(new Error("Cannot find module 'better-sqlite3'"), {
      code: 'MODULE_NOT_FOUND',
    });
    expect(() =>
      sqliteDriver(10, () => {
        throw missing;
      }),
    ).toThrow(missing);
  });
});

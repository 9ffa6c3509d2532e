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

  it('missing (an optional dependency npm could not build) stops start-up with one line', () => {
    const notInstalled = (name: string): never => {
      throw Object.assign(new Error(`Cannot find module '${name}'`), { code: 'MODULE_NOT_FOUND' });
    };
    let error: unknown;
    try {
      sqliteDriver(9, notInstalled);
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(
      /^Invalid setting DATABASE_URL: SQLite on Node v[\d.]+ needs the optional dependency better-sqlite3-node20, .*python3, make and g\+\+.*Node 22\.14 or later.*mysql:\/\//,
    );
    expect((error as Error).message).not.toContain('\n');
  });

  it('failing to load for another reason is that error, not a hint to install', () => {
    const broken = new Error('invalid ELF header');
    expect(() =>
      sqliteDriver(10, () => {
        throw broken;
      }),
    ).toThrow(broken);
  });
});

import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, loadDotEnv } from './app-config.js';

describe('loadConfig', () => {
  let dataDir: string;

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'app-config-'));
  });

  afterEach(() => {
    rmSync(dataDir, { recursive: true, force: true });
  });

  function settings(extra: Record<string, string> = {}): Record<string, string> {
    return { NODE_ENV: 'test', DATA_DIR: dataDir, JWT_SECRET: 'x'.repeat(40), ...extra };
  }

  describe('TRUST_PROXY', () => {
    it.each([
      ['true', true],
      ['false', false],
      ['2', 2],
      ['loopback', 'loopback'],
      ['loopback, 10.0.0.0/8, fd00::/8, 192.168.1.7', 'loopback,10.0.0.0/8,fd00::/8,192.168.1.7'],
      ['linklocal,uniquelocal,::1', 'linklocal,uniquelocal,::1'],
    ])('accepts %p', (value, expected) => {
      expect(loadConfig(settings({ TRUST_PROXY: value })).trustProxy).toEqual(expected);
    });

    it.each(['foo', 'loopback,foo', '10.0.0.0/99', '300.1.1.1', 'loopback,'])(
      'refuses %p with an error naming TRUST_PROXY',
      (value) => {
        expect(() => loadConfig(settings({ TRUST_PROXY: value }))).toThrow(/^Invalid setting TRUST_PROXY: /);
      },
    );
  });

  describe('numeric settings', () => {
    it.each([
      ['PORT', 'abc', 'must be an integer between 0 and 65535'],
      ['PORT', '70000', 'must be an integer between 0 and 65535'],
      ['PORT', '0x10', 'must be an integer between 0 and 65535'],
      ['JWT_EXPIRES_IN', '1h', 'must be an integer between 60 and 2592000 (seconds, without a unit suffix)'],
      ['JWT_EXPIRES_IN', '59', 'must be an integer between 60 and 2592000 (seconds, without a unit suffix)'],
      [
        'MAX_CRATE_BYTES',
        '100MB',
        'must be an integer between 1 and 1099511627776 (bytes, without a unit suffix)',
      ],
      [
        'MAX_CRATE_BYTES',
        '1.5',
        'must be an integer between 1 and 1099511627776 (bytes, without a unit suffix)',
      ],
      [
        'MAX_CRATE_UNCOMPRESSED_BYTES',
        '1GiB',
        'must be an integer between 1 and 1099511627776 (bytes, without a unit suffix)',
      ],
      [
        'REFRESH_INTERVAL_SECONDS',
        '-1',
        'must be an integer between 0 and 604800 (seconds, without a unit suffix)',
      ],
      [
        'DOWNLOAD_TIMEOUT_SECONDS',
        '60s',
        'must be an integer between 1 and 3600 (seconds, without a unit suffix)',
      ],
      [
        'UPSTREAM_TIMEOUT_SECONDS',
        '0',
        'must be an integer between 1 and 600 (seconds, without a unit suffix)',
      ],
      ['AUTH_RATE_LIMIT', 'ten', 'must be an integer between 1 and 100000'],
      [
        'DATABASE_TIMEOUT_SECONDS',
        '10s',
        'must be an integer between 1 and 300 (seconds, without a unit suffix)',
      ],
      [
        'SHUTDOWN_TIMEOUT_SECONDS',
        '1e3',
        'must be an integer between 1 and 300 (seconds, without a unit suffix)',
      ],
    ])('%s=%p stops start-up with "%s"', (name, value, message) => {
      expect(() => loadConfig(settings({ [name]: value }))).toThrow(`Invalid setting ${name}: ${message}`);
    });

    it('reads integers, spaces around them allowed', () => {
      expect(loadConfig(settings({ PORT: ' 8080 ' })).port).toBe(8080);
      expect(loadConfig(settings({ PORT: '0' })).port).toBe(0);
      expect(loadConfig(settings({ JWT_EXPIRES_IN: '7200' })).auth.jwtExpiresInSeconds).toBe(7200);
    });
  });

  describe('JWT_SECRET', () => {
    it('outside production, generates a secret once in DATA_DIR/jwt-secret (mode 0600) and reuses it', () => {
      const env = { NODE_ENV: 'development', DATA_DIR: dataDir };
      const first = loadConfig(env).auth.jwtSecret;
      expect(first.length).toBeGreaterThanOrEqual(32);
      expect(statSync(join(dataDir, 'jwt-secret')).mode & 0o777).toBe(0o600);
      expect(loadConfig(env).auth.jwtSecret).toBe(first);
      expect(readdirSync(dataDir)).toEqual(['jwt-secret']);
    });

    it('refuses an empty secret file, naming DATA_DIR', () => {
      writeFileSync(join(dataDir, 'jwt-secret'), '');
      expect(() => loadConfig({ NODE_ENV: 'development', DATA_DIR: dataDir })).toThrow(
        /^Invalid setting DATA_DIR: .*empty/,
      );
    });

    it('in production, requires JWT_SECRET', () => {
      expect(() => loadConfig({ NODE_ENV: 'production', DATA_DIR: dataDir })).toThrow(
        /^Invalid setting JWT_SECRET: /,
      );
    });
  });

  describe('DATABASE_URL', () => {
    it('defaults to app.sqlite in DATA_DIR', () => {
      expect(loadConfig(settings()).database).toEqual({
        type: 'sqlite',
        path: join(dataDir, 'app.sqlite'),
      });
    });

    it('uses DATABASE_URL when set', () => {
      expect(loadConfig(settings({ DATABASE_URL: 'sqlite:/elsewhere/db.sqlite' })).database).toEqual({
        type: 'sqlite',
        path: '/elsewhere/db.sqlite',
      });
    });
  });

  describe('DATABASE_TIMEOUT_SECONDS', () => {
    it('defaults to 10 s and takes whole seconds from 1 to 300', () => {
      expect(loadConfig(settings()).databaseTimeoutMs).toBe(10_000);
      expect(loadConfig(settings({ DATABASE_TIMEOUT_SECONDS: '1' })).databaseTimeoutMs).toBe(1000);
    });

    it.each(['0', '301', '1.5', 'ten'])(
      'refuses %p with an error naming DATABASE_TIMEOUT_SECONDS',
      (value) => {
        expect(() => loadConfig(settings({ DATABASE_TIMEOUT_SECONDS: value }))).toThrow(
          /^Invalid setting DATABASE_TIMEOUT_SECONDS: /,
        );
      },
    );
  });
});

describe('loadDotEnv', () => {
  let dir: string;
  const variable = 'APP_CONFIG_SPEC_DOTENV';

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'dotenv-'));
    writeFileSync(join(dir, '.env.example'), `${variable}=from-example\n`);
  });

  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads nothing under NODE_ENV=test, not even .env', () => {
    writeFileSync(join(dir, '.env'), `${variable}=from-env\n`);
    expect(loadDotEnv({ NODE_ENV: 'test' }, dir)).toBeUndefined();
  });

  it('in development (NODE_ENV unset), reads .env.example when there is no .env', () => {
    expect(loadDotEnv({}, dir)).toBe(join(dir, '.env.example'));
  });

  it('in development, prefers .env', () => {
    writeFileSync(join(dir, '.env'), `${variable}=from-env\n`);
    expect(loadDotEnv({ NODE_ENV: 'development' }, dir)).toBe(join(dir, '.env'));
  });

  it('in production, reads only .env', () => {
    expect(loadDotEnv({ NODE_ENV: 'production' }, dir)).toBeUndefined();
  });
});

import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
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

describe('CLOUDS_FILE', () => {
  it("refuses a file without a cloud named 'default' (the paths without a cloud segment use it), naming CLOUDS_FILE", () => {
    const dir = mkdtempSync(join(tmpdir(), 'clouds-'));
    try {
      const path = join(dir, 'clouds.yaml');
      writeFileSync(path, 'clouds:\n  lab: {type: dummy}\n  ostack: {type: dummy}\n');
      expect(() =>
        loadConfig({ NODE_ENV: 'test', DATA_DIR: dir, JWT_SECRET: 'x'.repeat(40), CLOUDS_FILE: path }),
      ).toThrow(
        `Invalid setting CLOUDS_FILE: ${path} has no cloud named 'default' (the paths without a cloud segment use it): ` +
          "rename one of 'lab', 'ostack' to 'default', or add a cloud named 'default'",
      );
      writeFileSync(path, 'clouds:\n  lab: {type: dummy}\n  default: {type: dummy}\n');
      const clouds = loadConfig({
        NODE_ENV: 'test',
        DATA_DIR: dir,
        JWT_SECRET: 'x'.repeat(40),
        CLOUDS_FILE: path,
      }).orchestration.clouds;
      expect(clouds?.map((cloud) => cloud.name)).toEqual(['lab', 'default']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the placeholder secrets of the example files', () => {
  const SECRETS = ['JWT_SECRET', 'ADMIN_PASSWORD', 'METRICS_TOKEN', 'GITHUB_WEBHOOK_SECRET', 'DATABASE_URL'];
  const envFile = (path: string): Record<string, string> =>
    Object.fromEntries(
      readFileSync(path, 'utf8')
        .split('\n')
        .filter((line) => /^[A-Z_]+=/.test(line))
        .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
    );
  /** Every secret setting the example files fill, as the service would get it from each. */
  const examples = (): { file: string; setting: string; value: string }[] => {
    const compose = envFile('docker/env.example');
    const composeUrl = (
      parse(readFileSync('docker/compose.yaml', 'utf8')) as {
        services: { app: { environment: Record<string, string> } };
      }
    ).services.app.environment.DATABASE_URL.replace('${DB_PASSWORD}', compose.DB_PASSWORD);
    const k8s = (
      parse(readFileSync('docker/k8s-secret.example.yaml', 'utf8')) as { stringData: Record<string, string> }
    ).stringData;
    const files: [string, Record<string, string>][] = [
      ['.env.example', envFile('.env.example')],
      ['docker/env.example', { ...compose, DATABASE_URL: composeUrl }],
      ['docker/k8s-secret.example.yaml', k8s],
    ];
    return files.flatMap(([file, values]) =>
      SECRETS.filter((setting) => values[setting]).map((setting) => ({
        file,
        setting,
        value: values[setting],
      })),
    );
  };
  const production = (extra: Record<string, string>): Record<string, string> => ({
    NODE_ENV: 'production',
    // Never written to: JWT_SECRET is set.
    DATA_DIR: join(tmpdir(), 'app-config-unused'),
    JWT_SECRET: 'a-real-secret-of-at-least-32-characters!',
    ADMIN_USERNAME: 'admin',
    ADMIN_PASSWORD: 'a real admin password',
    ...extra,
  });

  it('are found in every example file', () => {
    expect(examples().map(({ file, setting }) => `${file} ${setting}`)).toEqual([
      '.env.example ADMIN_PASSWORD',
      'docker/env.example JWT_SECRET',
      'docker/env.example ADMIN_PASSWORD',
      'docker/env.example DATABASE_URL',
      'docker/k8s-secret.example.yaml JWT_SECRET',
      'docker/k8s-secret.example.yaml ADMIN_PASSWORD',
      'docker/k8s-secret.example.yaml METRICS_TOKEN',
      'docker/k8s-secret.example.yaml DATABASE_URL',
    ]);
  });

  it.each(examples())(
    'stop production with one line naming the setting: $setting of $file',
    ({ setting, value }) => {
      expect(() => loadConfig(production({ [setting]: value }))).toThrow(
        new RegExp(
          `^Invalid setting ${setting}: (is|holds) the placeholder (password )?'[^']+' of an example file`,
        ),
      );
    },
  );

  it('are accepted outside production (a fresh clone starts), and real secrets in production', () => {
    for (const { setting, value } of examples()) {
      expect(() =>
        loadConfig({ ...production({ [setting]: value }), NODE_ENV: 'development' }),
      ).not.toThrow();
    }
    expect(() =>
      loadConfig(
        production({
          DATABASE_URL: 'mysql://app:s3cr3t-from-a-vault@db:3306/app',
          METRICS_TOKEN: 'x'.repeat(20),
        }),
      ),
    ).not.toThrow();
  });
});

import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';

const DOCKER = 'docker';
const COMPOSE_FILE = join(DOCKER, 'compose.yaml');

function composePluginWorks(): boolean {
  return spawnSync('docker', ['compose', 'version'], { encoding: 'utf8' }).status === 0;
}

interface ComposeService {
  image?: string;
  build?: { context: string; dockerfile: string };
  deploy?: { replicas?: number };
  env_file?: { path: string; required: boolean }[];
  environment?: Record<string, string>;
  volumes?: string[];
  depends_on?: Record<string, unknown> | string[];
  healthcheck?: unknown;
}

describe('deployment files', () => {
  it('docker compose parses the compose file (with the Docker client where it has the compose plugin)', () => {
    if (composePluginWorks()) {
      const result = spawnSync('docker', ['compose', '-f', COMPOSE_FILE, 'config', '--quiet'], {
        encoding: 'utf8',
        env: { ...process.env, DB_PASSWORD: 'x' },
      });
      expect(result.stderr).toBe('');
      expect(result.status).toBe(0);
    }
    // Without the plugin (as on the machines this project is built on) the structure is checked here.
    const compose = parse(readFileSync(COMPOSE_FILE, 'utf8')) as {
      services: Record<string, ComposeService>;
      volumes: Record<string, unknown>;
    };
    expect(Object.keys(compose.services).sort()).toEqual(['app', 'db', 'proxy', 'runner']);
    const app = compose.services.app;
    expect(app.deploy?.replicas).toBe(2);
    expect(app.build).toEqual({ context: '..', dockerfile: 'docker/Dockerfile' });
    expect(existsSync(join(DOCKER, app.build?.dockerfile.replace(/^docker\//, '') ?? ''))).toBe(true);
    expect(app.environment?.DATABASE_URL).toMatch(/^mysql:\/\/app:\$\{DB_PASSWORD\}@db:3306\/app$/);
    expect(app.environment?.TRUST_PROXY).toBeDefined();
    expect(app.env_file).toEqual([{ path: '.env', required: false }]);
    expect(existsSync(join(DOCKER, 'env.example'))).toBe(true);
    // Every named volume used is declared, and the app copies share the archive volume.
    const named = Object.values(compose.services)
      .flatMap((service) => service.volumes ?? [])
      .map((volume) => volume.split(':')[0])
      .filter((source) => !source.startsWith('.') && !source.startsWith('/'));
    for (const volume of named) {
      expect(Object.keys(compose.volumes)).toContain(volume);
    }
    expect(app.volumes).toContain('crates:/data');
    // The runner of managed runs (API.md 17): the image's runner stage, on the same database and crates.
    const runner = compose.services.runner as ComposeService & { build?: { target?: string } };
    expect(runner.build).toEqual({ context: '..', dockerfile: 'docker/Dockerfile', target: 'runner' });
    expect(runner.environment?.DATABASE_URL).toBe(app.environment?.DATABASE_URL);
    expect(runner.volumes).toContain('crates:/data');
    for (const mounted of Object.values(compose.services).flatMap((service) => service.volumes ?? [])) {
      const source = mounted.split(':')[0];
      if (source.startsWith('./')) {
        expect(existsSync(join(DOCKER, source))).toBe(true);
      }
    }
    expect(compose.services.db.healthcheck).toBeDefined();
    const nginx = readFileSync(join(DOCKER, 'nginx.conf'), 'utf8');
    expect(nginx).toMatch(/server app:3000/);
    expect(nginx).toMatch(/proxy_set_header X-Forwarded-Host \$http_host;/);
    expect(nginx).toMatch(/location = \/metrics \{\s+return 404;/);
  });

  it('builds a non-root runtime image with a health check on /health/ready and DATA_DIR as a volume', () => {
    const dockerfile = readFileSync(join(DOCKER, 'Dockerfile'), 'utf8');
    // build, runner (managed runs: `--target runner`), and the runtime last, what a plain build makes.
    expect(dockerfile.match(/^FROM /gm)).toHaveLength(3);
    expect(dockerfile.match(/^FROM \S+ AS (\S+)$/gm)?.at(-1)).toMatch(/ AS runtime$/);
    expect(dockerfile).toMatch(/npm prune --omit=dev/);
    expect(dockerfile).toMatch(/^USER node$/m);
    expect(dockerfile).toMatch(/^HEALTHCHECK .*\n?.*\/health\/ready/m);
    expect(dockerfile).toMatch(/^VOLUME \["\/data"\]$/m);
    expect(dockerfile).toMatch(/^CMD \["node", (?:"--[^"]+", )*"dist\/src\/main.js"\]$/m);
  });

  it('starts the service with the same node options in `npm start`, the image, Kubernetes and the benchmarks', () => {
    // The young generation's bound (src/v8-flags.ts): V8 takes it only on the command line.
    const { scripts } = JSON.parse(readFileSync('package.json', 'utf8')) as {
      scripts: Record<string, string>;
    };
    const options = /^exec node ((?:--\S+ )*)dist\/src\/main\.js$/.exec(scripts.start)?.[1].trim().split(' ');
    expect(options).toContain('--max-semi-space-size=8');
    expect(scripts['start:prod']).toBe(scripts.start);
    const dockerfile = readFileSync(join(DOCKER, 'Dockerfile'), 'utf8');
    const cmd = /^CMD (\[.*"dist\/src\/main\.js"\])$/m.exec(dockerfile)?.[1];
    expect(JSON.parse(cmd ?? '[]')).toEqual(['node', ...(options ?? []), 'dist/src/main.js']);
    // Kubernetes and compose run the image's CMD as it is.
    const k8s = readFileSync(join(DOCKER, 'k8s', 'deployment.yaml'), 'utf8');
    expect(k8s).not.toMatch(/^\s+(?:command|args):/m);
    expect(readFileSync(COMPOSE_FILE, 'utf8')).not.toMatch(/^\s+command:/m);
    const bench = readFileSync('test/bench/service.mjs', 'utf8');
    const startArgs = /^export const START_ARGS = (\[.*\]);$/m.exec(bench)?.[1];
    expect(JSON.parse((startArgs ?? '[]').replace(/'/g, '"'))).toEqual(options);
  });

  it('builds and runs on Node 24 LTS, installing exactly the lock file, without the Node 20 stand-in', () => {
    const dockerfile = readFileSync(join(DOCKER, 'Dockerfile'), 'utf8');
    expect(dockerfile.match(/^FROM \S+/gm)).toEqual([
      'FROM node:24-bookworm-slim',
      'FROM node:24-bookworm-slim',
      'FROM node:24-bookworm-slim',
    ]);
    expect(dockerfile).toMatch(/^RUN npm ci --ignore-scripts /m);
    // better-sqlite3 12 aborts on Node 24 (src/database/sqlite-driver.ts): not in the image at all.
    expect(dockerfile).toMatch(/npm prune --omit=dev --omit=optional/);
    const { optionalDependencies } = JSON.parse(readFileSync('package.json', 'utf8')) as {
      optionalDependencies: Record<string, string>;
    };
    expect(optionalDependencies).toEqual({ 'better-sqlite3-node20': 'npm:better-sqlite3@12.11.1' });
    // Nothing left to compile in the image: no tool chain installed.
    expect(dockerfile).not.toMatch(/g\+\+|node-gyp|python3/);
  });

  it('sends the build only what the Dockerfile copies (.dockerignore): no data/, node_modules, .env or .git', () => {
    const dockerfile = readFileSync(join(DOCKER, 'Dockerfile'), 'utf8');
    // The sources of the COPY lines that read the build context (not another stage).
    const copied = [...dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((match) =>
      match[1].split(/\s+/),
    );
    const rules = readFileSync('.dockerignore', 'utf8')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('#'));
    expect(rules[0]).toBe('*');
    expect(
      rules
        .slice(1)
        .map((rule) => rule.replace(/^!/, ''))
        .sort(),
    ).toEqual([...copied].sort());
    expect(rules.slice(1).every((rule) => rule.startsWith('!'))).toBe(true);
    for (const kept of copied) {
      expect(['data', 'node_modules', '.env', '.git', 'dist', 'test-results'].includes(kept)).toBe(false);
    }
  });

  it('has Kubernetes manifests that parse, with 2 replicas, probes, a Service, a ConfigMap and a ReadWriteMany claim', () => {
    const documents = readdirSync(join(DOCKER, 'k8s'))
      .filter((file) => file.endsWith('.yaml'))
      .flatMap((file) => parseAllDocuments(readFileSync(join(DOCKER, 'k8s', file), 'utf8')))
      .map((document) => {
        expect(document.errors).toEqual([]);
        return document.toJS() as { kind: string; spec?: unknown };
      });
    const kinds = documents.map((document) => document.kind).sort();
    // The Secret is made out of band (its example lives beside, in docker/k8s-secret.example.yaml):
    // `kubectl apply -f docker/k8s/` applies no placeholder secret.
    expect(kinds).toEqual(['ConfigMap', 'Deployment', 'PersistentVolumeClaim', 'Service']);
    expect(readdirSync(join(DOCKER, 'k8s')).filter((file) => /example/.test(file))).toEqual([]);
    const readme = readFileSync(join(DOCKER, 'README.md'), 'utf8');
    for (const [, path] of readme.matchAll(/kubectl (?:apply|create) [^\n`]*?-f (\S+)/g)) {
      expect({ path, exists: existsSync(path) }).toEqual({ path, exists: true });
    }
    expect(readme).toMatch(/kubectl apply -f docker\/k8s\//);
    const deployment = documents.find((document) => document.kind === 'Deployment') as {
      spec: {
        replicas: number;
        template: { spec: { containers: { readinessProbe: unknown; livenessProbe: unknown }[] } };
      };
    };
    expect(deployment.spec.replicas).toBe(2);
    expect(deployment.spec.template.spec.containers[0].readinessProbe).toBeDefined();
    expect(deployment.spec.template.spec.containers[0].livenessProbe).toBeDefined();
    const claim = documents.find((document) => document.kind === 'PersistentVolumeClaim') as {
      spec: { accessModes: string[] };
    };
    expect(claim.spec.accessModes).toEqual(['ReadWriteMany']);
  });
});

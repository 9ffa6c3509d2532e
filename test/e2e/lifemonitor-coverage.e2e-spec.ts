import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { createTestApp, testDatabase, type TestApp } from '../support/create-test-app.js';

const METHODS = new Set(['get', 'put', 'post', 'delete', 'patch']);

interface Paths {
  paths: Record<string, Record<string, unknown>>;
}

/** `METHOD /path`, each path parameter as `{}`: LifeMonitor and this service name some of them apart. */
function pairsOf(document: Paths): string[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.keys(item)
      .filter((method) => METHODS.has(method))
      .map((method) => `${method.toUpperCase()} ${path.replace(/\{[^}]+\}/g, '{}')}`),
  );
}

// LifeMonitor 0.15.0's document (test/fixtures/lifemonitor/README.md says where it comes from).
const lifeMonitor = parse(
  readFileSync(new URL('../fixtures/lifemonitor/api.yaml', import.meta.url), 'utf8'),
) as Paths;

describe(`LifeMonitor 0.15.0's operations in this service's document (${testDatabase()})`, () => {
  let t: TestApp;
  let ours: Set<string>;

  beforeAll(async () => {
    t = await createTestApp();
    ours = new Set(pairsOf((await t.http.get('/docs-json').expect(200)).body as Paths));
  });

  afterAll(async () => {
    await t?.close();
  });

  it('are the 49 (path, method) pairs of api.yaml', () => {
    expect(new Set(pairsOf(lifeMonitor)).size).toBe(49);
  });

  it.each(pairsOf(lifeMonitor))('%s is an operation here', (pair) => {
    expect(ours.has(pair)).toBe(true);
  });
});

// Runs every benchmark: the plain `*.bench.mjs` scripts with node, then the
// `*.bench-spec.ts` files through jest's `bench` project. Each prints its own figures.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';

const dir = 'test/bench';
const only = process.argv[2];
let failed = false;
for (const file of readdirSync(dir)
  .filter((name) => name.endsWith('.bench.mjs'))
  .sort()) {
  if (only && !file.includes(only)) {
    continue;
  }
  process.stdout.write(`\n=== ${file}\n`);
  failed ||= spawnSync(process.execPath, [`${dir}/${file}`], { stdio: 'inherit' }).status !== 0;
}
const specs = readdirSync(dir).filter(
  (name) => name.endsWith('.bench-spec.ts') && (!only || name.includes(only)),
);
if (specs.length > 0) {
  process.stdout.write(`\n=== jest bench project: ${specs.join(', ')}\n`);
  const args = [
    '--experimental-vm-modules',
    'node_modules/jest/bin/jest.js',
    '--selectProjects',
    'bench',
    '--verbose',
  ];
  // The pattern goes before --selectProjects, which would take it for a second project's name.
  const jest = spawnSync(process.execPath, only ? [args[0], args[1], only, ...args.slice(2)] : args, {
    stdio: 'inherit',
    env: { ...process.env, NODE_NO_WARNINGS: '1' },
  });
  failed ||= jest.status !== 0;
}
process.exit(failed ? 1 : 0);

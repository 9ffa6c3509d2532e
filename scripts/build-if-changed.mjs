#!/usr/bin/env node
// `npm start` and `npm run cli` run this first: it compiles (`npm run build`'s tsc) only when the
// sources differ from those dist/ was last compiled from here, so a second start does not wait
// 10-14 s for a compilation that changes nothing. "Differ" is by content (a SHA-256 over every
// file the build reads), so a checkout that touches files without changing them costs nothing and
// no change is ever missed.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';

/** What the build reads: the compiler's settings, the sources, the migrations and the dependencies' versions. */
const INPUTS = ['tsconfig.json', 'tsconfig.build.json', 'package-lock.json', 'src', 'migrations'];
/** What a start needs from the build. */
const OUTPUTS = ['dist/src/main.js', 'dist/src/cli.js'];
/** The digest of the inputs dist/ was compiled from. */
export const STAMP = 'dist/.sources.sha256';

/** The files of an input: itself, or every file under it; none when it does not exist. */
function filesOf(root, input) {
  const full = join(root, input);
  if (!existsSync(full)) {
    return [];
  }
  if (!statSync(full).isDirectory()) {
    return [input];
  }
  return readdirSync(full, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(root, join(entry.parentPath, entry.name)));
}

/** One digest of every input file's path and bytes, in a stable order. */
export function sourcesDigest(root) {
  const hash = createHash('sha256');
  for (const file of INPUTS.flatMap((input) => filesOf(root, input)).sort()) {
    hash.update(`${file}\0`);
    hash.update(readFileSync(join(root, file)));
    hash.update('\0');
  }
  return hash.digest('hex');
}

/** Whether dist/ is missing what a start needs, or was compiled from other sources (or not by this script). */
export function needsBuild(root) {
  if (OUTPUTS.some((output) => !existsSync(join(root, output)))) {
    return true;
  }
  const stamp = join(root, STAMP);
  return !existsSync(stamp) || readFileSync(stamp, 'utf8').trim() !== sourcesDigest(root);
}

/** Compiles when needed; returns the exit code. */
export function buildIfChanged(root) {
  if (!needsBuild(root)) {
    return 0;
  }
  // The digest of the sources as they are now: an edit during the compilation makes the next start compile again.
  const digest = sourcesDigest(root);
  const tsc = spawnSync(
    process.execPath,
    [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json')],
    { stdio: 'inherit', cwd: root },
  );
  if (tsc.status !== 0) {
    return tsc.status ?? 1;
  }
  writeFileSync(join(root, STAMP), `${digest}\n`);
  return 0;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.exit(buildIfChanged(process.cwd()));
}

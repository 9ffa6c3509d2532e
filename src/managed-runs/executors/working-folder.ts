import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { chmod, chown, lstat, mkdir, readdir, realpath, rm } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { resolveInCrate, type CrateReader } from '../../crates/index.js';
import type { RunUser } from './executor.js';

/** A run's folder: the crate unpacked in `crate/`, its own temporary files in `tmp/`, outputs beside. */
export interface WorkingFolder {
  root: string;
  crate: string;
  tmp: string;
}

/**
 * The name of a run's working folder: its run id and a tag of the claim it runs under (the claim's
 * token, ManagedRunsRepository.claimDue), so that a runner sweeping leftovers tells the folder of
 * a run still held by that claim from one of an attempt no claim holds any more (sweepable).
 */
export function workingFolderName(runId: number, claim: string): string {
  return `run-${runId}-${claimTag(claim)}`;
}

export function claimTag(claim: string): string {
  return createHash('sha256').update(claim).digest('hex').slice(0, 16);
}

/** The run id and claim tag a working folder's name holds; undefined for any other name. */
export function parseWorkingFolderName(name: string): { runId: number; tag: string } | undefined {
  const match = /^run-(\d{1,15})-([0-9a-f]{1,64})$/.exec(name);
  return match ? { runId: Number(match[1]), tag: match[2] } : undefined;
}

/**
 * The working folders of `names` (a work folder's entries) that no live claim holds: the run has
 * ended or was handed back (`claims` has no claim for it), or another claim holds it now (the
 * attempt that made the folder died). A folder of a run its claim still holds stays, whichever
 * runner holds it.
 */
export function leftoverFolders(names: readonly string[], claims: ReadonlyMap<number, string>): string[] {
  return names.filter((name) => {
    const folder = parseWorkingFolderName(name);
    if (!folder) {
      return false;
    }
    const claim = claims.get(folder.runId);
    return claim === undefined || claimTag(claim) !== folder.tag;
  });
}

/**
 * Makes the run's working folder under `base` (0711, so that run users can reach only the folder
 * they own) and unpacks the crate into it, every file as a plain file (a symlink entry becomes a
 * file holding its target: no link is ever made), with the crate reader's checks (names that stay
 * in the crate, sizes within `maxUncompressedBytes`, counted as inflated, so a zip bomb stops at
 * the limit). Everything belongs to `user` afterwards. Rejects with the crate reader's
 * DomainError for a crate that fails them; the folder is removed then.
 */
export async function prepareWorkingFolder(
  base: string,
  name: string,
  archive: string,
  reader: CrateReader,
  maxUncompressedBytes: number,
  user: RunUser | undefined,
): Promise<WorkingFolder> {
  await mkdir(base, { recursive: true, mode: 0o711 });
  await chmod(base, 0o711);
  const root = join(base, name);
  await rm(root, { recursive: true, force: true });
  const folder = { root, crate: join(root, 'crate'), tmp: join(root, 'tmp') };
  try {
    await mkdir(folder.crate, { recursive: true, mode: 0o700 });
    await mkdir(folder.tmp, { mode: 0o700 });
    for (const file of await reader.files(archive, maxUncompressedBytes)) {
      const path = resolveInCrate('', file.path);
      if (path === undefined) {
        continue;
      }
      const target = join(folder.crate, ...path.split('/'));
      await mkdir(dirname(target), { recursive: true, mode: 0o700 });
      // `wx`: a name the crate holds twice (or a file where a folder went) fails instead of overwriting.
      await pipeline(await file.open(), createWriteStream(target, { flags: 'wx', mode: 0o600 }));
    }
    if (user) {
      await chownTree(root, user);
    }
    return folder;
  } catch (error) {
    await rm(root, { recursive: true, force: true });
    throw error;
  }
}

async function chownTree(path: string, user: RunUser): Promise<void> {
  await chown(path, user.uid, user.gid);
  const stat = await lstat(path);
  if (stat.isDirectory()) {
    for (const entry of await readdir(path)) {
      await chownTree(join(path, entry), user);
    }
  }
}

/**
 * The absolute path of `relativePath` (from `from`, a folder inside `root`) when it and every link
 * on the way stay inside `root`; undefined when it leaves it (`..`, an absolute path, a symlink out)
 * or does not exist.
 */
export async function insideFolder(
  root: string,
  from: string,
  relativePath: string,
): Promise<string | undefined> {
  const wanted = resolve(from, relativePath);
  if (!isWithin(root, wanted)) {
    return undefined;
  }
  try {
    const real = await realpath(wanted);
    return isWithin(await realpath(root), real) ? real : undefined;
  } catch {
    return undefined;
  }
}

export function isWithin(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

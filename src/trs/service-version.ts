import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let version: string | undefined;

/**
 * This service's version, from its package.json (the nearest above this file: `src/trs/` when run
 * from the sources, `dist/src/trs/` when built), read once.
 */
export function serviceVersion(): string {
  if (version === undefined) {
    version = 'unknown';
    for (let dir = dirname(fileURLToPath(import.meta.url)); dir !== dirname(dir); dir = dirname(dir)) {
      try {
        const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version?: unknown };
        version = typeof manifest.version === 'string' ? manifest.version : 'unknown';
        break;
      } catch {
        // No package.json here: look one folder up.
      }
    }
  }
  return version;
}

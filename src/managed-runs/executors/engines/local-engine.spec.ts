import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { commandVersion, PROBE_TTL_MS } from './local-engine.js';

describe('commandVersion', () => {
  let dir: string;
  let tool: string;
  let starts: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'probe-'));
    tool = join(dir, 'engine');
    starts = join(dir, 'starts');
    writeFileSync(starts, '');
    // Counts its starts: a probe answered from what was kept starts nothing.
    writeFileSync(tool, `#!/bin/sh\necho x >> ${starts}\necho "engine 1.2.3"\n`);
    chmodSync(tool, 0o755);
  });

  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const startCount = (): number => readFileSync(starts, 'utf8').split('\n').filter(Boolean).length;

  it('starts the command once for the calls within PROBE_TTL_MS, concurrent or not, and again after', async () => {
    const at = 1_000_000;
    const first = await Promise.all([
      commandVersion(tool, ['--version'], at),
      commandVersion(tool, ['--version'], at),
    ]);
    expect(first).toEqual(['engine 1.2.3', 'engine 1.2.3']);
    expect(await commandVersion(tool, ['--version'], at + PROBE_TTL_MS - 1)).toBe('engine 1.2.3');
    expect(startCount()).toBe(1);

    expect(await commandVersion(tool, ['--version'], at + PROBE_TTL_MS)).toBe('engine 1.2.3');
    expect(startCount()).toBe(2);
  });

  it('sees a command installed after it was found missing, once the answer is PROBE_TTL_MS old', async () => {
    const missing = join(dir, 'later');
    const at = 2_000_000;
    expect(await commandVersion(missing, ['--version'], at)).toBeNull();
    writeFileSync(missing, '#!/bin/sh\necho "later 2.0"\n');
    chmodSync(missing, 0o755);
    expect(await commandVersion(missing, ['--version'], at + 1)).toBeNull();
    expect(await commandVersion(missing, ['--version'], at + PROBE_TTL_MS)).toBe('later 2.0');
  });
});

// Registers a 50 MiB crate with the built service (`npm run build` first; `npm run bench`
// does it) and prints the wall time of the registration and the growth of the service's
// peak resident memory over its settled size before it. The crate is streamed to disk, hashed
// on the way, and read without extracting, so the growth should stay far below the archive
// size (the goal: under 64 MiB). Asserts only that the registration succeeded and that the
// stored archive is the one served. Settings: BENCH_CRATE_MIB (default 50).
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { clearInterval, setInterval } from 'node:timers';
import { crc32 } from 'node:zlib';
import { freePort } from '../support/mariadb-server.mjs';
import { memoryOf, sleep, startService } from './service.mjs';

const MiB = 1024 * 1024;
const crateMiB = Number(process.env.BENCH_CRATE_MIB ?? 50);

const METADATA = JSON.stringify({
  '@context': 'https://w3id.org/ro/crate/1.1/context',
  '@graph': [
    { '@id': 'ro-crate-metadata.json', '@type': 'CreativeWork', about: { '@id': './' } },
    {
      '@id': './',
      '@type': 'Dataset',
      name: 'bench crate',
      mainEntity: { '@id': 'workflow.ga' },
      mentions: [{ '@id': '#s' }],
    },
    { '@id': 'workflow.ga', '@type': ['File', 'SoftwareSourceCode', 'ComputationalWorkflow'], name: 'bench' },
    { '@id': '#s', '@type': 'TestSuite', instance: [{ '@id': '#i' }] },
    {
      '@id': '#i',
      '@type': 'TestInstance',
      runsOn: { '@id': 'https://w3id.org/ro/terms/test#GithubService' },
      url: 'https://api.github.com',
      resource: 'repos/o/r/actions/workflows/ci.yml',
    },
  ],
});

/**
 * Writes a zip of stored (uncompressed) entries, the big one from random bytes so that it
 * cannot be compressed, streamed to disk in 1 MiB pieces.
 */
async function writeCrate(path, dataBytes) {
  const out = createWriteStream(path);
  const write = async (buffer) => {
    if (!out.write(buffer)) {
      await once(out, 'drain');
    }
  };
  const central = [];
  let offset = 0;
  const entry = async (name, size, crc, body) => {
    const nameBytes = Buffer.from(name);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(size, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    await write(Buffer.concat([local, nameBytes]));
    await body();
    const record = Buffer.alloc(46);
    record.writeUInt32LE(0x02014b50, 0);
    record.writeUInt16LE(20, 4);
    record.writeUInt16LE(20, 6);
    record.writeUInt32LE(crc, 16);
    record.writeUInt32LE(size, 20);
    record.writeUInt32LE(size, 24);
    record.writeUInt16LE(nameBytes.length, 28);
    record.writeUInt32LE(offset, 42);
    central.push(record, nameBytes);
    offset += 30 + nameBytes.length + size;
  };
  const metadata = Buffer.from(METADATA);
  await entry('ro-crate-metadata.json', metadata.length, crc32(metadata), () => write(metadata));
  // The CRC of the big entry needs its bytes first: generate them from a seed twice.
  const seed = randomBytes(MiB);
  const piece = (index) => createHash('sha256').update(seed).update(String(index)).digest().toString('hex');
  const chunk = (index) => Buffer.alloc(MiB, piece(index));
  let crc = 0;
  for (let i = 0; i < dataBytes / MiB; i++) {
    crc = crc32(chunk(i), crc);
  }
  await entry('data/big.bin', dataBytes, crc, async () => {
    for (let i = 0; i < dataBytes / MiB; i++) {
      await write(chunk(i));
    }
  });
  const directory = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(2, 8);
  end.writeUInt16LE(2, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  await write(Buffer.concat([directory, end]));
  out.end();
  await once(out, 'finish');
}

/** Resident and peak resident memory of a process, in bytes (Linux). */
const dir = mkdtempSync(join(tmpdir(), 'bench-registry-'));
const cratePath = join(dir, 'big.crate.zip');
const smallPath = join(dir, 'small.crate.zip');
await writeCrate(cratePath, crateMiB * MiB);
await writeCrate(smallPath, MiB);
const crateSize = statSync(cratePath).size;
const crateSha = createHash('sha256');
for await (const piece of createReadStream(cratePath)) {
  crateSha.update(piece);
}
const expectedSha = crateSha.digest('hex');

const files = createServer((request, response) => {
  const path = request.url === '/big.zip' ? cratePath : smallPath;
  response.writeHead(200, { 'content-type': 'application/zip', 'content-length': statSync(path).size });
  createReadStream(path).pipe(response);
});
const filesPort = await freePort();
await new Promise((resolve) => files.listen(filesPort, '127.0.0.1', resolve));

const service = await startService(join(dir, 'data'), { ALLOW_PRIVATE_NETWORK_LINKS: 'true' });
let failed = false;
try {
  const base = service.url;
  const token = await service.login();
  const register = (link, version) =>
    fetch(`${base}/users/current/workflows`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ roc_link: link, version }),
    });

  // A small registration first, so that the code paths are loaded before the baseline is taken.
  const warm = await register(`http://127.0.0.1:${filesPort}/small.zip`, 'warm-up');
  if (warm.status !== 201) {
    throw new Error(`the warm-up registration answered ${warm.status}: ${await warm.text()}`);
  }
  await sleep(500);
  const before = memoryOf(service.child.pid);
  // Resets the peak (VmHWM) to the current size, so that the peak read afterwards is this registration's.
  let peakReset = true;
  try {
    writeFileSync(`/proc/${service.child.pid}/clear_refs`, '5');
  } catch {
    peakReset = false;
  }
  let sampledPeak = before.rss;
  const sampler = setInterval(() => {
    sampledPeak = Math.max(sampledPeak, memoryOf(service.child.pid).rss);
  }, 10);

  const started = process.hrtime.bigint();
  const response = await register(`http://127.0.0.1:${filesPort}/big.zip`, '1.0');
  const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
  clearInterval(sampler);
  const after = memoryOf(service.child.pid);
  const body = await response.json();
  if (response.status !== 201) {
    throw new Error(`the registration answered ${response.status}: ${JSON.stringify(body)}`);
  }
  const head = await fetch(`${base}/workflows/${body.uuid}/rocrate/1.0/download`, {
    headers: { authorization: `Bearer ${token}`, 'if-none-match': `"${expectedSha}"` },
  });
  if (head.status !== 304) {
    throw new Error(
      `the stored archive is not the one served (download answered ${head.status}, ETag ${head.headers.get('etag')}, expected "${expectedSha}")`,
    );
  }

  const peak = peakReset ? Math.max(after.peak, sampledPeak) : sampledPeak;
  const growthMiB = (peak - before.rss) / MiB;
  console.table([
    {
      'crate MiB': +(crateSize / MiB).toFixed(1),
      'wall ms': Math.round(wallMs),
      'MiB/s': +(crateSize / MiB / (wallMs / 1000)).toFixed(1),
      'RSS before MiB': +(before.rss / MiB).toFixed(1),
      'peak RSS MiB': +(peak / MiB).toFixed(1),
      'peak growth MiB': +growthMiB.toFixed(1),
    },
  ]);
  process.stdout.write(
    `peak RSS growth ${growthMiB.toFixed(1)} MiB for a ${(crateSize / MiB).toFixed(1)} MiB crate ` +
      `(goal: under 64 MiB; peak ${peakReset ? 'from VmHWM after a reset, and sampled every 10 ms' : 'sampled every 10 ms'})\n`,
  );
} catch (error) {
  failed = true;
  console.error(error);
} finally {
  files.close();
  await service.stop();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);

// Small Workflow Testing RO-Crates made in memory for the benchmarks, and a loopback server
// that hands them out as links to register.
import { randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { freePort } from '../support/mariadb-server.mjs';

function metadata(name, repo) {
  return JSON.stringify({
    '@context': 'https://w3id.org/ro/crate/1.1/context',
    '@graph': [
      { '@id': 'ro-crate-metadata.json', '@type': 'CreativeWork', about: { '@id': './' } },
      {
        '@id': './',
        '@type': 'Dataset',
        name,
        mainEntity: { '@id': 'workflow.ga' },
        mentions: [{ '@id': '#s' }],
      },
      { '@id': 'workflow.ga', '@type': ['File', 'SoftwareSourceCode', 'ComputationalWorkflow'], name },
      { '@id': '#s', '@type': 'TestSuite', instance: [{ '@id': '#i' }] },
      {
        '@id': '#i',
        '@type': 'TestInstance',
        runsOn: { '@id': 'https://w3id.org/ro/terms/test#GithubService' },
        url: 'https://api.github.com',
        resource: `repos/bench/${repo}/actions/workflows/ci.yml`,
      },
    ],
  });
}

/**
 * A zip of stored (uncompressed) entries: the metadata and `data/pad.bin` of random bytes, so
 * that the archive is about `bytes` long and every crate made has its own SHA-256.
 */
export function crateZip(name, bytes) {
  const entries = [
    ['ro-crate-metadata.json', Buffer.from(metadata(name, name.replace(/\W/g, '-')))],
    ['data/pad.bin', randomBytes(Math.max(0, bytes - 1024))],
  ];
  const locals = [];
  const central = [];
  let offset = 0;
  for (const [entryName, body] of entries) {
    const nameBytes = Buffer.from(entryName);
    const crc = crc32(body);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(body.length, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    locals.push(local, nameBytes, body);
    const record = Buffer.alloc(46);
    record.writeUInt32LE(0x02014b50, 0);
    record.writeUInt16LE(20, 4);
    record.writeUInt16LE(20, 6);
    record.writeUInt32LE(crc, 16);
    record.writeUInt32LE(body.length, 20);
    record.writeUInt32LE(body.length, 24);
    record.writeUInt16LE(nameBytes.length, 28);
    record.writeUInt32LE(offset, 42);
    central.push(record, nameBytes);
    offset += 30 + nameBytes.length + body.length;
  }
  const directory = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

/** Serves `crates` (path → bytes) on a free loopback port; `link(path)` is its URL. */
export async function serveCrates(crates) {
  const server = createServer((request, response) => {
    const body = crates.get(request.url ?? '');
    if (!body) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'content-type': 'application/zip', 'content-length': body.length });
    response.end(body);
  });
  const port = await freePort();
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    link: (path) => `http://127.0.0.1:${port}${path}`,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/**
 * Writes `crates` (name → bytes) into `folder` and serves them from a process of its own (see
 * crate-server.mjs); `link(name)` is a crate's URL.
 */
export async function serveCratesApart(folder, crates) {
  for (const [name, bytes] of crates) {
    writeFileSync(join(folder, name), bytes);
  }
  const port = await freePort();
  const child = spawn(process.execPath, ['test/bench/crate-server.mjs', folder, String(port)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await once(child.stdout, 'data');
  return {
    link: (name) => `http://127.0.0.1:${port}/${name}`,
    close: async () => {
      child.kill();
      await once(child, 'exit');
    },
  };
}

// Serves the files of one folder on a loopback port, in a process of its own, so that a
// benchmark's clients (busy in the benchmark's process) do not slow the downloads they measure.
// Usage: node test/bench/crate-server.mjs <folder> <port>; prints "ready" once listening.
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { join } from 'node:path';

const [folder, port] = process.argv.slice(2);
const server = createServer(async (request, response) => {
  const name = (request.url ?? '').replace(/^\//, '');
  try {
    if (!/^[\w.-]+$/.test(name)) {
      throw new Error('not a file name');
    }
    const body = await readFile(join(folder, name));
    response.writeHead(200, { 'content-type': 'application/zip', 'content-length': body.length }).end(body);
  } catch {
    response.writeHead(404).end();
  }
});
server.listen(Number(port), '127.0.0.1', () => process.stdout.write('ready\n'));

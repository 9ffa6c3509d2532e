import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type RequestListener, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import { openStreamed, OutboundError, readBody, sendRequest } from './http-client.js';

const servers: Server[] = [];

async function serve(listener: RequestListener): Promise<string> {
  const server = createServer(listener);
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
    await once(server, 'close');
  }
});

const LOCAL = { timeoutMs: 5000, allowPrivate: true };

describe('openStreamed', () => {
  it('reads a long chunked body through one reused buffer of bounded size, whatever the pace of its reader', async () => {
    const piece = Buffer.alloc(100_000, 'x');
    const pieces = 80;
    const url = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' });
      let sent = 0;
      const pump = (): void => {
        while (sent < pieces) {
          sent++;
          if (!response.write(piece)) {
            response.once('drain', pump);
            return;
          }
        }
        response.end('end\n');
      };
      pump();
    });
    const answer = await openStreamed(url, LOCAL);
    expect(answer.status).toBe(200);
    expect(answer.headers['transfer-encoding']).toBe('chunked');
    const buffers = new Set<ArrayBufferLike>();
    let total = 0;
    let largest = 0;
    let last = '';
    for await (const chunk of answer.chunks) {
      buffers.add(chunk.buffer);
      total += chunk.length;
      largest = Math.max(largest, chunk.length);
      last = chunk.toString('latin1', Math.max(0, chunk.length - 4));
      if (total % 3 === 0) {
        // A slow reader: the socket waits for it instead of its bytes piling up.
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
    }
    expect(total).toBe(pieces * piece.length + 4);
    expect(last).toBe('end\n');
    // No buffer per chunk: one stage, never more than its 256 KiB at a time.
    expect(buffers.size).toBe(1);
    expect(largest).toBeLessThanOrEqual(256 * 1024);
  });

  it('follows redirects, sending the origin-only headers to the first origin only', async () => {
    const seen: IncomingHttpHeaders[] = [];
    const storage = await serve((request, response) => {
      seen.push(request.headers);
      response.writeHead(200, { 'content-length': '4' }).end('log\n');
    });
    const api = await serve((request, response) => {
      seen.push(request.headers);
      // Another origin: the same address by another name.
      response.writeHead(302, { location: `${storage.replace('127.0.0.1', 'localhost')}/blob?sig=1` }).end();
    });
    const answer = await openStreamed(`${api}/logs`, {
      ...LOCAL,
      maxRedirects: 3,
      headers: { accept: 'text/plain' },
      originOnlyHeaders: { authorization: 'token secret-token' },
    });
    const body: Buffer[] = [];
    for await (const chunk of answer.chunks) {
      body.push(Buffer.from(chunk));
    }
    expect(Buffer.concat(body).toString()).toBe('log\n');
    expect(answer.url).toMatch(/^http:\/\/localhost:\d+\/blob\?sig=1$/);
    expect(seen.map((headers) => headers.authorization)).toEqual(['token secret-token', undefined]);
    expect(seen.every((headers) => headers.accept === 'text/plain')).toBe(true);
  });

  it('reads a body that ends with the connection (no length, not chunked)', async () => {
    const server = createTcpServer((socket) => {
      socket.once('data', () =>
        socket.end('HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nup to the end\n'),
      );
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const answer = await openStreamed(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, LOCAL);
      let body = '';
      for await (const chunk of answer.chunks) {
        body += chunk.toString();
      }
      expect(body).toBe('up to the end\n');
    } finally {
      server.close();
    }
  });

  it('rejects a body cut short, an aborted read, and a private address when they are not allowed', async () => {
    const url = await serve((request, response) => {
      response.writeHead(200, { 'content-length': '1000000' });
      response.write('only a part');
      if (request.url === '/cut') {
        setTimeout(() => response.destroy(), 20);
      }
    });
    const cut = await openStreamed(`${url}/cut`, LOCAL);
    const readAll = async (chunks: AsyncIterable<Buffer>): Promise<void> => {
      for await (const _chunk of chunks) {
        // Read and dropped.
      }
    };
    await expect(readAll(cut.chunks)).rejects.toBeInstanceOf(OutboundError);

    const gone = new AbortController();
    const hanging = await openStreamed(`${url}/hang`, { ...LOCAL, signal: gone.signal });
    setTimeout(() => gone.abort(), 20);
    await expect(readAll(hanging.chunks)).rejects.toMatchObject({ reason: 'unreachable' });

    await expect(openStreamed(url, { timeoutMs: 5000, allowPrivate: false })).rejects.toMatchObject({
      reason: 'private_address',
    });
  });
});

describe('trusted origins (a configured service on a private address)', () => {
  /** A server on loopback (private) that redirects `/away` to `target`. */
  async function privateServer(target?: string): Promise<{ url: string; hits: () => number }> {
    let hits = 0;
    const url = await serve((request, response) => {
      hits++;
      if (request.url === '/away' && target !== undefined) {
        response.writeHead(302, { location: `${target}/blob` }).end();
        return;
      }
      response.writeHead(200, { 'content-length': '3' }).end('ok\n');
    });
    return { url, hits: () => hits };
  }
  const guarded = { timeoutMs: 5000, allowPrivate: false, maxRedirects: 3 };

  it('reaches a trusted origin on a private address, by sendRequest and openStreamed', async () => {
    const { url } = await privateServer();
    const sent = await sendRequest(`${url}/x`, { ...guarded, trustedOrigins: [url] });
    expect((await readBody(sent.body, 100)).toString()).toBe('ok\n');
    const streamed = await openStreamed(`${url}/x`, { ...guarded, trustedOrigins: [url] });
    expect((await readBody(streamed.chunks, 100)).toString()).toBe('ok\n');
  });

  it('refuses a private neighbour a trusted origin redirects to, and another port of its host', async () => {
    const neighbour = await privateServer();
    const { url } = await privateServer(neighbour.url);
    const request = { ...guarded, trustedOrigins: [url] };
    await expect(sendRequest(`${url}/away`, request)).rejects.toMatchObject({ reason: 'private_address' });
    await expect(openStreamed(`${url}/away`, request)).rejects.toMatchObject({ reason: 'private_address' });
    await expect(sendRequest(`${neighbour.url}/x`, request)).rejects.toMatchObject({
      reason: 'private_address',
    });
    expect(neighbour.hits()).toBe(0);
  });
});

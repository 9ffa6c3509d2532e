import { IncomingMessage, ServerResponse, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { StreamableFile, type NestApplicationOptions } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import type { Express, Response } from 'express';
import { conditional, entityTagOf } from './common/conditional-read.js';
import { ExpressHttpAdapter } from './http-adapter.js';
import { until } from '../test/support/until.js';

/**
 * Serves one GET through the adapter's server and reports the prototypes its request and
 * response had when the server made them (before Express took them), and what Express answered.
 */
async function served(
  adapter: ExpressAdapter,
  options: NestApplicationOptions = {},
): Promise<{ request: object | null; response: object | null; app: Express; status: number; body: unknown }> {
  const app = adapter.getInstance<Express>();
  app.get('/', (request, response) => {
    response.json({ host: request.hostname, secure: request.secure });
  });
  adapter.initHttpServer(options);
  const server = adapter.getHttpServer() as Server;
  let made: { request: object | null; response: object | null } = { request: null, response: null };
  server.prependListener('request', (request: IncomingMessage, response: ServerResponse) => {
    made = {
      request: Object.getPrototypeOf(request) as object,
      response: Object.getPrototypeOf(response) as object,
    };
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const reply = await fetch(`http://127.0.0.1:${port}/`);
    return { ...made, app, status: reply.status, body: await reply.json() };
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

describe('ExpressHttpAdapter', () => {
  it("makes each request and response with the app's prototypes, which Express then keeps", async () => {
    const { request, response, app, status, body } = await served(new ExpressHttpAdapter());
    expect(request).toBe(app.request);
    expect(response).toBe(app.response);
    // Express's request and response methods work on them, and Node's own are still theirs.
    expect(status).toBe(200);
    expect(body).toEqual({ host: '127.0.0.1', secure: false });
  });

  it("is what Nest's own adapter leaves to Express: Node's plain messages, re-prototyped per request", async () => {
    const { request, response } = await served(new ExpressAdapter());
    expect(request).toBe(IncomingMessage.prototype);
    expect(response).toBe(ServerResponse.prototype);
  });

  it("sends a conditional read's body tagged, and a 304 without a body when If-None-Match names the tag", async () => {
    const adapter = new ExpressHttpAdapter();
    const app = adapter.getInstance<Express>();
    app.get('/read', (_request, response) => {
      adapter.reply(response, conditional({ items: [1, 2] }));
    });
    adapter.initHttpServer({});
    const server = adapter.getHttpServer() as Server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/read`;
      const first = await fetch(url);
      expect(first.status).toBe(200);
      expect(first.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(first.headers.get('cache-control')).toBe('private, no-cache');
      const etag = first.headers.get('etag');
      expect(etag).toBe(entityTagOf('{"items":[1,2]}'));
      expect(await first.json()).toEqual({ items: [1, 2] });
      const again = await fetch(url, { headers: { 'If-None-Match': `W/${etag}, "other"` } });
      expect(again.status).toBe(304);
      expect(again.headers.get('etag')).toBe(etag);
      expect(await again.text()).toBe('');
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('closes once every route handler in flight has ended, its client gone or not, and a streamed reply once its stream closed', async () => {
    const adapter = new ExpressHttpAdapter({ drainOnClose: true });
    let finishWork!: () => void;
    const work = new Promise<void>((resolve) => (finishWork = resolve));
    const body = new PassThrough();
    adapter.post('/work', async (_request: unknown, response: Response) => {
      await work;
      response.status(201).end();
    });
    adapter.get('/stream', (_request: unknown, response: Response) => {
      adapter.reply(response, new StreamableFile(body));
    });
    adapter.initHttpServer({});
    const server = adapter.getHttpServer() as Server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const client = new AbortController();
    const left = fetch(`${url}/work`, { method: 'POST', signal: client.signal }).catch(() => 'left');
    await until('the handler to start', () => adapter.handlersInFlight.size === 1, { everyMs: 5 });
    body.write('all of ');
    const streamed = await fetch(`${url}/stream`);
    expect(adapter.handlersInFlight.size).toBe(2);
    client.abort();
    expect(await left).toBe('left');

    let closed = false;
    const closing = adapter.close().then(() => (closed = true));
    body.end('it');
    expect(await streamed.text()).toBe('all of it');
    await until('the stream to close', () => adapter.handlersInFlight.size === 1, { everyMs: 5 });
    expect(closed).toBe(false);
    finishWork();
    await closing;
    expect(adapter.handlersInFlight.size).toBe(0);
  });

  it('leaves the server to Nest for the options Nest applies to a server of its own', async () => {
    const { request, status } = await served(new ExpressHttpAdapter(), { forceCloseConnections: true });
    expect(request).toBe(IncomingMessage.prototype);
    expect(status).toBe(200);
  });
});

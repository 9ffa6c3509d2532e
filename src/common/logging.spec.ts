import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import type { NextFunction, Request, Response } from 'express';
import { pino } from 'pino';
import { accessLog, AppLogger, bindRequestId, markCallersMistake, redactUrl } from './logging.js';

function capture(): { logger: AppLogger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
      done();
    },
  });
  const root = pino({ level: 'trace' }, sink);
  return { logger: new AppLogger(root), lines };
}

describe('AppLogger', () => {
  it("writes Nest's (message, context) and (message, stack, context) forms", () => {
    const { logger, lines } = capture();
    logger.log('started', 'Main');
    logger.error('it broke', 'Error: it broke\n    at somewhere', 'Errors');
    expect(lines[0]).toMatchObject({ level: 30, msg: 'started', context: 'Main' });
    expect(lines[1]).toMatchObject({
      level: 50,
      msg: 'it broke',
      context: 'Errors',
      stack: expect.stringContaining('at somewhere'),
    });
  });

  it("writes Nest's line per module and per route at debug, its other start-up lines at info", () => {
    const { logger, lines } = capture();
    logger.log('AppModule dependencies initialized', 'InstanceLoader');
    logger.log('UsersController {/api/v1/users}:', 'RoutesResolver');
    logger.log('Mapped {/api/v1/users, GET} route', 'RouterExplorer');
    logger.log('Nest application successfully started', 'NestApplication');
    logger.warn('a warning stays a warning', 'RouterExplorer');
    expect(lines.map((line) => [line.context, line.level])).toEqual([
      ['InstanceLoader', 20],
      ['RoutesResolver', 20],
      ['RouterExplorer', 20],
      ['NestApplication', 30],
      ['RouterExplorer', 40],
    ]);
  });

  it("writes pino's ({ fields }, message, context) form", () => {
    const { logger, lines } = capture();
    logger.warn({ requestId: 'r-1', attempts: 3 }, 'slow upstream', 'Refresh');
    expect(lines[0]).toMatchObject({
      level: 40,
      msg: 'slow upstream',
      context: 'Refresh',
      requestId: 'r-1',
      attempts: 3,
    });
  });

  it("writes through the request's child logger inside a request, so the line has the request's id", async () => {
    const { logger, lines } = capture();
    const request = { id: 'req-42' } as Request;
    await new Promise<void>((resolve) => {
      const next: NextFunction = () => {
        setTimeout(() => {
          logger.log('inside', 'Registry');
          resolve();
        }, 1);
      };
      bindRequestId(request, {} as Response, next);
    });
    logger.log('outside', 'Registry');
    expect(lines[0]).toMatchObject({ msg: 'inside', reqId: 'req-42' });
    expect(lines[1]).not.toHaveProperty('reqId');
  });
});

describe('redactUrl', () => {
  it('hides tokens and passwords in query strings', () => {
    expect(redactUrl('/api/v1/nodes?auth_token=abc.def&x=1')).toBe('/api/v1/nodes?auth_token=[Redacted]&x=1');
    expect(redactUrl('/a?x=1&password=p')).toBe('/a?x=1&password=[Redacted]');
  });

  it("hides a sign-in redirect's code and state, and leaves a PKCE challenge alone", () => {
    expect(redactUrl('/oauth2/authorized/lslogin?code=c0de&state=st4te&iss=https%3A%2F%2Fop')).toBe(
      '/oauth2/authorized/lslogin?code=[Redacted]&state=[Redacted]&iss=https%3A%2F%2Fop',
    );
    expect(redactUrl('/oauth2/authorize?code_challenge=abc&state=s')).toBe(
      '/oauth2/authorize?code_challenge=abc&state=[Redacted]',
    );
  });

  it('hides API keys in the query whatever the parameter, and anything like a key anywhere', () => {
    const key = `wfk_${'A1b2-C3_d4'.repeat(4)}xyz`;
    for (const [url, shown] of [
      [`/workflows?api_key=${key}`, '/workflows?api_key=[Redacted]'],
      [`/workflows?x=1&apikey=${key}&y=2`, '/workflows?x=1&apikey=[Redacted]&y=2'],
      [`/workflows?key=${key}`, '/workflows?key=[Redacted]'],
      [`/workflows?access_token=abc.def`, '/workflows?access_token=[Redacted]'],
      [`/workflows?q=${key}`, '/workflows?q=[Redacted]'],
      [`/workflows?filter=a,${key},b`, '/workflows?filter=a,[Redacted],b'],
      [`/workflows?q=wfk%5F${key.slice(4)}`, '/workflows?q=[Redacted]'],
      [`/workflows/${key}/status`, '/workflows/[Redacted]/status'],
    ]) {
      expect(redactUrl(url)).toBe(shown);
    }
    expect(redactUrl('/workflows?monkey=1&keys=2')).toBe('/workflows?monkey=1&keys=2');
  });
});

describe('accessLog', () => {
  /** Serves requests through the access log and returns the lines it wrote. */
  async function logged(
    readable: boolean,
    paths = ['/workflows/abc?auth_token=secret-token'],
    status = 404,
    callersMistake = false,
  ): Promise<Record<string, unknown>[]> {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
        done();
      },
    });
    const log = accessLog(pino({ level: 'info' }, sink), readable);
    const server = createServer((request, response) => {
      request.id = 'req-7';
      log(request, response, () => {
        if (callersMistake) {
          markCallersMistake(response);
        }
        response.statusCode = status;
        response.setHeader('content-length', 2);
        response.setHeader('x-secret-header', 'not-for-the-log');
        response.end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    for (const path of paths) {
      await fetch(`http://127.0.0.1:${port}${path}`, {
        headers: { authorization: 'Bearer secret-token', 'user-agent': 'a-client/1.0' },
      });
    }
    await new Promise<void>((resolve) => server.close(() => resolve()));
    return lines;
  }

  it('writes one short line in development: method, path, status, time, request id, no headers', async () => {
    const [line, ...more] = await logged(true);
    expect(more).toEqual([]);
    expect(line.msg).toMatch(/^GET \/workflows\/abc\?auth_token=\[Redacted\] 404 \d+ ms$/);
    expect(line.reqId).toBe('req-7');
    expect(line).not.toHaveProperty('req');
    expect(line).not.toHaveProperty('res');
    expect(JSON.stringify(line)).not.toContain('secret-token');
    expect(JSON.stringify(line)).not.toContain('a-client');
  });

  it('never writes an API key sent in the query, whatever its parameter', async () => {
    const key = `wfk_${'Zq9-x_'.repeat(7)}a`;
    const lines = await logged(
      false,
      [
        `/workflows?api_key=${key}`,
        `/workflows?key=${key}`,
        `/workflows?access_token=${key}`,
        `/workflows?k=${key}`,
      ],
      401,
    );
    expect(lines.map((line) => (line.req as { url: string }).url)).toEqual([
      '/workflows?api_key=[Redacted]',
      '/workflows?key=[Redacted]',
      '/workflows?access_token=[Redacted]',
      '/workflows?k=[Redacted]',
    ]);
    expect(JSON.stringify(lines)).not.toContain(key.slice(4));
  });

  it('writes a JSON line otherwise: method, redacted URL, user agent, status, length, time; no header set', async () => {
    const [line, ...more] = await logged(false);
    expect(more).toEqual([]);
    expect(line).toEqual({
      level: 30,
      time: expect.any(Number),
      pid: expect.any(Number),
      hostname: expect.any(String),
      reqId: 'req-7',
      req: {
        id: 'req-7',
        method: 'GET',
        url: '/workflows/abc?auth_token=[Redacted]',
        userAgent: 'a-client/1.0',
      },
      res: { statusCode: 404, contentLength: 2 },
      responseTime: expect.any(Number),
      msg: 'request completed',
    });
    expect(JSON.stringify(line)).not.toContain('secret');
  });

  it('writes a 5xx at error, and nothing for the health probes', async () => {
    const lines = await logged(false, ['/health/live', '/health/ready', '/workflows'], 503);
    expect(lines).toEqual([
      expect.objectContaining({ level: 50, req: expect.objectContaining({ url: '/workflows' }) }),
    ]);
  });

  it("writes a 5xx that is the caller's mistake (area C's 500 for an unknown cloud) at warn", async () => {
    const lines = await logged(false, ['/api/v1/nodes/nope'], 500, true);
    expect(lines).toEqual([
      expect.objectContaining({ level: 40, res: expect.objectContaining({ statusCode: 500 }) }),
    ]);
  });
});

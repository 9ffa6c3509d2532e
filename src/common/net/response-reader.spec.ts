import { MalformedResponse, MAX_HEAD_BYTES, ResponseReader } from './response-reader.js';

/** Feeds `raw` cut at `cuts`, each piece in a buffer of its own, and ends; returns the body. */
function read(raw: string, cuts: number[] = []): { reader: ResponseReader; body: string } {
  const reader = new ResponseReader();
  const bytes = Buffer.from(raw, 'latin1');
  let body = '';
  let at = 0;
  for (const cut of [...cuts, bytes.length]) {
    // A fresh copy each time: the sink must not keep views of what it was fed.
    const piece = Buffer.from(bytes.subarray(at, cut));
    reader.feed(piece, (part) => {
      body += part.toString('latin1');
    });
    piece.fill(0);
    at = cut;
  }
  reader.end();
  return { reader, body };
}

/** Every way to cut `raw` in two, and in single bytes. */
function everySplit(raw: string): number[][] {
  const splits = Array.from({ length: raw.length - 1 }, (_, index) => [index + 1]);
  splits.push(Array.from({ length: raw.length - 1 }, (_, index) => index + 1));
  return splits;
}

describe('ResponseReader', () => {
  const chunked =
    'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n' +
    '5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\nX-Trailer: t\r\n\r\n';

  it('reads a chunked body, its extensions and trailers skipped, however the bytes are cut', () => {
    for (const cuts of everySplit(chunked)) {
      const { reader, body } = read(chunked, cuts);
      expect(body).toBe('hello, world');
      expect(reader.response).toEqual({
        status: 200,
        headers: { 'content-type': 'text/plain', 'transfer-encoding': 'chunked' },
      });
      expect(reader.complete).toBe(true);
    }
  });

  it('reads a Content-Length body, and a body up to the end of the connection, however cut', () => {
    const sized = 'HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nabcdef';
    const closed = 'HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nto the end\n';
    for (const cuts of everySplit(sized)) {
      expect(read(sized, cuts).body).toBe('abcdef');
    }
    for (const cuts of everySplit(closed)) {
      expect(read(closed, cuts).body).toBe('to the end\n');
    }
  });

  it('skips interim answers and folds repeated fields as Node does', () => {
    const { reader, body } = read(
      'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 302 Found\r\nLocation: /there\r\nSet-Cookie: a=1\r\n' +
        'Set-Cookie: b=2\r\nVary: accept\r\nVary: origin\r\nContent-Length: 0\r\n\r\n',
    );
    expect(body).toBe('');
    expect(reader.response).toEqual({
      status: 302,
      headers: {
        location: '/there',
        'set-cookie': ['a=1', 'b=2'],
        vary: 'accept, origin',
        'content-length': '0',
      },
    });
  });

  it('refuses what is not an HTTP/1.1 answer, and an answer cut short', () => {
    const bad = [
      'SSH-2.0-OpenSSH\r\n\r\n',
      'HTTP/1.1 200 OK\r\nno colon here\r\n\r\n',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabX',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n',
      'HTTP/1.1 200 OK\r\nContent-Length: 1, 2\r\n\r\n',
      'HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n',
      'HTTP/1.1 200 OK\r\nContent-',
    ];
    for (const raw of bad) {
      expect(() => read(raw)).toThrow(MalformedResponse);
    }
  });

  it('holds at most MAX_HEAD_BYTES of a head, and refuses a longer one', () => {
    const reader = new ResponseReader();
    const field = Buffer.from(`X-Padding: ${'p'.repeat(1000)}\r\n`);
    reader.feed(Buffer.from('HTTP/1.1 200 OK\r\n'), () => undefined);
    expect(() => {
      for (let index = 0; index * field.length <= MAX_HEAD_BYTES; index++) {
        reader.feed(field, () => undefined);
      }
    }).toThrow(/longer than 65536 bytes/);
  });
});

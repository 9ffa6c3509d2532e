import type { IncomingHttpHeaders } from 'node:http';

/** Status line and header fields together: more is not an HTTP server's answer to a GET. */
export const MAX_HEAD_BYTES = 64 * 1024;
/** A chunk-size line (with its extensions) or a trailer line longer than this is not one. */
const MAX_LINE_BYTES = 4096;

/** What a response's bytes told so far; the body bytes themselves go to `ResponseReader.feed`'s sink. */
export interface ResponseHead {
  status: number;
  headers: IncomingHttpHeaders;
}

/** The answer is not HTTP/1.1 as RFC 9112 frames it. */
export class MalformedResponse extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MalformedResponse';
  }
}

type BodyState =
  | { kind: 'length'; left: number }
  | { kind: 'close' }
  | { kind: 'chunk-size'; line: string }
  | { kind: 'chunk-data'; left: number }
  | { kind: 'chunk-end'; seen: number }
  | { kind: 'trailer'; line: string }
  | { kind: 'done' };

/**
 * An HTTP/1.1 response read from bytes as they arrive, in any split: the head into one buffer of
 * MAX_HEAD_BYTES, then the body (Content-Length, chunked, or up to the connection's end) handed
 * to a sink as views of the bytes fed, never copied or kept. Node's own client allocates a new
 * buffer per socket read and another per body piece, which a long log turns into tens of MiB of
 * garbage before the collector runs; this reader allocates nothing per chunk.
 */
export class ResponseReader {
  private head?: Buffer = Buffer.allocUnsafe(MAX_HEAD_BYTES);
  private headLength = 0;
  private parsed?: ResponseHead;
  private body?: BodyState;

  /** The head, once whole. */
  get response(): ResponseHead | undefined {
    return this.parsed;
  }

  /** Whether the body ended as framed (a close-delimited body ends with the connection: see `end`). */
  get complete(): boolean {
    return this.body?.kind === 'done';
  }

  /**
   * Reads `bytes`; body bytes go to `sink` as views of `bytes`, valid only during the call.
   * Returns true once the head is whole (the first time and every time after). Throws
   * MalformedResponse for an answer that is not HTTP/1.1.
   */
  feed(bytes: Buffer, sink: (body: Buffer) => void): boolean {
    let at = 0;
    if (!this.parsed) {
      at = this.readHead(bytes);
      if (!this.parsed) {
        return false;
      }
    }
    this.readBody(bytes, at, sink);
    return true;
  }

  /** The connection ended: throws unless the answer was whole (a close-delimited body is whole here). */
  end(): void {
    if (this.body?.kind === 'close') {
      this.body = { kind: 'done' };
    }
    if (!this.parsed) {
      throw new MalformedResponse('the connection ended before the answer');
    }
    if (this.body?.kind !== 'done') {
      throw new MalformedResponse('the connection ended before the end of the answer');
    }
  }

  private readHead(bytes: Buffer): number {
    const head = this.head;
    if (!head) {
      return 0;
    }
    // The end of the head may straddle two reads: look from three bytes before the new ones.
    const searchFrom = Math.max(0, this.headLength - 3);
    const room = head.length - this.headLength;
    const taken = Math.min(room, bytes.length);
    bytes.copy(head, this.headLength, 0, taken);
    this.headLength += taken;
    const end = head.subarray(0, this.headLength).indexOf('\r\n\r\n', searchFrom, 'latin1');
    if (end < 0) {
      if (this.headLength === head.length) {
        throw new MalformedResponse(`the answer's head is longer than ${MAX_HEAD_BYTES} bytes`);
      }
      return bytes.length;
    }
    const text = head.toString('latin1', 0, end);
    const used = end + 4 - (this.headLength - taken);
    const parsed = parseHead(text);
    if (parsed.status >= 100 && parsed.status < 200) {
      // An interim answer (100 Continue, 103 Early Hints): the real one follows.
      this.headLength = 0;
      return used + this.readHead(bytes.subarray(used));
    }
    this.parsed = parsed;
    this.head = undefined;
    this.body = framing(parsed);
    return used;
  }

  private readBody(bytes: Buffer, from: number, sink: (body: Buffer) => void): void {
    let at = from;
    while (at < bytes.length && this.body) {
      const state = this.body;
      switch (state.kind) {
        case 'done':
          // Bytes after the answer: the connection is closed after it anyway.
          return;
        case 'close':
          sink(bytes.subarray(at));
          return;
        case 'length':
        case 'chunk-data': {
          const take = Math.min(state.left, bytes.length - at);
          sink(bytes.subarray(at, at + take));
          at += take;
          state.left -= take;
          if (state.left === 0) {
            this.body = state.kind === 'length' ? { kind: 'done' } : { kind: 'chunk-end', seen: 0 };
          }
          break;
        }
        case 'chunk-end': {
          const expected = state.seen === 0 ? 0x0d : 0x0a;
          if (bytes[at] !== expected) {
            throw new MalformedResponse('a chunk does not end with CRLF');
          }
          at++;
          state.seen++;
          if (state.seen === 2) {
            this.body = { kind: 'chunk-size', line: '' };
          }
          break;
        }
        case 'chunk-size':
        case 'trailer': {
          const lineEnd = bytes.indexOf(0x0a, at);
          const stop = lineEnd < 0 ? bytes.length : lineEnd;
          state.line += bytes.toString('latin1', at, stop);
          if (state.line.length > MAX_LINE_BYTES) {
            throw new MalformedResponse('a chunk-size or trailer line is too long');
          }
          at = lineEnd < 0 ? bytes.length : lineEnd + 1;
          if (lineEnd >= 0) {
            this.body = state.kind === 'chunk-size' ? chunkOf(state.line) : afterTrailer(state.line);
          }
          break;
        }
      }
    }
  }
}

function parseHead(text: string): ResponseHead {
  const lines = text.split('\r\n');
  const status = /^HTTP\/1\.[01] (\d{3})(?: |$)/.exec(lines[0]);
  if (!status) {
    throw new MalformedResponse('the answer does not start with an HTTP/1.x status line');
  }
  const headers: IncomingHttpHeaders = {};
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    if (colon <= 0 || !/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(line.slice(0, colon))) {
      throw new MalformedResponse('a header field of the answer is malformed');
    }
    const name = line.slice(0, colon).toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (name === 'set-cookie') {
      headers['set-cookie'] = [...(headers['set-cookie'] ?? []), value];
    } else {
      const known = headers[name];
      headers[name] = known === undefined ? value : `${String(known)}, ${value}`;
    }
  }
  return { status: Number(status[1]), headers };
}

/** How the body is delimited (RFC 9112 6.3), for the answer to a GET. */
function framing({ status, headers }: ResponseHead): BodyState {
  if (status === 204 || status === 304) {
    return { kind: 'done' };
  }
  const coding = headers['transfer-encoding'];
  if (typeof coding === 'string') {
    const codings = coding.toLowerCase().split(',');
    // Any other coding (gzip, …) is not one a client that sent no TE understands.
    if (codings.length !== 1 || codings[0].trim() !== 'chunked') {
      throw new MalformedResponse(`the answer's transfer coding '${coding}' is not chunked`);
    }
    return { kind: 'chunk-size', line: '' };
  }
  const length = headers['content-length'];
  if (typeof length === 'string') {
    const lengths = new Set(length.split(',').map((part) => part.trim()));
    const [only] = lengths;
    if (lengths.size !== 1 || !/^\d{1,15}$/.test(only)) {
      throw new MalformedResponse("the answer's Content-Length is not a length");
    }
    const left = Number(only);
    return left === 0 ? { kind: 'done' } : { kind: 'length', left };
  }
  return { kind: 'close' };
}

function chunkOf(line: string): BodyState {
  const size = /^([0-9A-Fa-f]{1,12})[ \t]*(?:;.*)?\r$/.exec(line);
  if (!size) {
    throw new MalformedResponse('a chunk size is malformed');
  }
  const left = parseInt(size[1], 16);
  return left === 0 ? { kind: 'trailer', line: '' } : { kind: 'chunk-data', left };
}

function afterTrailer(line: string): BodyState {
  return line === '\r' ? { kind: 'done' } : { kind: 'trailer', line: '' };
}

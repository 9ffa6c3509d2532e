import { conditional, type ConditionalReply } from '../common/conditional-read.js';

/**
 * Items per chunk of a streamed list (~35 KB of JSON for a workflow summary). The response reads
 * ahead a number of chunks, not of bytes (Nest wraps the body in a Readable of 16 objects): with
 * a batch per chunk that was up to 16 batches' JSON held while the socket drained.
 */
const ITEMS_PER_CHUNK = 50;

/**
 * `{"items": [...]}` written batch by batch as the batches arrive, so that a list of any length
 * is sent in the memory of one batch. The status and headers go with the first chunk: a failure
 * before it is still answered in the area's shape; one after it can only cut the reply.
 * The next batch is read when the response asks for more (the body is pulled), so a slow
 * client holds the reading back instead of letting batches pile up.
 */
export function jsonItemsStream<T>(
  batches: AsyncIterable<readonly T[]>,
  toItem: (value: T) => unknown,
): globalThis.Response {
  async function* chunks(): AsyncGenerator<Uint8Array> {
    let first = true;
    for await (const batch of batches) {
      for (let at = 0; at < batch.length; at += ITEMS_PER_CHUNK) {
        // The chunk's items as one array's JSON without its brackets: one stringify per chunk.
        const items = JSON.stringify(batch.slice(at, at + ITEMS_PER_CHUNK).map(toItem)).slice(1, -1);
        yield Buffer.from(`${first ? '{"items":[' : ','}${items}`);
        first = false;
      }
    }
    yield Buffer.from(first ? '{"items":[]}' : ']}');
  }
  return new globalThis.Response(ReadableStream.from(chunks()), {
    headers: { 'content-type': 'application/json; charset=utf-8' },
  });
}

/**
 * A whole list as `{"items": [...]}`: answered at once when it comes in one batch, else streamed
 * batch by batch (jsonItemsStream).
 */
export async function itemsReply<T, R>(
  batches: AsyncGenerator<T[]>,
  toItem: (value: T) => R,
): Promise<ConditionalReply<{ items: R[] }> | globalThis.Response> {
  const first = await batches.next();
  if (first.done) {
    return conditional({ items: [] });
  }
  const second = await batches.next();
  if (second.done) {
    return conditional({ items: first.value.map(toItem) });
  }
  return jsonItemsStream(prepend([first.value, second.value], batches), toItem);
}

async function* prepend<T>(first: readonly T[], rest: AsyncIterable<T>): AsyncGenerator<T> {
  yield* first;
  yield* rest;
}

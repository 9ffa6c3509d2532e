/**
 * `{"items": [...]}` written batch by batch as the batches arrive, so that a list of any length
 * is sent in the memory of one batch. The status and headers go with the first chunk: a failure
 * before it is still answered in the area's shape; one after it can only cut the reply.
 */
export function jsonItemsStream<T>(
  batches: AsyncIterable<readonly T[]>,
  toItem: (value: T) => unknown,
): globalThis.Response {
  async function* chunks(): AsyncGenerator<Uint8Array> {
    let first = true;
    for await (const batch of batches) {
      if (batch.length === 0) {
        continue;
      }
      const items = batch.map((value) => JSON.stringify(toItem(value))).join(',');
      yield Buffer.from(`${first ? '{"items":[' : ','}${items}`);
      first = false;
    }
    yield Buffer.from(first ? '{"items":[]}' : ']}');
  }
  return new globalThis.Response(ReadableStream.from(chunks()), {
    headers: { 'content-type': 'application/json; charset=utf-8' },
  });
}

/**
 * A whole list as `{"items": [...]}`: answered at once when it fits in one batch (shorter than
 * `batchSize`), else streamed batch by batch (jsonItemsStream).
 */
export async function itemsReply<T, R>(
  batches: AsyncGenerator<T[]>,
  batchSize: number,
  toItem: (value: T) => R,
): Promise<{ items: R[] } | globalThis.Response> {
  const first = await batches.next();
  const firstBatch = first.done ? [] : first.value;
  if (firstBatch.length < batchSize) {
    await batches.return(undefined);
    return { items: firstBatch.map(toItem) };
  }
  return jsonItemsStream(prepend(firstBatch, batches), toItem);
}

async function* prepend<T>(first: T, rest: AsyncIterable<T>): AsyncGenerator<T> {
  yield first;
  yield* rest;
}

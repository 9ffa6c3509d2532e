/**
 * The last `maxBytes` of a stream of output, kept in a bounded buffer, and how much came in all.
 * A run's log is served from its tail (MAX_LOG_BYTES); the total decides the output limit.
 */
export class OutputTail {
  private chunks: Buffer[] = [];
  private kept = 0;
  total = 0;

  constructor(private readonly maxBytes: number) {}

  push(chunk: Buffer | string): void {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk);
    this.total += bytes.length;
    this.chunks.push(bytes);
    this.kept += bytes.length;
    while (this.kept - this.chunks[0].length >= this.maxBytes) {
      this.kept -= this.chunks.shift()!.length;
    }
  }

  bytes(maxBytes = this.maxBytes): Buffer {
    const all = Buffer.concat(this.chunks);
    return all.subarray(Math.max(0, all.length - Math.min(maxBytes, this.maxBytes)));
  }
}

/** A tail cut at a line boundary starts at most this far into the kept bytes (API.md 11). */
export const LINE_BOUNDARY_WINDOW = 1024;

/**
 * The last `max` bytes of a stream, whatever its length, in one ring of `max` bytes (allocated
 * with the first byte): a 200 MiB log is never held, only its tail. A tail that is not the whole
 * stream starts after the first line break of its first KiB, so that it opens on a whole line.
 */
export class LogTail {
  private ring?: Buffer;
  /** Where the next byte goes in the ring. */
  private at = 0;
  private kept = 0;
  /** Bytes seen, the dropped ones included. */
  total = 0;

  constructor(private readonly max: number) {}

  push(chunk: Buffer): void {
    if (chunk.length === 0) {
      return;
    }
    this.total += chunk.length;
    const ring = (this.ring ??= Buffer.allocUnsafe(this.max));
    if (chunk.length >= this.max) {
      chunk.copy(ring, 0, chunk.length - this.max);
      this.at = 0;
      this.kept = this.max;
      return;
    }
    const first = Math.min(chunk.length, this.max - this.at);
    chunk.copy(ring, this.at, 0, first);
    chunk.copy(ring, 0, first);
    this.at = (this.at + chunk.length) % this.max;
    this.kept = Math.min(this.max, this.kept + chunk.length);
  }

  /** Whether bytes were dropped: the tail is not the whole stream. */
  get truncated(): boolean {
    return this.total > this.kept;
  }

  /** The tail, in order (a new buffer of at most `max` bytes). */
  bytes(): Buffer {
    if (!this.ring || this.kept === 0) {
      return Buffer.alloc(0);
    }
    const tail =
      this.kept < this.max
        ? Buffer.from(this.ring.subarray(0, this.kept))
        : Buffer.concat([this.ring.subarray(this.at), this.ring.subarray(0, this.at)]);
    if (!this.truncated) {
      return tail;
    }
    const lineEnd = tail.subarray(0, LINE_BOUNDARY_WINDOW).indexOf(0x0a);
    return lineEnd < 0 ? tail : tail.subarray(lineEnd + 1);
  }
}

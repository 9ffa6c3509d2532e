import { LINE_BOUNDARY_WINDOW, LogTail } from './log-tail.js';

const fill = (tail: LogTail, text: string, pieces: number[]): void => {
  let at = 0;
  for (const size of pieces) {
    tail.push(Buffer.from(text.slice(at, at + size)));
    at += size;
  }
  tail.push(Buffer.from(text.slice(at)));
};

describe('LogTail', () => {
  it('keeps a stream shorter than the limit whole', () => {
    const tail = new LogTail(64);
    fill(tail, 'one\ntwo\nthree\n', [3, 5]);
    expect(tail.bytes().toString()).toBe('one\ntwo\nthree\n');
    expect(tail.truncated).toBe(false);
  });

  it('keeps the last bytes, from the next whole line, whatever the chunks', () => {
    const lines = Array.from({ length: 400 }, (_, index) => `line ${index}`).join('\n');
    for (const pieces of [[], [1, 2, 3], [100, 1000, 7], [3000]]) {
      const tail = new LogTail(256);
      fill(tail, lines, pieces);
      const kept = lines.slice(-256);
      expect(tail.bytes().toString()).toBe(kept.slice(kept.indexOf('\n') + 1));
      expect(tail.truncated).toBe(true);
      expect(tail.total).toBe(lines.length);
    }
  });

  it('does not look for a line break further than the first KiB of the tail', () => {
    const tail = new LogTail(4 * LINE_BOUNDARY_WINDOW);
    const text = `${'a'.repeat(8 * LINE_BOUNDARY_WINDOW)}\nend`;
    tail.push(Buffer.from(text));
    expect(tail.bytes().toString()).toBe(text.slice(-4 * LINE_BOUNDARY_WINDOW));
  });

  it('is empty for an empty stream', () => {
    expect(new LogTail(16).bytes()).toEqual(Buffer.alloc(0));
  });
});

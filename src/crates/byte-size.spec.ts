import { formatBytes } from './byte-size.js';

describe('formatBytes', () => {
  it('writes whole binary units without decimals', () => {
    expect(formatBytes(1024 ** 3)).toBe('1 GiB');
    expect(formatBytes(100 * 1024 ** 2)).toBe('100 MiB');
    expect(formatBytes(2048)).toBe('2 KiB');
  });

  it('keeps one decimal for other sizes', () => {
    expect(formatBytes(1536)).toBe('1.5 KiB');
    expect(formatBytes(1.25 * 1024 ** 3)).toBe('1.3 GiB');
  });

  it('counts bytes below one KiB', () => {
    expect(formatBytes(700)).toBe('700 bytes');
    expect(formatBytes(1)).toBe('1 byte');
    expect(formatBytes(0)).toBe('0 bytes');
  });
});

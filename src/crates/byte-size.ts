const UNITS = [
  { name: 'GiB', size: 1024 ** 3 },
  { name: 'MiB', size: 1024 ** 2 },
  { name: 'KiB', size: 1024 },
];

/**
 * A byte count as people write it in error details: "1 GiB", "100 MiB", "1.5 KiB",
 * or "700 bytes" below one KiB.
 */
export function formatBytes(bytes: number): string {
  for (const unit of UNITS) {
    if (bytes >= unit.size) {
      const value = Math.round((bytes / unit.size) * 10) / 10;
      return `${value} ${unit.name}`;
    }
  }
  return bytes === 1 ? '1 byte' : `${bytes} bytes`;
}

/**
 * The service's icon as `/favicon.ico` (browsers ask for it on every site): a green disc with a
 * white tick, 16×16, drawn here as a 32-bit BMP inside an ICO container, so the repository holds
 * no binary file and the build carries it to dist/.
 */
const SIZE = 16;
const GREEN = [0x37, 0x7f, 0x1a]; // #1a7f37, the pages' "passed" colour, as B, G, R
const WHITE = [0xff, 0xff, 0xff];

/** Distance from (x, y) to the segment (ax, ay)–(bx, by). */
function distance(x: number, y: number, ax: number, ay: number, bx: number, by: number): number {
  const dx = bx - ax;
  const dy = by - ay;
  const t = Math.max(0, Math.min(1, ((x - ax) * dx + (y - ay) * dy) / (dx * dx + dy * dy)));
  return Math.hypot(x - ax - t * dx, y - ay - t * dy);
}

/** The colour and opacity of the pixel whose centre is (x, y), y downwards. */
function pixel(x: number, y: number): [number, number, number, number] {
  const centre = (SIZE - 1) / 2;
  if (Math.hypot(x - centre, y - centre) > SIZE / 2) {
    return [0, 0, 0, 0];
  }
  const tick = Math.min(distance(x, y, 3.5, 8, 6.5, 11), distance(x, y, 6.5, 11, 12, 4.5));
  const [b, g, r] = tick <= 1.1 ? WHITE : GREEN;
  return [b, g, r, 0xff];
}

function drawIcon(): Buffer {
  const pixels = SIZE * SIZE * 4;
  const mask = SIZE * 4; // 1 bit a pixel, rows padded to 4 bytes: all 0, the alpha channel decides
  const bitmap = 40 + pixels + mask;
  const icon = Buffer.alloc(6 + 16 + bitmap);
  icon.writeUInt16LE(0, 0); // reserved
  icon.writeUInt16LE(1, 2); // type: icon
  icon.writeUInt16LE(1, 4); // one image
  icon.writeUInt8(SIZE, 6);
  icon.writeUInt8(SIZE, 7);
  icon.writeUInt16LE(1, 10); // colour planes
  icon.writeUInt16LE(32, 12); // bits a pixel
  icon.writeUInt32LE(bitmap, 14);
  icon.writeUInt32LE(22, 18); // where the bitmap starts
  // BITMAPINFOHEADER: the height counts the colour rows and the mask's.
  icon.writeUInt32LE(40, 22);
  icon.writeInt32LE(SIZE, 26);
  icon.writeInt32LE(2 * SIZE, 30);
  icon.writeUInt16LE(1, 34);
  icon.writeUInt16LE(32, 36);
  icon.writeUInt32LE(pixels + mask, 42);
  // Rows bottom-up, pixels as B, G, R, A.
  let at = 62;
  for (let row = SIZE - 1; row >= 0; row--) {
    for (let column = 0; column < SIZE; column++) {
      for (const byte of pixel(column, row)) {
        icon.writeUInt8(byte, at++);
      }
    }
  }
  return icon;
}

export const FAVICON = drawIcon();

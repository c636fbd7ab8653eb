// The phone page's two icons (192 and 512 px, named by its web app manifest), drawn here as PNGs: no network, no tools.
import { Buffer } from 'node:buffer';
import { deflateSync } from 'node:zlib';

// The icons: the mark (a check in a ring) in white on the accent blue, inside the middle 60% so a maskable crop keeps it.
const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(bytes) {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
function chunk(type, data) {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'ascii');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}
function distanceToSegment(px, py, [ax, ay], [bx, by]) {
  const dx = bx - ax;
  const dy = by - ay;
  const t = Math.max(0, Math.min(1, ((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy)));
  return Math.hypot(px - (ax + t * dx), py - (ay + t * dy));
}
const BACKGROUND = [0x0b, 0x62, 0xd6];
const MARK = [0xff, 0xff, 0xff];
/** How much of a pixel (0–1) the mark covers, in units of the icon's size. */
function coverage(x, y) {
  const stroke = 0.045;
  const ring = Math.abs(Math.hypot(x - 0.5, y - 0.5) - 0.26);
  const check = Math.min(distanceToSegment(x, y, [0.38, 0.5], [0.47, 0.6]), distanceToSegment(x, y, [0.47, 0.6], [0.64, 0.41]));
  return Math.min(ring, check) <= stroke ? 1 : 0;
}
export function iconPng(size) {
  const SAMPLES = 4;
  const rows = Buffer.alloc(size * (1 + size * 3));
  for (let py = 0; py < size; py++) {
    const row = py * (1 + size * 3);
    rows[row] = 0; // filter: none
    for (let px = 0; px < size; px++) {
      let covered = 0;
      for (let sy = 0; sy < SAMPLES; sy++) {
        for (let sx = 0; sx < SAMPLES; sx++) covered += coverage((px + (sx + 0.5) / SAMPLES) / size, (py + (sy + 0.5) / SAMPLES) / size);
      }
      const a = covered / (SAMPLES * SAMPLES);
      for (let c = 0; c < 3; c++) rows[row + 1 + px * 3 + c] = Math.round(BACKGROUND[c] * (1 - a) + MARK[c] * a);
    }
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header[8] = 8; // bit depth
  header[9] = 2; // colour type: RGB
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([signature, chunk('IHDR', header), chunk('IDAT', deflateSync(rows, { level: 9 })), chunk('IEND', Buffer.alloc(0))]);
}

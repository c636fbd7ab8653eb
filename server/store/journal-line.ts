import zlib from 'node:zlib';

/**
 * One journal line: `<crc32 of the JSON, 8 hex digits> <JSON>\n`. The checksum turns a flipped byte into a detected
 * damage instead of a silently different record. Lines written before checksums (plain `{…}` JSON) are still read.
 */
const TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** CRC-32 (IEEE 802.3, as zlib), over the UTF-8 bytes. */
export function crc32(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) crc = (TABLE[(crc ^ (bytes[i] ?? 0)) & 0xff] ?? 0) ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** zlib's own CRC-32 where Node has it (20.15+, 22.2+): the same number, several times faster than the table above. */
const nativeCrc32 = 'crc32' in zlib && typeof zlib.crc32 === 'function' ? zlib.crc32 : undefined;

function checksum(json: string): string {
  const crc = nativeCrc32 ? Number(nativeCrc32(json)) : crc32(Buffer.from(json, 'utf8'));
  return crc.toString(16).padStart(8, '0');
}

export function encodeLine(json: string): string {
  return `${checksum(json)} ${json}\n`;
}

/** `legacy`: a line from before checksums, kept until the next compaction rewrites it with one. */
type DecodedLine = { ok: true; value: unknown; legacy: boolean } | { ok: false; reason: 'checksum' | 'malformed' };

export function decodeLine(line: string): DecodedLine {
  const text = line.trim();
  let json: string;
  const legacy = !/^[0-9a-f]{8} /.test(text);
  if (!legacy) {
    json = text.slice(9);
    if (checksum(json) !== text.slice(0, 8)) return { ok: false, reason: 'checksum' };
  } else if (text.startsWith('{')) {
    json = text;
  } else {
    return { ok: false, reason: 'malformed' };
  }
  try {
    return { ok: true, value: JSON.parse(json), legacy };
  } catch {
    return { ok: false, reason: 'malformed' };
  }
}

// Builds the phone reviewer page the hub serves at /phone/ (phone/) into ONE self-contained file, dist/phone/phone.html:
// one inline script and one inline style, nothing loaded from anywhere else (the hub serves it with a CSP that allows
// exactly the hashes of those two), plus the two icons its web app manifest names, drawn here (no network, no tools).
import { Buffer } from 'node:buffer';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { deflateSync, gzipSync } from 'node:zlib';
import preact from '@preact/preset-vite';
import { build } from 'vite';
import { viteSingleFile } from 'vite-plugin-singlefile';

const root = fileURLToPath(new URL('..', import.meta.url));
const outDir = `${root}dist/phone`;
const out = `${outDir}/phone.html`;
const { version } = JSON.parse(readFileSync(`${root}package.json`, 'utf8'));

// The page runs in a phone's browser on the hub's origin: no IndexedDB, no extension APIs, no server code. The
// extension's hub socket (extension/hub/) is allowed: it is the one client of the handshake, and lint keeps it to that.
const FORBIDDEN = ['node_modules/dexie/', 'node_modules/wxt/', 'server/', 'entrypoints/', 'extension/background/', 'extension/db/database.ts'];
const guard = {
  name: 'elicitly:phone-guard',
  load(id) {
    const path = id.replaceAll('\\', '/');
    const hit = FORBIDDEN.find((f) => path.startsWith(`${root.replaceAll('\\', '/')}${f}`));
    if (hit) this.error(`the phone page must not bundle ${id} (${hit})`);
    return null;
  },
};
/** What the page may refer to: the hub's own routes beside it (manifest and icons), nothing else. */
const SAME_DIR = new Set(['manifest.webmanifest', 'icon-192.png']);

const started = performance.now();
rmSync(outDir, { recursive: true, force: true });
await build({
  configFile: false,
  root: `${root}phone`,
  logLevel: 'warn',
  mode: 'production',
  define: { __ELICITLY_VERSION__: JSON.stringify(version) },
  plugins: [guard, preact({ prerender: { enabled: false } }), viteSingleFile({ removeViteModuleLoader: true, outputFileName: 'phone.html' })],
  build: {
    outDir,
    emptyOutDir: true,
    modulePreload: false,
    target: 'es2022',
    cssTarget: ['chrome123', 'edge123', 'firefox120', 'safari17.5'],
    reportCompressedSize: false,
    rollupOptions: { input: `${root}phone/index.html` },
  },
});

// Checks on what the hub will serve: the port placeholder it fills in, one script and one style it can hash, and no
// reference to anything but its own manifest and icon.
const html = readFileSync(out, 'utf8');
const problems = [];
if ((html.match(/<meta name="elicitly-hub-port" content="0"\s*\/?>/g)?.length ?? 0) !== 1) problems.push('expected one <meta name="elicitly-hub-port" content="0"> (the hub puts its port in)');
const markup = html.replace(/(<script\b[^>]*>)[\s\S]*?(<\/script)/gi, '$1$2').replace(/(<style\b[^>]*>)[\s\S]*?(<\/style)/gi, '$1$2');
for (const m of markup.matchAll(/<[a-z][^>]*\s(src|href|srcset|action|poster|data|formaction)\s*=\s*"([^"]*)"/gi)) {
  if (!SAME_DIR.has(m[2])) problems.push(`an element refers to something outside the file: ${m[0].slice(0, 80)}`);
}
if (/\sstyle\s*=/i.test(markup)) problems.push('an inline style attribute (the CSP allows only the hashed <style>)');
if (/@import|url\(\s*['"]?(?!data:)[a-z]+:/i.test(html.match(/<style[^>]*>([\s\S]*?)<\/style>/i)?.[1] ?? '')) problems.push('the styles load something');
const scripts = html.match(/<script\b/gi)?.length ?? 0;
const scriptEnds = html.match(/<\/script/gi)?.length ?? 0;
if (scripts !== 1 || scriptEnds !== 1) problems.push(`expected one inline script with one end tag, found ${scripts} <script and ${scriptEnds} </script`);
const styles = html.match(/<style\b/gi)?.length ?? 0;
const styleEnds = html.match(/<\/style/gi)?.length ?? 0;
if (styles !== 1 || styleEnds !== 1) problems.push(`expected one inline style with one end tag, found ${styles} <style and ${styleEnds} </style`);
if (/<!--/.test(html.match(/<script[^>]*>([\s\S]*?)<\/script>/i)?.[1] ?? '')) problems.push('<!-- inside the inlined script');
if (problems.length) throw new Error(`dist/phone/phone.html:\n  ${problems.join('\n  ')}`);

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
function iconPng(size) {
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
for (const size of [192, 512]) writeFileSync(`${outDir}/icon-${size}.png`, iconPng(size));

const raw = Buffer.byteLength(html);
const gz = gzipSync(html, { level: 9 }).length;
// stderr: this runs in `prepare`, and `npm pack --json` must print only its JSON on stdout.
console.error(`dist/phone/phone.html: ${raw.toLocaleString('en')} B raw, ${gz.toLocaleString('en')} B gzip (${Math.round(performance.now() - started)} ms)`);

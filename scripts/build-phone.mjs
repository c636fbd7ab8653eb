// Builds the phone reviewer page the hub serves at /phone/ (phone/) into ONE self-contained file, dist/phone/phone.html:
// one inline script and one inline style, nothing loaded from anywhere else (the hub serves it with a CSP that allows
// exactly the hashes of those two), plus the two icons its web app manifest names and its service worker, worker.js
// (phone/worker/: the pushed notifications and their Approve / Deny).
// The page runs in a phone's browser on the hub's origin: no extension APIs, nothing of the extension (what the two share
// is kit/, the hub client included), no server code; its own IndexedDB holds only its key.
import { readFileSync, writeFileSync } from 'node:fs';
import { build } from 'vite';
import { leanZod } from './lean-zod.mjs';
import { iconPng } from './phone-icons.mjs';
import { buildSingleFile, reportSize, root, singleFileProblems } from './single-file-build.mjs';

const started = performance.now();
const html = await buildSingleFile({ folder: 'phone', file: 'phone.html', what: 'the phone page' });

// Checks on what the hub will serve: the port placeholder it fills in, one script and one style it can hash, and no
// reference to anything but its own manifest and icon.
const problems = singleFileProblems(html, { allowedRefs: new Set(['manifest.webmanifest', 'icon-192.png']), styles: 'exactly one' });
if ((html.match(/<meta name="elicitly-hub-port" content="0"\s*\/?>/g)?.length ?? 0) !== 1) problems.push('expected one <meta name="elicitly-hub-port" content="0"> (the hub puts its port in)');
const markup = html.replace(/(<script\b[^>]*>)[\s\S]*?(<\/script)/gi, '$1$2').replace(/(<style\b[^>]*>)[\s\S]*?(<\/style)/gi, '$1$2');
if (/\sstyle\s*=/i.test(markup)) problems.push('an inline style attribute (the CSP allows only the hashed <style>)');
if (problems.length) throw new Error(`dist/phone/phone.html:\n  ${problems.join('\n  ')}`);

// The service worker (phone/worker/): one classic script the hub serves at /phone/worker.js, beside the page.
const workerStarted = performance.now();
const { version } = JSON.parse(readFileSync(`${root}package.json`, 'utf8'));
await build({
  configFile: false,
  root: `${root}phone/worker`,
  logLevel: 'warn',
  mode: 'production',
  define: { __ELICITLY_VERSION__: JSON.stringify(version) },
  plugins: [leanZod({ root: root.replaceAll('\\', '/') })],
  build: {
    outDir: `${root}dist/phone`,
    emptyOutDir: false,
    target: 'es2022',
    reportCompressedSize: false,
    lib: { entry: `${root}phone/worker/push-worker.ts`, formats: ['iife'], name: 'elicitlyPushWorker', fileName: () => 'worker.js' },
  },
});
const worker = readFileSync(`${root}dist/phone/worker.js`, 'utf8');
if (/\bimportScripts\s*\(|\beval\s*\(|new Function\s*\(/.test(worker.replace(/"[^"]*"|'[^']*'/g, ''))) throw new Error('dist/phone/worker.js: loads or evaluates code (its CSP allows neither)');
reportSize('dist/phone/worker.js', worker, workerStarted);

for (const size of [192, 512]) writeFileSync(`${root}dist/phone/icon-${size}.png`, iconPng(size));
reportSize('dist/phone/phone.html', html, started);

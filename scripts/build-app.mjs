// Builds the review shown inside the chat (MCP App, app/) into ONE self-contained file, dist/app/review.html: script
// and styles inlined, nothing loaded from anywhere (its CSP allows no outside domain). The server embeds its text.
import { Buffer } from 'node:buffer';
import { readFileSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import preact from '@preact/preset-vite';
import { build } from 'vite';
import { viteSingleFile } from 'vite-plugin-singlefile';

const root = fileURLToPath(new URL('..', import.meta.url));
const outDir = `${root}dist/app`;
const out = `${outDir}/review.html`;
const { version } = JSON.parse(readFileSync(`${root}package.json`, 'utf8'));

// The view runs in an opaque-origin frame: no IndexedDB, no extension APIs. Nothing of the kind may be bundled.
const FORBIDDEN = ['node_modules/dexie/', 'node_modules/wxt/', 'server/', 'entrypoints/', 'extension/background/', 'extension/hub/', 'extension/db/database.ts'];
const guard = {
  name: 'elicitly:app-guard',
  load(id) {
    const path = id.replaceAll('\\', '/');
    const hit = FORBIDDEN.find((f) => path.startsWith(`${root.replaceAll('\\', '/')}${f}`));
    if (hit) this.error(`the app must not bundle ${id} (${hit})`);
    return null;
  },
};

const started = performance.now();
rmSync(outDir, { recursive: true, force: true });
await build({
  configFile: false,
  root: `${root}app`,
  logLevel: 'warn',
  mode: 'production',
  define: { __ELICITLY_VERSION__: JSON.stringify(version) },
  plugins: [guard, preact({ prerender: { enabled: false } }), viteSingleFile({ removeViteModuleLoader: true, outputFileName: 'review.html' })],
  build: {
    outDir,
    emptyOutDir: true,
    modulePreload: false,
    target: 'es2022',
    // Browsers with CSS light-dark() (app.css): an older target makes the minifier rewrite it into a polyfill that
    // follows only stylesheet color-scheme, not the one the host's theme sets on <html>.
    cssTarget: ['chrome123', 'edge123', 'firefox120', 'safari17.5'],
    reportCompressedSize: false,
    rollupOptions: { input: `${root}app/index.html` },
  },
});

// Checks on what a host will embed: one file, nothing it would fetch, no early end to the inlined script or style.
const html = readFileSync(out, 'utf8');
const problems = [];
if (!/^<!doctype html>\s*<html[^>]*>\s*<head>\s*<meta name="elicitly-csp" content="default-src 'none';/i.test(html)) problems.push('the view\'s policy (<meta name="elicitly-csp">, which app/own-csp.ts puts in force) is not the first thing in <head>');
// The markup without the inlined code: an element that would load something (the code builds its DOM with the DOM API).
const markup = html.replace(/(<script\b[^>]*>)[\s\S]*?(<\/script)/gi, '$1$2').replace(/(<style\b[^>]*>)[\s\S]*?(<\/style)/gi, '$1$2');
for (const m of markup.matchAll(/<[a-z][^>]*\s(src|href|srcset|action|poster|data|formaction)\s*=/gi)) problems.push(`an element refers to something outside the file: ${m[0].slice(0, 80)}`);
if (/@import|url\(\s*['"]?(?!data:)[a-z]+:/i.test(html.match(/<style[^>]*>([\s\S]*?)<\/style>/i)?.[1] ?? '')) problems.push('the styles load something');
const scripts = html.match(/<script\b/gi)?.length ?? 0;
const scriptEnds = html.match(/<\/script/gi)?.length ?? 0;
if (scripts !== 1 || scriptEnds !== 1) problems.push(`expected one inline script with one end tag, found ${scripts} <script and ${scriptEnds} </script`);
if ((html.match(/<\/style/gi)?.length ?? 0) !== (html.match(/<style\b/gi)?.length ?? 0)) problems.push('a </style inside the inlined styles');
if (/<!--/.test(html.match(/<script[^>]*>([\s\S]*?)<\/script>/i)?.[1] ?? '')) problems.push('<!-- inside the inlined script');
if (problems.length) throw new Error(`dist/app/review.html:\n  ${problems.join('\n  ')}`);

const raw = Buffer.byteLength(html);
const gz = gzipSync(html, { level: 9 }).length;
// stderr: this runs in `prepare`, and `npm pack --json` must print only its JSON on stdout.
console.error(`dist/app/review.html: ${raw.toLocaleString('en')} B raw, ${gz.toLocaleString('en')} B gzip (${Math.round(performance.now() - started)} ms)`);

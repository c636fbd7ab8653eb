// What the chat's review (scripts/build-app.mjs) and the phone page (scripts/build-phone.mjs) share: a Preact entry
// built by vite into ONE self-contained HTML file, with a guard against bundling what cannot run there, zod without
// what neither page runs (lean-zod.mjs), and the checks that nothing in the file is fetched from elsewhere and its one
// script and style cannot end early.
import { Buffer } from 'node:buffer';
import { readFileSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import preact from '@preact/preset-vite';
import { build } from 'vite';
import { viteSingleFile } from 'vite-plugin-singlefile';
import { leanZod } from './lean-zod.mjs';

export const root = fileURLToPath(new URL('..', import.meta.url));

/** Neither page has the extension's database or APIs, or a Node process: none of these may be bundled into one. */
const NEVER = ['node_modules/dexie/', 'node_modules/wxt/', 'server/', 'entrypoints/', 'extension/'];

/**
 * Builds `<root>/<folder>/index.html` into `dist/<folder>/<file>` and returns its text. `forbidden` adds to NEVER;
 * `what` names the page in a refusal.
 */
export async function buildSingleFile({ folder, file, what, forbidden = [] }) {
  const outDir = `${root}dist/${folder}`;
  const { version } = JSON.parse(readFileSync(`${root}package.json`, 'utf8'));
  const refused = [...NEVER, ...forbidden];
  const guard = {
    name: `elicitly:${folder}-guard`,
    load(id) {
      const path = id.replaceAll('\\', '/');
      const hit = refused.find((f) => path.startsWith(`${root.replaceAll('\\', '/')}${f}`));
      if (hit) this.error(`${what} must not bundle ${id} (${hit})`);
      return null;
    },
  };
  rmSync(outDir, { recursive: true, force: true });
  // The page is the same bytes whoever builds it: vite and Preact's preset read NODE_ENV, and `npm pack` run under a test
  // runner (NODE_ENV=test) built a bigger page, with development code, than `npm run build` did.
  process.env.NODE_ENV = 'production';
  await build({
    configFile: false,
    root: `${root}${folder}`,
    logLevel: 'warn',
    mode: 'production',
    define: { __ELICITLY_VERSION__: JSON.stringify(version) },
    plugins: [guard, leanZod({ root: root.replaceAll('\\', '/') }), preact({ prerender: { enabled: false } }), viteSingleFile({ removeViteModuleLoader: true, outputFileName: file })],
    build: {
      outDir,
      emptyOutDir: true,
      modulePreload: false,
      target: 'es2022',
      // Browsers with CSS light-dark(): an older target makes the minifier rewrite it into a polyfill that follows only
      // stylesheet color-scheme, not the one a host's theme sets on <html>.
      cssTarget: ['chrome123', 'edge123', 'firefox120', 'safari17.5'],
      reportCompressedSize: false,
      rollupOptions: { input: `${root}${folder}/index.html` },
    },
  });
  return readFileSync(`${outDir}/${file}`, 'utf8');
}

/**
 * What would make the file load something, or let its inlined code end early: an element that refers to anything but
 * `allowedRefs`, styles that import or load a URL, more than one script (`styles: 'exactly one'`: one style), a style
 * or script end tag inside the inlined code, `<!--` inside the script.
 */
export function singleFileProblems(html, { allowedRefs = new Set(), styles = 'any' } = {}) {
  const problems = [];
  // The markup without the inlined code (the code builds its DOM with the DOM API).
  const markup = html.replace(/(<script\b[^>]*>)[\s\S]*?(<\/script)/gi, '$1$2').replace(/(<style\b[^>]*>)[\s\S]*?(<\/style)/gi, '$1$2');
  for (const m of markup.matchAll(/<[a-z][^>]*\s(src|href|srcset|action|poster|data|formaction)\s*=\s*("([^"]*)")?/gi)) {
    if (!allowedRefs.has(m[3] ?? '')) problems.push(`an element refers to something outside the file: ${m[0].slice(0, 80)}`);
  }
  if (/@import|url\(\s*['"]?(?!data:)[a-z]+:/i.test(html.match(/<style[^>]*>([\s\S]*?)<\/style>/i)?.[1] ?? '')) problems.push('the styles load something');
  const count = (pattern) => html.match(pattern)?.length ?? 0;
  if (count(/<script\b/gi) !== 1 || count(/<\/script/gi) !== 1) problems.push(`expected one inline script with one end tag, found ${count(/<script\b/gi)} <script and ${count(/<\/script/gi)} </script`);
  const [open, close] = [count(/<style\b/gi), count(/<\/style/gi)];
  if (open !== close || (styles === 'exactly one' && open !== 1)) problems.push(`expected ${styles === 'exactly one' ? 'one inline style' : 'each inline style'} with its end tag, found ${open} <style and ${close} </style`);
  if (/<!--/.test(html.match(/<script[^>]*>([\s\S]*?)<\/script>/i)?.[1] ?? '')) problems.push('<!-- inside the inlined script');
  return problems;
}

/** One stderr line (the build runs in `prepare`, and `npm pack --json` must print only its JSON on stdout). */
export function reportSize(path, html, started) {
  const raw = Buffer.byteLength(html);
  const gz = gzipSync(html, { level: 9 }).length;
  console.error(`${path}: ${raw.toLocaleString('en')} B raw, ${gz.toLocaleString('en')} B gzip (${Math.round(performance.now() - started)} ms)`);
}

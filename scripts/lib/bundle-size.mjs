// What a page costs to load, and the verdict against its budget: the files an HTML page needs before it can run, each
// with its raw and gzip -9 size. The bench (bench/extension.mjs) reports them; the build (scripts/check-budgets.mjs)
// fails past the budget.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';

/** gzip -9 bytes each: the popup of either built extension, and the app's single HTML file. */
export const BUDGETS = { popup: 60 * 1024, app: 60 * 1024 };

/** Raw and gzip -9 bytes of some contents. */
export function sizeOf(bytes) {
  return { raw: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length };
}

/** One file that is the whole page (the app's review.html inlines everything), as a bundle of one. */
export function fileBundle(dir, file) {
  return [{ file, ...sizeOf(readFileSync(join(dir, file))) }];
}

/**
 * Every file `page` (an HTML file in `dir`) loads before it can run: its scripts, stylesheets, modulepreloads and their
 * static imports, the HTML itself not counted. Dynamic `import()`s are not followed: those load on first use. Paths are
 * relative to `dir`.
 */
export function pageBundle(dir, page) {
  const root = resolve(dir);
  const html = readFileSync(join(root, page), 'utf8');
  const refs = [];
  for (const tag of html.match(/<(script|link)\b[^>]*>/gi) ?? []) {
    const isLink = /^<link/i.test(tag);
    if (isLink && !/\brel\s*=\s*["']?(stylesheet|modulepreload)\b/i.test(tag)) continue;
    const url = (isLink ? /\bhref\s*=\s*["']([^"']+)["']/i : /\bsrc\s*=\s*["']([^"']+)["']/i).exec(tag)?.[1];
    if (url) refs.push([url, dirname(join(root, page))]);
  }
  const files = new Map();
  const locate = (url, from) => {
    if (/^[a-z][\w+.-]*:/i.test(url)) return undefined; // absolute URLs (none expected) are not part of the package
    const path = url.startsWith('/') ? join(root, url) : resolve(from, url);
    return existsSync(path) ? path : undefined;
  };
  const visit = (url, from) => {
    const path = locate(url.split(/[?#]/)[0], from);
    if (!path || files.has(path)) return;
    const bytes = readFileSync(path);
    files.set(path, sizeOf(bytes));
    if (!/\.m?js$/.test(path)) return;
    const code = bytes.toString('utf8');
    const imports = /(?:^|[\s;})])(?:import|export)\s*(?:[\w$*{}\s,]*?\s*from\s*)?["']([./][^"'\s]*\.m?js)["']/g;
    for (const m of code.matchAll(imports)) visit(m[1], dirname(path));
  };
  for (const [url, from] of refs) visit(url, from);
  return [...files].map(([path, size]) => ({ file: relative(root, path), ...size }));
}

/** The popup of one built extension (`.output/chrome-mv3`, `.output/firefox-mv2`). */
export function popupBundle(extensionDir) {
  return pageBundle(extensionDir, 'popup.html');
}

const kb = (bytes) => `${(bytes / 1024).toFixed(1)} KB`;
// An excess under a kilobyte in bytes: "0.0 KB over" would read as no excess at all.
const excess = (bytes) => (bytes < 1024 ? `${bytes} B` : kb(bytes));

/**
 * The verdict on measured bundles (`{ name, files: [{ file, raw, gzip }], budget }`, bytes): one line each, its gzip
 * total against its budget, and for one over budget by how much and its largest files.
 */
export function judgeBudgets(bundles) {
  const lines = bundles.map(({ name, files, budget }) => {
    const gzip = files.reduce((n, f) => n + f.gzip, 0);
    const raw = files.reduce((n, f) => n + f.raw, 0);
    const what = `${files.length} file${files.length === 1 ? '' : 's'}, ${kb(raw)} raw`;
    if (gzip <= budget) return { over: false, text: `ok: ${name} ${kb(gzip)} gzip -9, budget ${kb(budget)} (${what})` };
    const largest = [...files].sort((a, b) => b.gzip - a.gzip).slice(0, 5).map((f) => `${f.file} ${kb(f.gzip)}`);
    return { over: true, text: `OVER BUDGET: ${name} ${kb(gzip)} gzip -9, budget ${kb(budget)}: ${excess(gzip - budget)} over (${what}; largest: ${largest.join(', ')})` };
  });
  return { ok: lines.every((l) => !l.over), lines: lines.map((l) => l.text) };
}

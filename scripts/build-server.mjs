// Bundles the stdio server into one file: a host spawns it for every session, and one file starts ~25% faster
// than resolving the SDK's and zod's module graphs from node_modules on each start (see bench/cold-start.mjs).
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { recordHandshake } from './record-handshake.mjs';

// Chunk names carry content hashes: without a clean directory every build would leave the previous ones behind.
rmSync('dist/server', { recursive: true, force: true });

// What only an approval call needs (the hub, the store, LiquidJS) is split into chunks loaded on first use: a host
// spawns a server per session and most never make one, so it is memory and start-up time saved each time. Each tool's
// definition is a chunk of its own too (server/mcp/tools/registry.ts), and `tools/list` needs none of them: the listing
// is computed here, once, from the definitions (server/mcp/tools/tool-listing.ts), and the bundle carries its JSON.
// Bundled CommonJS dependencies still call require() for Node built-ins.
const REQUIRE = "import { createRequire as __elicitlyRequire } from 'node:module';\nconst require = __elicitlyRequire(import.meta.url);";

const listing = await toolListingModule();

await build({
  // `main.js` is server/start.ts, the bin: it turns the compile cache on, then imports server/main.ts (`server.js`).
  // The template renderer runs in a worker thread (server/approvals/render-template.ts), so it is an entry of its own,
  // written among the chunks: beside the chunk that starts it, and loaded only by it.
  entryPoints: [
    { in: 'server/start.ts', out: 'main' },
    { in: 'server/main.ts', out: 'server' },
    { in: 'server/approvals/render-worker.ts', out: 'chunks/render-worker' },
  ],
  outdir: 'dist/server',
  entryNames: '[dir]/[name]',
  chunkNames: 'chunks/[name]-[hash]',
  splitting: true,
  bundle: true,
  platform: 'node',
  target: 'node20.12',
  format: 'esm',
  minifySyntax: true,
  minifyWhitespace: true,
  legalComments: 'linked',
  banner: { js: `#!/usr/bin/env node\n${REQUIRE}` },
  // ws loads these optional native add-ons in a try/catch; without them it uses its JavaScript fallbacks.
  external: ['bufferutil', 'utf-8-validate'],
  // The SDK's Node shim exports Ajv as its default validator; the server passes its own (server/mcp/sdk-node-shims.ts).
  alias: { '@modelcontextprotocol/server/_shims': './server/mcp/sdk-node-shims.ts' },
  plugins: [precomputed('tool-listing', listing)],
  logLevel: 'warning',
});

/**
 * The value of server/mcp/tools/tool-listing.ts, computed by running that module (bundled to a temporary file) and
 * written as a module of plain JSON: what the bundle imports in its place.
 */
async function toolListingModule() {
  const dir = mkdtempSync(join(tmpdir(), 'elicitly-listing-'));
  try {
    const file = join(dir, 'tool-listing.mjs');
    await build({
      entryPoints: ['server/mcp/tools/tool-listing.ts'],
      outfile: file,
      bundle: true,
      platform: 'node',
      format: 'esm',
      banner: { js: REQUIRE },
      external: ['bufferutil', 'utf-8-validate'],
      logLevel: 'warning',
    });
    const { TOOL_LISTINGS } = await import(pathToFileURL(file).href);
    return `export const TOOL_LISTINGS = ${JSON.stringify(TOOL_LISTINGS)};\n`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Serves `contents` for the module named `name`.ts, whichever file imports it. */
function precomputed(name, contents) {
  const filter = new RegExp(`[\\\\/]${name}\\.js$`);
  return {
    name: `precomputed-${name}`,
    setup(b) {
      b.onResolve({ filter }, (args) => ({ path: join(args.resolveDir, `${name}.ts`), namespace: 'precomputed' }));
      b.onLoad({ filter: /.*/, namespace: 'precomputed' }, () => ({ contents, loader: 'js' }));
    },
  };
}

// The bundled dependencies' licence comments: esbuild writes them beside whichever chunk holds the code (a content hash
// that changes between builds); the package keeps them in one file of a fixed name, beside the bin.
const legal = readdirSync('dist/server', { recursive: true }).filter((f) => f.endsWith('.LEGAL.txt')).sort();
const notices = legal.map((f) => readFileSync(join('dist/server', f), 'utf8').trim()).filter(Boolean);
for (const f of legal) rmSync(join('dist/server', f));
if (notices.length) writeFileSync('dist/server/main.js.LEGAL.txt', `${notices.join('\n\n')}\n`);

// The review shown inside the chat (MCP App) ships beside the bundle; main.ts reads it when a host asks for it.
if (!existsSync('dist/app/review.html')) throw new Error('dist/app/review.html is missing: run node scripts/build-app.mjs first (npm run build:server does)');
copyFileSync('dist/app/review.html', 'dist/server/review-app.html');

// The phone reviewer page and its icons ship beside the bundle too; the hub serves them at /phone/ while remote is on.
const PHONE_FILES = ['phone.html', 'worker.js', 'icon-192.png', 'icon-512.png'];
const missing = PHONE_FILES.filter((f) => !existsSync(`dist/phone/${f}`));
if (missing.length) throw new Error(`dist/phone/${missing.join(', ')} missing: run node scripts/build-phone.mjs first (npm run build:server does)`);
mkdirSync('dist/server/phone', { recursive: true });
for (const file of PHONE_FILES) copyFileSync(`dist/phone/${file}`, `dist/server/phone/${file}`);

// The SDK's answers to the handshake, recorded from the bundle just built: the bin sends them before it loads the SDK.
await recordHandshake('dist/server/main.js', 'dist/server/handshake');

// Bundles the stdio server into one file: a host spawns it for every session, and one file starts ~25% faster
// than resolving the SDK's and zod's module graphs from node_modules on each start (see bench/cold-start.mjs).
import { copyFileSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { build } from 'esbuild';

// Chunk names carry content hashes: without a clean directory every build would leave the previous ones behind.
rmSync('dist/server', { recursive: true, force: true });

// What only an approval call needs (the hub, the store, LiquidJS) is split into chunks loaded on first use: a host
// spawns a server per session and most never make one, so it is memory and start-up time saved each time.
await build({
  // The template renderer runs in a worker thread (server/approvals/render-template.ts), so it is an entry of its own,
  // written among the chunks: beside the chunk that starts it, and loaded only by it.
  entryPoints: ['server/main.ts', { in: 'server/approvals/render-worker.ts', out: 'chunks/render-worker' }],
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
  // Bundled CommonJS dependencies still call require() for Node built-ins.
  banner: { js: "#!/usr/bin/env node\nimport { createRequire as __elicitlyRequire } from 'node:module';\nconst require = __elicitlyRequire(import.meta.url);" },
  // ws loads these optional native add-ons in a try/catch; without them it uses its JavaScript fallbacks.
  external: ['bufferutil', 'utf-8-validate'],
  logLevel: 'warning',
});

// The review shown inside the chat (MCP App) ships beside the bundle; main.ts reads it when a host asks for it.
if (!existsSync('dist/app/review.html')) throw new Error('dist/app/review.html is missing: run node scripts/build-app.mjs first (npm run build:server does)');
copyFileSync('dist/app/review.html', 'dist/server/review-app.html');

// The phone reviewer page and its icons ship beside the bundle too; the hub serves them at /phone/ while remote is on.
const PHONE_FILES = ['phone.html', 'icon-192.png', 'icon-512.png'];
const missing = PHONE_FILES.filter((f) => !existsSync(`dist/phone/${f}`));
if (missing.length) throw new Error(`dist/phone/${missing.join(', ')} missing: run node scripts/build-phone.mjs first (npm run build:server does)`);
mkdirSync('dist/server/phone', { recursive: true });
for (const file of PHONE_FILES) copyFileSync(`dist/phone/${file}`, `dist/server/phone/${file}`);

// Bundles the stdio server into one file: a host spawns it for every session, and one file starts ~25% faster
// than resolving the SDK's and zod's module graphs from node_modules on each start (see bench/cold-start.mjs).
import { build } from 'esbuild';

await build({
  entryPoints: ['server/main.ts'],
  outfile: 'dist/server/main.js',
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

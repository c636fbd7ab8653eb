import { fileURLToPath } from 'node:url';
import preact from '@preact/preset-vite';
import { defineConfig } from 'wxt';
import { leanZod } from './scripts/lean-zod.mjs';
import { EXTENSION_PUBLIC_KEY, FIREFOX_EXTENSION_ID } from './shared/extension-id.js';

// The companion extension: Chrome MV3 and Firefox (WXT's default MV2, whose persistent background page keeps the
// socket open; an MV3 Firefox background is not kept alive by a socket).
//
// `wxt zip --mode store` (npm run zip) makes the Chrome Web Store build: the store refuses a manifest with `key` and
// signs the item with its own, so that build has the store's id and pairs like any other install (docs/security.md).
// ELICITLY_EXTENSION_OUT moves every build and zip elsewhere, so a test can zip without touching the build the
// browser tests load.
export default defineConfig({
  srcDir: '.',
  entrypointsDir: 'entrypoints',
  outDir: process.env.ELICITLY_EXTENSION_OUT || '.output',
  imports: false,
  vite: () => ({
    // Classic zod without what no page of the extension runs (JSON Schema generation, the eval-compiled object parser
    // its CSP forbids anyway, …; scripts/lean-zod.mjs, as for the single-file pages).
    plugins: [leanZod({ root: fileURLToPath(new URL('./', import.meta.url)).replaceAll('\\', '/') }), preact()],
    // Every browser this supports (Chrome 116, Firefox 115) preloads modules itself: no polyfill in the popup's bundle.
    build: { modulePreload: { polyfill: false } },
    resolve: {
      // Dexie's ES2018 build, not its wrapper around the ES5 one: every browser this supports runs it, and it is ~9 KB
      // smaller (the popup's bundle has a budget).
      alias: [{ find: /^dexie$/, replacement: fileURLToPath(new URL('./node_modules/dexie/dist/modern/dexie.mjs', import.meta.url)) }],
    },
  }),
  zip: {
    // The sources AMO reviewers rebuild the Firefox zip from (`npm ci && npx wxt zip -b firefox`): no build output,
    // no tests, no release artifacts.
    excludeSources: ['dist/**', 'test/**', 'bench/**', 'test-results/**', 'demo-output/**', '*.mcpb', '*.tgz', '*.zip'],
  },
  manifest: ({ browser, mode }) => ({
    name: 'Elicitly Companion',
    description: 'Review and decide what your AI agents ask you.',
    // alarms: the 30 s reconnect safety net; notifications: one per new request; unlimitedStorage: keeps the
    // history from being evicted under storage pressure.
    permissions: ['alarms', 'notifications', 'unlimitedStorage'],
    action: { default_title: 'Elicitly Companion' },
    ...(browser === 'firefox'
      ? {
          browser_specific_settings: {
            // Nothing leaves the machine: the only connection is to the hub on 127.0.0.1.
            gecko: { id: FIREFOX_EXTENSION_ID, strict_min_version: '115.0', data_collection_permissions: { required: ['none'] } },
          },
          // Asked for only when the person adds a passkey: Firefox has no WebAuthn RP ID of its own for an extension, and
          // borrows this name, which nothing else uses (docs/passkeys-research.md). Firefox 150 and later.
          optional_permissions: ['http://elicitly.localhost/*'],
        }
      : {
          minimum_chrome_version: '116',
          // Pins the extension id (and so the origin the hub trusts first) for unpacked installs on every machine.
          ...(mode === 'store' ? {} : { key: EXTENSION_PUBLIC_KEY }),
        }),
  }),
});

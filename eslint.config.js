import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const nodeBuiltins = { group: ['node:*'], message: 'shared/ and entrypoints/ run in the browser too: no Node built-ins.' };

const extensionBrowserOnly = { group: ['**/server/**', 'ws', '@modelcontextprotocol/*'], message: 'the extension is browser only: no server code.' };

const nodeOnly = { group: ['**/entrypoints/**', '**/extension/**', 'wxt', 'wxt/*', 'dexie', 'preact', 'preact/*'], message: 'server/ is Node only: no extension code.' };

function serverLayers(layers) {
  return layers.map(({ folder, files, ignores, forbidden }) => ({
    files: files ?? [`${folder}/**`],
    ...(ignores ? { ignores } : {}),
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          nodeOnly,
          ...forbidden.map((name) => ({
            group: [`**/server/${name}/**`, ...(folder === 'server' ? [`./${name}/**`] : [`../${name}/**`, `../../${name}/**`])],
            message: `${folder}/ must not import server/${name}/: imports run main → mcp → approvals → store and main → hub → remote → approvals.`,
          })),
        ],
      }],
    },
  }));
}

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', '.output/', '.wxt/', 'test-results/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', ignoreRestSiblings: true }],
    },
  },
  {
    // shared/ is the common ground: it may import neither side, nor anything platform-bound.
    files: ['shared/**'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          { group: ['**/server/**', '**/entrypoints/**', '**/extension/**'], message: 'shared/ imports neither the server nor the extension.' },
          nodeBuiltins,
          { group: ['ws', '@modelcontextprotocol/*', 'wxt', 'wxt/*', 'dexie', 'preact', 'preact/*'], message: 'shared/ holds pure code only.' },
        ],
      }],
    },
  },
  // server/ imports run one way: main.ts → mcp/ → approvals/ → store/, and main.ts → hub/ → approvals/. The files at
  // server/'s top level (config, log, state dir) are leaves every folder may use.
  ...serverLayers([
    { folder: 'server/store', forbidden: ['approvals', 'hub', 'mcp', 'hook'] },
    { folder: 'server/approvals', forbidden: ['hub', 'mcp', 'hook'] },
    // The person's passkeys: kept by the engine, in a file of the store's kind; the command that lists them is the hub's.
    { folder: 'server/passkeys', forbidden: ['approvals', 'hub', 'mcp', 'hook'] },
    { folder: 'server/hub', forbidden: ['mcp', 'store', 'hook'] },
    // The phone reviewer's page, notifications and commands: the hub serves and wires them (main → hub → remote).
    { folder: 'server/remote', forbidden: ['hub', 'mcp', 'store', 'hook'] },
    { folder: 'server/mcp', forbidden: ['hub', 'store', 'hook'] },
    // The hook bridge is a client of the hub like any relay: main → hook → hub. It never opens the store itself.
    { folder: 'server/hook', forbidden: ['mcp', 'store', 'approvals'] },
    { folder: 'server', files: ['server/*.ts'], ignores: ['server/main.ts', 'server/serve-mcp.ts'], forbidden: ['approvals', 'hub', 'mcp', 'store'] },
    // The composition: the entry point, and the MCP server it serves on stdio (the tests serve it in process too).
    { folder: 'server', files: ['server/main.ts', 'server/serve-mcp.ts'], forbidden: [] },
  ]),
  {
    files: ['entrypoints/**', 'extension/**'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [extensionBrowserOnly, nodeBuiltins],
        paths: [{ name: 'wxt/browser', message: 'import the typed `browser` from extension/browser.ts (wxt/browser is untyped here).' }],
      }],
    },
  },
  {
    // WXT's model: only the entrypoints touch the extension APIs; the modules in extension/ are handed what they need.
    files: ['extension/**'],
    ignores: ['extension/browser.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          extensionBrowserOnly,
          nodeBuiltins,
          { group: ['wxt/browser', '@wxt-dev/*'], message: 'only the entrypoints use the extension APIs: extension/ modules are handed what they need.' },
          { regex: '(^|/)browser\\.js$', message: 'only the entrypoints use the extension APIs: extension/ modules are handed what they need.' },
        ],
      }],
    },
  },
  {
    files: ['extension/browser.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [extensionBrowserOnly, nodeBuiltins] }] },
  },
  {
    // extension/core/ is the extension's pure code (agent text, the grid, the editors' rules): table-tested in Node, so
    // no browser APIs, no storage, no components, and nothing else of the extension.
    files: ['extension/core/**'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          { group: ['**/server/**', 'ws', '@modelcontextprotocol/*'], message: 'the extension is browser only: no server code.' },
          nodeBuiltins,
          { group: ['wxt', 'wxt/*', '@wxt-dev/*', 'dexie', 'preact', 'preact/*'], message: 'extension/core/ is pure: no browser APIs, no Dexie, no Preact.' },
          { regex: '^\\.\\./(?!\\.\\./shared/)', message: 'extension/core/ imports only core/ and shared/: nothing else of the extension (its browser, storage or components).' },
        ],
      }],
      'no-restricted-globals': ['error', ...['browser', 'chrome', 'indexedDB'].map((name) => ({ name, message: 'extension/core/ is pure: the extension APIs and storage are the entrypoints\' and db/\'s.' }))],
    },
  },
  {
    // The review inside the chat (MCP App): browser only like the extension, and without its storage or browser APIs
    // (an opaque-origin frame); it talks to the server through the host, speaking its side of the MCP Apps protocol itself
    // (app/host-connection.ts): the SDKs would bundle their zod schemas of the whole protocol into the page.
    files: ['app/**'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          { group: ['**/server/**', 'ws', '@modelcontextprotocol/*'], message: 'the app is browser only: no server code and no MCP SDK; it reaches the server through the host (app/host-connection.ts).' },
          { group: ['**/entrypoints/**', '**/extension/background/**', '**/extension/hub/**', '**/extension/db/database*', '**/extension/browser.js', 'wxt', 'wxt/*', '@wxt-dev/*', 'dexie'], message: 'the app runs in an opaque-origin frame: no extension APIs, no IndexedDB.' },
          nodeBuiltins,
        ],
      }],
    },
  },
  {
    // The phone reviewer the hub serves (phone/): browser only, no extension storage or APIs; it talks to the hub over
    // the extension's hub socket (extension/hub/), which is therefore held to the same (types from db/rows.ts and db/settings-schema.ts only).
    files: ['phone/**', 'extension/hub/**'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          { group: ['**/server/**', 'ws', '@modelcontextprotocol/*'], message: 'the phone page is browser only: no server code.' },
          { group: ['**/entrypoints/**', '**/extension/background/**', '**/extension/db/database*', '**/extension/browser.js', '../browser.js', 'wxt', 'wxt/*', '@wxt-dev/*', 'dexie'], message: 'the phone page has no extension APIs and not the extension\'s database (it keeps only its key, in its own IndexedDB: phone/device-key.ts).' },
          nodeBuiltins,
        ],
      }],
    },
  },
  {
    files: ['bench/**/*.mjs', 'scripts/**/*.mjs', '*.config.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', performance: 'readonly', URL: 'readonly', AbortController: 'readonly' } },
  },
);

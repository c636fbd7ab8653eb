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
    { folder: 'server', files: ['server/*.ts'], ignores: ['server/start.ts', 'server/main.ts', 'server/serve-mcp.ts'], forbidden: ['approvals', 'hub', 'mcp', 'store'] },
    // The composition: the bin (and the handshake it answers before the rest loads), the entry point, and the MCP server
    // it serves on stdio (the tests serve it in process too).
    { folder: 'server', files: ['server/start.ts', 'server/main.ts', 'server/serve-mcp.ts'], forbidden: [] },
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
    // kit/ is the reviewer kit every surface shares (the extension, the phone page, the chat's view): the one row type
    // and reducer of the hub's news, the review's components, the hub client. It is handed what it needs: no extension
    // APIs, no storage, and nothing of a surface.
    files: ['kit/**'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          { group: ['**/server/**', 'ws', '@modelcontextprotocol/*'], message: 'the kit is browser only: no server code.' },
          nodeBuiltins,
          { group: ['**/entrypoints/**', '**/extension/**', '**/phone/**', '**/app/**'], message: 'kit/ is every surface\'s: it imports none of them (a surface imports the kit).' },
          { group: ['wxt', 'wxt/*', '@wxt-dev/*', 'dexie'], message: 'kit/ has no extension APIs and no storage: the surface keeps its rows its own way.' },
        ],
      }],
      'no-restricted-globals': ['error', ...['browser', 'chrome', 'indexedDB'].map((name) => ({ name, message: 'kit/ is handed what it needs: the extension APIs and storage are the surfaces\'.' }))],
    },
  },
  {
    // kit/core/ is the pure code (agent text, the grid, the editors' rules): table-tested in Node, so no components and
    // nothing else of the kit.
    files: ['kit/core/**'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          { group: ['**/server/**', 'ws', '@modelcontextprotocol/*'], message: 'the kit is browser only: no server code.' },
          nodeBuiltins,
          { group: ['wxt', 'wxt/*', '@wxt-dev/*', 'dexie', 'preact', 'preact/*'], message: 'kit/core/ is pure: no browser APIs, no Dexie, no Preact.' },
          { regex: '^\\.\\./(?!\\.\\./shared/)', message: 'kit/core/ imports only core/ and shared/: nothing else of the kit (its components or hub client).' },
        ],
      }],
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
          { group: ['**/entrypoints/**', '**/extension/**', '**/phone/**', '**/kit/hub/**', 'wxt', 'wxt/*', '@wxt-dev/*', 'dexie'], message: 'the app runs in an opaque-origin frame: no extension, no hub socket, no IndexedDB; what it shares with the other surfaces is in kit/.' },
          nodeBuiltins,
        ],
      }],
    },
  },
  {
    // The phone reviewer the hub serves (phone/): browser only; it shares the kit (kit/) with the extension, and takes
    // nothing of the extension itself (its storage, its APIs, its views).
    files: ['phone/**'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          { group: ['**/server/**', 'ws', '@modelcontextprotocol/*'], message: 'the phone page is browser only: no server code.' },
          { group: ['**/entrypoints/**', '**/extension/**', '**/app/**', 'wxt', 'wxt/*', '@wxt-dev/*', 'dexie'], message: 'the phone page takes nothing of the extension or the chat\'s view (what they share is in kit/), and keeps no database but its key (phone/device-key.ts).' },
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

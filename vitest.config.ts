import preact from '@preact/preset-vite';
import { defineConfig } from 'vitest/config';
import { WxtVitest } from 'wxt/testing/vitest-plugin';

// Five projects: Node for the server, the hub and the real-browser end-to-end suite; the real agent hosts; a DOM (happy-dom) with WXT's fake
// browser for the extension's components and background modules; a DOM for the review inside the chat (app/); a DOM for the phone page (phone/).
export default defineConfig({
  test: {
    testTimeout: 20_000,
    hookTimeout: 30_000,
    projects: [
      {
        test: {
          name: 'node',
          include: ['test/unit/**/*.test.ts', 'test/integration/**/*.test.ts', 'test/package/**/*.test.ts', 'test/e2e/**/*.test.ts'],
          globalSetup: ['test/global-setup.ts'],
          testTimeout: 20_000,
          hookTimeout: 30_000,
        },
      },
      {
        // The real agent hosts (Claude Code, Codex) from the npm registry, pinned, driven by the project's own mock model
        // APIs (test/real-hosts/). Each test starts a host, a hub and a scripted extension: one file at a time.
        test: {
          name: 'real-hosts',
          include: ['test/real-hosts/**/*.test.ts'],
          globalSetup: ['test/global-setup.ts'],
          fileParallelism: false,
          testTimeout: 120_000,
          hookTimeout: 30_000,
        },
      },
      {
        plugins: [WxtVitest(), preact()],
        test: {
          name: 'extension',
          include: ['test/extension/**/*.test.ts', 'test/extension/**/*.test.tsx'],
          environment: 'happy-dom',
          setupFiles: ['test/extension/setup.ts'],
          testTimeout: 20_000,
        },
      },
      {
        // The review inside the chat (app/): its components in a DOM, the host connection faked.
        plugins: [preact()],
        test: {
          name: 'app',
          include: ['test/app/**/*.test.ts', 'test/app/**/*.test.tsx'],
          environment: 'happy-dom',
          setupFiles: ['test/app/setup.ts'],
          testTimeout: 20_000,
        },
      },
      {
        // The phone reviewer page (phone/): its connection on a fake socket, its views in a DOM.
        plugins: [preact()],
        test: {
          name: 'phone',
          include: ['test/phone/**/*.test.ts', 'test/phone/**/*.test.tsx'],
          environment: 'happy-dom',
          setupFiles: ['test/phone/setup.ts'],
          testTimeout: 20_000,
        },
      },
    ],
  },
});

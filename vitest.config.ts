import preact from '@preact/preset-vite';
import { defineConfig } from 'vitest/config';
import { WxtVitest } from 'wxt/testing/vitest-plugin';

// Two projects: Node for the server, the hub and the real-browser end-to-end suite; a DOM (happy-dom) with WXT's fake
// browser for the extension's components and background modules.
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
        plugins: [WxtVitest(), preact()],
        test: {
          name: 'extension',
          include: ['test/extension/**/*.test.ts', 'test/extension/**/*.test.tsx'],
          environment: 'happy-dom',
          setupFiles: ['test/extension/setup.ts'],
          testTimeout: 20_000,
        },
      },
    ],
  },
});

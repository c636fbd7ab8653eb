import preact from '@preact/preset-vite';
import { defineConfig } from 'wxt';
import { EXTENSION_PUBLIC_KEY } from './shared/extension-id.js';

// The companion extension: Chrome MV3 and Firefox (WXT's default MV2, whose persistent background page keeps the
// socket open; an MV3 Firefox background is not kept alive by a socket).
export default defineConfig({
  srcDir: '.',
  entrypointsDir: 'entrypoints',
  outDir: '.output',
  imports: false,
  vite: () => ({ plugins: [preact()] }),
  manifest: ({ browser }) => ({
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
            gecko: { id: 'companion@elicitly.dev', strict_min_version: '115.0', data_collection_permissions: { required: ['none'] } },
          },
        }
      : {
          minimum_chrome_version: '116',
          // Pins the extension id (and so the origin the hub trusts) on every machine.
          key: EXTENSION_PUBLIC_KEY,
        }),
  }),
});

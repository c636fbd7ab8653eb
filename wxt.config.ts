import { defineConfig } from 'wxt';
import { EXTENSION_PUBLIC_KEY } from './shared/extension-id.js';

// The companion extension. Its review UI arrives with the extension issue; this keeps `wxt build` honest meanwhile.
export default defineConfig({
  srcDir: '.',
  entrypointsDir: 'entrypoints',
  outDir: '.output',
  imports: false,
  manifest: {
    name: 'Elicitly Companion',
    description: 'Review and decide what your AI agents ask you.',
    minimum_chrome_version: '116',
    // Pins the extension id (and so the origin the hub trusts) on every machine.
    key: EXTENSION_PUBLIC_KEY,
  },
});

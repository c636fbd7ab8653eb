import { defineConfig } from 'wxt';

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
  },
});

import preact from '@preact/preset-vite';
import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { WxtVitest } from 'wxt/testing/vitest-plugin';

// Seven projects, every file of every project in one pool of 4 workers on a 2-core machine: most of a test's time is
// spent waiting (on child processes, sockets, timers, a browser's UI, a real host's start), so more workers than cores
// keeps both cores busy, and the longest files (the browsers', then the real hosts') start first (`LongestFirst`).
// Every suite was made safe to share the machine: each test has its own state dir and a hub port in its worker's own
// slice (test/helpers/scripted-extension.ts `freePort`, sized for these 4 workers), the zip test builds into its own
// folder, the package test packs a copy, and no browser or host profile is shared.
const WORKERS = 4;
// Inline projects inherit nothing from the root config: every project takes its bounds and pool from here.
const COMMON = { testTimeout: 20_000, hookTimeout: 30_000, maxWorkers: WORKERS } as const;

const projects: TestProjectInlineConfiguration[] = [
  { test: { name: 'unit', include: ['test/unit/**/*.test.ts'], ...COMMON } },
  { test: { name: 'integration', include: ['test/integration/**/*.test.ts'], globalSetup: ['test/global-setup.ts'], ...COMMON } },
  {
    plugins: [WxtVitest(), preact()],
    test: {
      name: 'extension',
      include: ['test/extension/**/*.test.ts', 'test/extension/**/*.test.tsx'],
      environment: 'happy-dom',
      setupFiles: ['test/extension/setup.ts'],
      ...COMMON,
    },
  },
  {
    // The review inside the chat (app/): its components in a DOM, the host connection faked.
    plugins: [preact()],
    test: { name: 'app', include: ['test/app/**/*.test.ts', 'test/app/**/*.test.tsx'], environment: 'happy-dom', setupFiles: ['test/app/setup.ts'], ...COMMON },
  },
  {
    // The phone reviewer page (phone/): its connection on a fake socket, its views in a DOM.
    plugins: [preact()],
    test: { name: 'phone', include: ['test/phone/**/*.test.ts', 'test/phone/**/*.test.tsx'], environment: 'happy-dom', setupFiles: ['test/phone/setup.ts'], ...COMMON },
  },
  {
    // The built extension in Chromium (playwright-core) and Firefox ESR (puppeteer-core); npm pack, the MCP bundle, the zips.
    test: { name: 'browser', include: ['test/e2e/**/*.test.ts', 'test/package/**/*.test.ts'], globalSetup: ['test/global-setup.ts'], ...COMMON },
  },
  {
    // The real agent hosts (Claude Code, Codex) from the npm registry, pinned, driven by the project's own mock model
    // APIs (test/real-hosts/): each test a host, a hub and a scripted extension.
    test: { name: 'real-hosts', include: ['test/real-hosts/**/*.test.ts'], globalSetup: ['test/global-setup.ts'], ...COMMON, testTimeout: 120_000 },
  },
];

/** Projects whose files take the longest, in the order their files are started; the rest follow. */
const FIRST = ['browser', 'real-hosts'];

/**
 * Vitest's own order (within a project: failed first, then by last duration, or by size on a first run), with the
 * projects in FIRST's order before the others — its default runs projects alphabetically, which put the real hosts'
 * half-minute files at the very end of the run.
 */
class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (file: TestSpecification) => {
      const at = FIRST.indexOf(file.project.name);
      return at === -1 ? FIRST.length : at;
    };
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}

export default defineConfig({ test: { projects, sequence: { sequencer: LongestFirst } } });

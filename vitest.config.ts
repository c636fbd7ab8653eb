import preact from '@preact/preset-vite';
import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';
import { WxtVitest } from 'wxt/testing/vitest-plugin';

// Three groups, run one after the other (`sequence.groupOrder`); vitest requires the projects of a group to share
// `maxWorkers`.
// 0. In parallel: the pure and DOM projects and the integration suites. Most integration time is spent waiting on
//    child processes, sockets and timers, so more workers than cores keeps both cores busy.
// 1. One file at a time: the real browsers (Chromium with playwright-core, Firefox ESR with puppeteer-core) and the
//    package suites (npm pack, the MCP bundle, the extension zips) — each takes the whole machine, and their UI waits
//    must not starve.
// 2. One file at a time: the real agent hosts (Claude Code, Codex), each test a host, a hub and a scripted extension.
// Inline projects inherit nothing from the root config: every project takes its bounds from here.
const BOUNDS = { testTimeout: 20_000, hookTimeout: 30_000 } as const;
const PARALLEL = { ...BOUNDS, sequence: { groupOrder: 0 }, maxWorkers: 3 } as const;
const SERIAL = (groupOrder: number) => ({ ...BOUNDS, sequence: { groupOrder }, maxWorkers: 1, fileParallelism: false }) as const;

const projects: TestProjectInlineConfiguration[] = [
  { test: { name: 'unit', include: ['test/unit/**/*.test.ts'], ...PARALLEL } },
  { test: { name: 'integration', include: ['test/integration/**/*.test.ts'], globalSetup: ['test/global-setup.ts'], ...PARALLEL } },
  {
    plugins: [WxtVitest(), preact()],
    test: {
      name: 'extension',
      include: ['test/extension/**/*.test.ts', 'test/extension/**/*.test.tsx'],
      environment: 'happy-dom',
      setupFiles: ['test/extension/setup.ts'],
      ...PARALLEL,
    },
  },
  {
    // The review inside the chat (app/): its components in a DOM, the host connection faked.
    plugins: [preact()],
    test: { name: 'app', include: ['test/app/**/*.test.ts', 'test/app/**/*.test.tsx'], environment: 'happy-dom', setupFiles: ['test/app/setup.ts'], ...PARALLEL },
  },
  {
    // The phone reviewer page (phone/): its connection on a fake socket, its views in a DOM.
    plugins: [preact()],
    test: { name: 'phone', include: ['test/phone/**/*.test.ts', 'test/phone/**/*.test.tsx'], environment: 'happy-dom', setupFiles: ['test/phone/setup.ts'], ...PARALLEL },
  },
  {
    test: {
      name: 'browser',
      include: ['test/e2e/**/*.test.ts', 'test/package/**/*.test.ts'],
      globalSetup: ['test/global-setup.ts'],
      ...SERIAL(1),
    },
  },
  {
    test: {
      name: 'real-hosts',
      include: ['test/real-hosts/**/*.test.ts'],
      globalSetup: ['test/global-setup.ts'],
      ...SERIAL(2),
      testTimeout: 120_000,
    },
  },
];

export default defineConfig({ test: { projects } });

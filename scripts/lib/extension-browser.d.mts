// Types for the TypeScript callers (the end-to-end tests) of extension-browser.mjs, which Node runs as is for the demo.
import type { BrowserContext, Page, Worker } from 'playwright-core';

export const UI_TIMEOUT: number;
export function usualBrowserPaths(platform?: NodeJS.Platform, env?: NodeJS.ProcessEnv): string[];
export function installHint(platform?: NodeJS.Platform): string;
export function findBrowser(options: { chrome?: string; env?: NodeJS.ProcessEnv; platform?: NodeJS.Platform }): { path: string; error?: undefined } | { error: string; path?: undefined };

export interface ExtensionBrowser {
  context: BrowserContext;
  extensionId: string;
  url: (page: string, hash?: string) => string;
  worker: () => Promise<Worker>;
  /** The tab the extension opened on install to ask for the pairing code. */
  firstRunPage: () => Promise<Page>;
  openPage: (page: string, hash?: string) => Promise<Page>;
  stopServiceWorkers: () => Promise<void>;
  close: () => Promise<void>;
}

export function launchWithExtension(options: {
  executablePath: string;
  extensionDir: string;
  headless?: boolean;
  log?: (line: string) => void;
  viewport?: { width: number; height: number };
}): Promise<ExtensionBrowser>;
export function pairingCode(serverEntry: string, env: Record<string, string>): Promise<string>;
export function openPairedInbox(browser: ExtensionBrowser, options: { port: number; code: () => Promise<string> }): Promise<Page>;
export function setHubPort(page: Page, port: number, timeout?: number): Promise<void>;
export function pairInSettings(page: Page, code: string, timeout?: number): Promise<void>;

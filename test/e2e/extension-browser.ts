import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { chromium, type BrowserContext, type Page, type Worker } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { SERVER_ENTRY } from '../helpers/mcp-harness.js';

export const CHROMIUM_PATH = process.env.CHROME_PATH ?? '/usr/bin/chromium';
export const EXTENSION_DIR = fileURLToPath(new URL('../../.output/chrome-mv3', import.meta.url));
export const INSTALL_HINT = 'sudo apt-get update && sudo apt-get install -y chromium (or set CHROME_PATH)';
/** CI sets this so a missing browser fails instead of skipping. */
export const BROWSER_REQUIRED = process.env.ELICITLY_REQUIRE_BROWSER === '1';
export const browserFound = existsSync(CHROMIUM_PATH);

/**
 * The title of a Chromium suite about `what`: it says when the suite was skipped and how to install a Chromium. When CI
 * requires a browser and none is there, a failing test stands in for the suite.
 */
export function chromiumSuite(what: string): string {
  describe.runIf(!browserFound && BROWSER_REQUIRED)(`${what}: prerequisites`, () => {
    it('has a Chromium to run the extension in (ELICITLY_REQUIRE_BROWSER=1)', () => {
      expect.fail(`no Chromium at ${CHROMIUM_PATH}; install one with: ${INSTALL_HINT}`);
    });
  });
  return browserFound ? `${what}, in headless Chromium` : `${what} — SKIPPED: no Chromium at ${CHROMIUM_PATH}; install one with: ${INSTALL_HINT}`;
}

export interface ExtensionBrowser {
  context: BrowserContext;
  extensionId: string;
  /** The tab the extension opened on install to ask for the pairing code. */
  firstRunPage: () => Promise<Page>;
  worker: () => Promise<Worker>;
  openPopup: (hash?: string) => Promise<Page>;
  stopServiceWorkers: () => Promise<void>;
  close: () => Promise<void>;
}

/** The built extension in Debian's headless Chromium, in a throwaway profile. */
export async function launchExtension(): Promise<ExtensionBrowser> {
  if (!existsSync(join(EXTENSION_DIR, 'manifest.json'))) throw new Error(`${EXTENSION_DIR} is missing: run "npm run build" (npm test does).`);
  const profile = mkdtempSync(join(tmpdir(), 'elicitly-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      '--headless=new', `--disable-extensions-except=${EXTENSION_DIR}`, `--load-extension=${EXTENSION_DIR}`, '--no-sandbox',
      '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run',
    ],
  });
  const worker = async () => context.serviceWorkers()[0] ?? context.waitForEvent('serviceworker', { timeout: 10_000 });
  const extensionId = new URL((await worker()).url()).host;
  return {
    context,
    extensionId,
    worker,
    async firstRunPage() {
      const isWelcome = (page: Page) => page.url() === `chrome-extension://${extensionId}/review.html#/welcome`;
      return context.pages().find(isWelcome) ?? context.waitForEvent('page', { predicate: isWelcome, timeout: 10_000 });
    },
    async openPopup(hash = '#/inbox') {
      const page = await context.newPage();
      await page.goto(`chrome-extension://${extensionId}/popup.html${hash}`);
      return page;
    },
    async stopServiceWorkers() {
      const page = context.pages()[0] ?? (await context.newPage());
      const cdp = await context.newCDPSession(page);
      await cdp.send('ServiceWorker.enable');
      await cdp.send('ServiceWorker.stopAllWorkers');
      await cdp.detach();
    },
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** A fresh code from the built server's own `pair` command, for the hub whose state dir `env` names (last stdout line). */
export async function pairingCode(env: Record<string, string>): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, [SERVER_ENTRY, 'pair'], { env: { ...process.env, ...env }, timeout: 15_000 });
  const code = stdout.trim().split('\n').at(-1)?.trim();
  if (!code) throw new Error(`elicitly-companion pair printed no code: ${JSON.stringify(stdout)}`);
  return code;
}

/** What a person does once: Settings → Pairing code → Pair, then the header says Connected. */
/** Settings → Hub port → Save, as a person points the extension at a hub. */
export async function setHubPort(page: Page, port: number, timeout: number): Promise<void> {
  if (!page.url().endsWith('#/settings')) await page.evaluate(() => (location.hash = '#/settings'));
  await page.getByLabel('Hub port').fill(String(port));
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByText('Saved.').waitFor({ timeout });
}

export async function pairInSettings(page: Page, code: string, timeout: number): Promise<void> {
  if (!page.url().endsWith('#/settings')) await page.evaluate(() => (location.hash = '#/settings'));
  await page.getByLabel('Pairing code').fill(code);
  await page.getByRole('button', { name: 'Pair', exact: true }).click();
  await page.locator('[data-state="connected"]').first().waitFor({ timeout });
}

import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page, type Worker } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROME_PATH ?? '/usr/bin/chromium';
export const EXTENSION_DIR = fileURLToPath(new URL('../../.output/chrome-mv3', import.meta.url));
export const INSTALL_HINT = 'sudo apt-get update && sudo apt-get install -y chromium (or set CHROME_PATH)';
/** CI sets this so a missing browser fails instead of skipping. */
export const BROWSER_REQUIRED = process.env.ELICITLY_REQUIRE_BROWSER === '1';
export const browserFound = existsSync(CHROMIUM_PATH);

export interface ExtensionBrowser {
  context: BrowserContext;
  extensionId: string;
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

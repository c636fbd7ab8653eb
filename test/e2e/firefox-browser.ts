import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import * as z from 'zod';

export const FIREFOX_PATH = process.env.FIREFOX_PATH ?? '/usr/bin/firefox-esr';
export const FIREFOX_EXTENSION_DIR = fileURLToPath(new URL('../../.output/firefox-mv2', import.meta.url));
export const FIREFOX_INSTALL_HINT = 'sudo apt-get update && sudo apt-get install -y firefox-esr (or set FIREFOX_PATH)';
export const firefoxFound = existsSync(FIREFOX_PATH);

/** Polls `check` until it returns something other than undefined; a failed check (a page mid-navigation) is retried. */
export async function until<T>(what: string, timeoutMs: number, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() >= deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${String(last)})` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const ManifestSchema = z.object({ browser_specific_settings: z.object({ gecko: z.object({ id: z.string().min(1) }) }) });

/** The gecko id the build declares: the key under which Firefox takes the fixed moz-extension:// uuid. */
function geckoId(): string {
  const manifest = join(FIREFOX_EXTENSION_DIR, 'manifest.json');
  if (!existsSync(manifest)) throw new Error(`${manifest} is missing: run "npm run build" (npm test does).`);
  return ManifestSchema.parse(JSON.parse(readFileSync(manifest, 'utf8'))).browser_specific_settings.gecko.id;
}

export interface FirefoxExtension {
  browser: Browser;
  /** `moz-extension://<uuid>`, fixed before the install. */
  origin: string;
  /** The tab the extension opened on install to ask for the pairing code. */
  firstRunPage: (timeoutMs: number) => Promise<Page>;
  /** Uncaught errors of the pages opened with openPage, from before their first load on. */
  pageErrors: string[];
  /** Opens `path` (e.g. `/popup.html#/settings`) in a new tab, in front, once it has loaded. */
  openPage: (path: string, timeoutMs: number) => Promise<Page>;
  /** What the toolbar badge says, read through the MV2 API from one of the extension's pages. */
  badgeText: (page: Page) => Promise<string>;
  close: () => Promise<void>;
}

/**
 * The MV2 build as a temporary add-on in Debian's headless Firefox ESR, over WebDriver BiDi, in the throwaway profile
 * puppeteer creates (and removes on close). `prefs` are extra Firefox preferences.
 */
export async function launchFirefoxExtension(prefs: Record<string, unknown> = {}): Promise<FirefoxExtension> {
  const uuid = randomUUID();
  const browser = await puppeteer.launch({
    browser: 'firefox',
    executablePath: FIREFOX_PATH,
    headless: true,
    // Without it Firefox refuses to navigate a remote-controlled tab to a moz-extension:// page.
    args: ['--remote-allow-system-access'],
    extraPrefsFirefox: { 'extensions.webextensions.uuids': JSON.stringify({ [geckoId()]: uuid }), ...prefs },
    timeout: 30_000,
  });
  try {
    await browser.installExtension(FIREFOX_EXTENSION_DIR);
  } catch (error) {
    await browser.close();
    throw error;
  }
  const origin = `moz-extension://${uuid}`;
  // Over BiDi, page.url() stays about:blank for tabs the extension opened: ask each page where it is.
  const href = (page: Page) => page.evaluate(() => location.href).catch(() => undefined);
  const pageErrors: string[] = [];
  return {
    browser,
    origin,
    pageErrors,
    async firstRunPage(timeoutMs) {
      const welcome = `${origin}/review.html#/welcome`;
      return until('the first-run tab', timeoutMs, async () => {
        for (const page of await browser.pages()) if ((await href(page)) === welcome) return page;
        return undefined;
      });
    },
    async openPage(path, timeoutMs) {
      const page = await browser.newPage();
      page.on('pageerror', (error) => pageErrors.push(error instanceof Error ? error.message : String(error)));
      const url = `${origin}${path}`;
      // goto to an extension page may never resolve although the page loads: the page's own state says when it has.
      page.goto(url).catch(() => undefined);
      await until(`${url} to load`, timeoutMs, async () => {
        const [href, state] = await page.evaluate(() => [location.href, document.readyState]);
        return href === url && state === 'complete' ? true : undefined;
      });
      // A hidden tab gets no animation frames and throttled timers: puppeteer's locators wait for frames, and a tab
      // the extension opens later (the first-run page) would hide this one.
      await page.bringToFront();
      return page;
    },
    async badgeText(page) {
      // The page's own `browser` global (Firefox's WebExtension API), evaluated as source: the test has no such name.
      return z.string().parse(await page.evaluate('browser.browserAction.getBadgeText({})'));
    },
    close: () => browser.close(),
  };
}

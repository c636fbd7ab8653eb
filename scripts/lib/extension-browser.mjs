// The one place that finds a Chromium, starts it with the built extension in a throw-away profile and pairs that
// extension with a hub the way a person does (Settings → Hub port → Save, then Pairing code → Pair). The end-to-end
// tests (test/e2e/extension-browser.ts), the extension bench (bench/extension.mjs) and the demo (scripts/demo.mjs) use it.
/* global location -- page.evaluate bodies run in the extension's page */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, win32 } from 'node:path';
import { promisify } from 'node:util';
import { chromium } from 'playwright-core';

export const UI_TIMEOUT = 15_000;

/**
 * Where a Chromium usually is on this platform. Chromium comes before Google Chrome: branded Chrome 137 and later ignore
 * --load-extension (the extension is then loaded over DevTools instead, see launchWithExtension).
 */
export function usualBrowserPaths(platform = process.platform, env = process.env) {
  if (platform === 'darwin') {
    return [
      '/Applications/Chromium.app/Contents/MacOS/Chromium',
      '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
      '/Applications/Google Chrome for Testing.app/Contents/MacOS/Google Chrome for Testing',
    ];
  }
  if (platform === 'win32') {
    const paths = env.LOCALAPPDATA ? [win32.join(env.LOCALAPPDATA, 'Chromium', 'Application', 'chrome.exe')] : [];
    for (const base of [env.ProgramFiles, env['ProgramFiles(x86)'], env.LOCALAPPDATA]) {
      if (base) paths.push(win32.join(base, 'Google', 'Chrome', 'Application', 'chrome.exe'));
    }
    return paths;
  }
  return ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/snap/bin/chromium', '/usr/bin/google-chrome-stable', '/usr/bin/google-chrome'];
}

export function installHint(platform = process.platform) {
  const set = 'or point CHROME_PATH (or --chrome) at a Chromium or Chrome executable';
  if (platform === 'linux') return `install Chromium (Debian/Ubuntu: sudo apt-get install -y chromium), ${set}`;
  return `install Chromium or Google Chrome (https://www.google.com/chrome/), ${set}`;
}

/**
 * The browser to run: `--chrome` or CHROME_PATH when given (and then nothing else, so a mistyped path is reported rather
 * than quietly replaced by another browser), else the first of the usual places that exists.
 */
export function findBrowser({ chrome, env = process.env, platform = process.platform }) {
  const explicit = chrome ?? (env.CHROME_PATH ? env.CHROME_PATH : undefined);
  const searched = explicit === undefined ? usualBrowserPaths(platform, env) : [explicit];
  const found = searched.find((path) => existsSync(path));
  if (found) return { path: found };
  const intro = explicit === undefined
    ? ['No Chromium found. Looked in:', ...searched.map((path) => `  ${path}`)]
    : [`No browser at ${explicit} (${chrome !== undefined ? 'given with --chrome' : 'from CHROME_PATH'}).`];
  return { error: [...intro, `To run the demo, ${installHint(platform)}.`].join('\n') };
}

/**
 * Starts the browser with the extension loaded in a fresh profile and returns it with the extension's id. The
 * extension goes in with --load-extension; a browser that ignores the switch (Google Chrome 137 and later) gets it over
 * the DevTools protocol instead, which --enable-unsafe-extension-debugging allows.
 */
export async function launchWithExtension({ executablePath, extensionDir, headless = true, log = () => undefined, viewport }) {
  const profile = mkdtempSync(join(tmpdir(), 'elicitly-chromium-'));
  let context;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath,
      headless,
      // Playwright's own --disable-extensions would also refuse the DevTools load; --disable-extensions-except keeps
      // every other extension out.
      ignoreDefaultArgs: ['--disable-extensions'],
      args: [
        `--disable-extensions-except=${extensionDir}`, `--load-extension=${extensionDir}`, '--enable-unsafe-extension-debugging',
        '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--no-default-browser-check',
        ...(headless ? ['--disable-gpu'] : ['--window-size=1180,860']),
      ],
      // A window follows its own size; headless pages get the size asked for (the demo frames its screenshots for one).
      viewport: headless ? (viewport ?? { width: 1280, height: 720 }) : null,
      deviceScaleFactor: headless ? 1 : undefined,
      // The demo closes the browser itself on Ctrl+C, after withdrawing what is still pending.
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
    });
    const extensionId = await extensionIdOf(context, extensionDir, log);
    const url = (page, hash = '') => `chrome-extension://${extensionId}/${page}${hash}`;
    return {
      context,
      extensionId,
      url,
      worker: async () => context.serviceWorkers()[0] ?? context.waitForEvent('serviceworker', { timeout: 10_000 }),
      /** The tab the extension opened on install to ask for the pairing code. */
      async firstRunPage() {
        const isWelcome = (page) => page.url() === url('review.html', '#/welcome');
        return context.pages().find(isWelcome) ?? context.waitForEvent('page', { predicate: isWelcome, timeout: 10_000 });
      },
      async openPage(page, hash = '') {
        const tab = await context.newPage();
        await tab.goto(url(page, hash));
        return tab;
      },
      /** What Chromium does to an idle MV3 worker, now: the next event starts it again from nothing. */
      async stopServiceWorkers() {
        const page = context.pages()[0] ?? (await context.newPage());
        const cdp = await context.newCDPSession(page);
        await cdp.send('ServiceWorker.enable');
        await cdp.send('ServiceWorker.stopAllWorkers');
        await cdp.detach();
      },
      async close() {
        // Closing waits for the browser; one that hangs must not keep the demo from exiting.
        await Promise.race([context.close().catch(() => undefined), new Promise((r) => setTimeout(r, 10_000).unref())]);
        rmSync(profile, { recursive: true, force: true, maxRetries: 3 });
      },
    };
  } catch (error) {
    await context?.close().catch(() => undefined);
    rmSync(profile, { recursive: true, force: true, maxRetries: 3 });
    throw error;
  }
}

async function extensionIdOf(context, extensionDir, log) {
  const fromWorker = (worker) => (worker.url().startsWith('chrome-extension://') ? new URL(worker.url()).host : undefined);
  const running = context.serviceWorkers().map(fromWorker).find(Boolean);
  if (running) return running;
  try {
    const worker = await context.waitForEvent('serviceworker', { timeout: 5_000 });
    const id = fromWorker(worker);
    if (id) return id;
  } catch {
    // No worker: the switch was ignored. Load it over DevTools below.
  }
  log('note: the browser ignored --load-extension (Google Chrome 137 and later do); loading the extension over DevTools');
  const browser = context.browser();
  if (!browser) throw new Error('the browser did not load the extension, and offers no DevTools session to load it with');
  const cdp = await browser.newBrowserCDPSession();
  try {
    const { id } = await cdp.send('Extensions.loadUnpacked', { path: extensionDir });
    return id;
  } catch (error) {
    throw new Error(
      `this browser loads no unpacked extension (${error instanceof Error ? error.message.split('\n')[0] : String(error)}). ` +
        'Use Chromium or Chrome for Testing (branded Google Chrome 137+ refuses --load-extension): set CHROME_PATH or pass --chrome.',
      { cause: error },
    );
  } finally {
    await cdp.detach().catch(() => undefined);
  }
}

/** A fresh one-time code from the server's own `pair` command (printed alone on its last stdout line). */
export async function pairingCode(serverEntry, env) {
  const { stdout } = await promisify(execFile)(process.execPath, [serverEntry, 'pair'], { env: { ...process.env, ...env }, timeout: 15_000 });
  const code = stdout.trim().split('\n').at(-1)?.trim();
  if (!code) throw new Error(`elicitly-companion pair printed no code: ${JSON.stringify(stdout)}`);
  return code;
}

/**
 * The page the person decides in: the first-run tab the install opens (it asks for the pairing code), taken over so
 * the browser shows one tab; it ends on the review page's inbox, paired with the hub on `port`.
 */
export async function openPairedInbox(browser, { port, code }) {
  const { context } = browser;
  const isWelcome = (page) => page.url().startsWith(browser.url('review.html', ''));
  // Waited for rather than replaced by a new tab: a first-run tab opening later would come to the front, and the tab
  // behind it gets animation frames only now and then, which stalls every click's stability check.
  const welcome = context.pages().find(isWelcome) ?? (await context.waitForEvent('page', { predicate: isWelcome, timeout: 10_000 }).catch(() => undefined));
  const page = welcome ?? (await context.newPage());
  page.setDefaultTimeout(UI_TIMEOUT);
  // The blank tab a persistent context starts with is of no use to the person.
  for (const other of context.pages()) if (other !== page && other.url() === 'about:blank') await other.close();
  await page.bringToFront();
  await page.goto(browser.url('review.html', '#/settings'));
  await setHubPort(page, port);
  await pairInSettings(page, await code());
  await page.evaluate(() => (location.hash = '#/inbox'));
  await page.getByText('Nothing to review.').or(page.getByRole('list', { name: 'Pending requests' })).first().waitFor();
  return page;
}

/** Settings → Hub port → Save, as a person points the extension at a hub. */
export async function setHubPort(page, port, timeout = UI_TIMEOUT) {
  if (!page.url().endsWith('#/settings')) await page.evaluate(() => (location.hash = '#/settings'));
  await page.getByLabel('Hub port').fill(String(port));
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByText('Saved.').first().waitFor({ timeout });
}

/** What a person does once: Settings → Pairing code → Pair, then the header says Connected. */
export async function pairInSettings(page, code, timeout = UI_TIMEOUT) {
  if (!page.url().endsWith('#/settings')) await page.evaluate(() => (location.hash = '#/settings'));
  await page.getByLabel('Pairing code').fill(code);
  await page.getByRole('button', { name: 'Pair', exact: true }).click();
  await page.locator('[data-state="connected"]').first().waitFor({ timeout });
}

// The phone page's end-to-end tests: a hub with the page on (the built server started by a real MCP client) and
// Debian's Chromium; and the page as a person pairs it: opened by the QR's link on `origin`, named, paired, connected.
import { rmSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { StateDir } from '../../server/state-dir.js';
import { connect, type Harness } from '../helpers/mcp-harness.js';
import { CHROMIUM_PATH } from './extension-browser.js';

/** The agent whose first call made its server the hub, and the browser the page is opened in. */
export interface PhoneHub {
  agent: Harness;
  browser: Browser;
  /** Closes the browser and the agent (the hub with it) and removes the state dir. */
  close(): Promise<void>;
}

/** Turns the phone page on in `stateDir`, starts the hub on `port` through an agent's first call, and launches Chromium. */
export async function startPhoneHub(options: { stateDir: string; port: number; env?: Record<string, string>; clientInfo?: { name: string; version: string } }): Promise<PhoneHub> {
  new StateDir(options.stateDir).updateRemote((c) => ({ ...c, enabled: true }));
  const agent = await connect('v2-2025', {
    ...(options.clientInfo ? { clientInfo: options.clientInfo } : {}),
    env: { ELICITLY_STATE_DIR: options.stateDir, ELICITLY_PORT: String(options.port), ...options.env },
  });
  // The first approval-family call makes this process the hub.
  await agent.callTool('elicit_status', { elicitationId: 'el_warmup' });
  const browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
  });
  return {
    agent,
    browser,
    close: async () => {
      await browser.close();
      await agent.close();
      rmSync(options.stateDir, { recursive: true, force: true });
    },
  };
}

export async function pairPhonePage(page: Page, options: { stateDir: string; origin: string; name: string; timeout: number }): Promise<void> {
  const { code } = new StateDir(options.stateDir).createPairing('device');
  await page.goto(`${options.origin}/phone/#pair=${code}`);
  await page.getByLabel('Name this device').fill(options.name, { timeout: options.timeout });
  await page.getByRole('button', { name: 'Pair', exact: true }).click();
  await page.locator('[data-state="connected"]').waitFor({ timeout: options.timeout });
}

/** The key the page keeps in its IndexedDB (`phone/device-key.ts`): its id, and whether it can be exported (it must not). */
export async function storedDeviceKey(page: Page): Promise<{ keyId: string; extractable: boolean; exported: string; legacy: string | null } | null> {
  return page.evaluate(async () => {
    const db = await new Promise<IDBDatabase>((resolve, reject) => {
      const req = indexedDB.open('elicitly-phone');
      req.onupgradeneeded = () => req.result.createObjectStore('device');
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => reject(req.error);
    });
    const entry = await new Promise<{ keyId: string; key: CryptoKey } | undefined>((resolve, reject) => {
      const req = db.transaction('device').objectStore('device').get('key');
      req.onsuccess = () => resolve(req.result as { keyId: string; key: CryptoKey } | undefined);
      req.onerror = () => reject(req.error);
    });
    db.close();
    if (!entry) return null;
    const exported = await crypto.subtle.exportKey('raw', entry.key).then(() => 'exported', (e: unknown) => String(e));
    return { keyId: entry.keyId, extractable: entry.key.extractable, exported, legacy: localStorage.getItem('elicitly.device') };
  });
}

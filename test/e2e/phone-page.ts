// The phone page in Chromium as a person pairs it: opened by the QR's link on `origin`, named, paired, connected.
import type { Page } from 'playwright-core';
import { StateDir } from '../../server/state-dir.js';

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

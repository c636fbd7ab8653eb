// The phone page in Chromium as a person pairs it: opened by the QR's link on `origin`, named, paired, connected.
import type { Page } from 'playwright-core';
import { StateDir } from '../../server/state-dir.js';

export async function pairPhonePage(page: Page, options: { stateDir: string; origin: string; name: string; timeout: number }): Promise<void> {
  const { code } = new StateDir(options.stateDir).createPairing();
  await page.goto(`${options.origin}/phone/#pair=${code}`);
  await page.getByLabel('Name this device').fill(options.name, { timeout: options.timeout });
  await page.getByRole('button', { name: 'Pair', exact: true }).click();
  await page.locator('[data-state="connected"]').waitFor({ timeout: options.timeout });
}

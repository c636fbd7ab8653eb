import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CDPSession, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import {
  launchWithExtension, pairInSettings, pairingCode as serverPairingCode, setHubPort, type ExtensionBrowser as LaunchedBrowser,
} from '../../scripts/lib/extension-browser.mjs';
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

export type ExtensionBrowser = LaunchedBrowser & {
  /** Opens the popup's page in a new tab (the inbox unless `hash` says otherwise). */
  openPopup: (hash?: string) => Promise<Page>;
};

/** The built extension in Debian's headless Chromium, in a throwaway profile. */
export async function launchExtension(): Promise<ExtensionBrowser> {
  if (!existsSync(join(EXTENSION_DIR, 'manifest.json'))) throw new Error(`${EXTENSION_DIR} is missing: run "npm run build" (npm test does).`);
  const browser = await launchWithExtension({ executablePath: CHROMIUM_PATH, extensionDir: EXTENSION_DIR });
  return {
    ...browser,
    async openPopup(hash = '#/inbox') {
      // The install opens the first-run tab by itself; opened after the popup it takes the front, and a headless tab
      // behind it gets animation frames about twice a second, which stalls every click's stability check.
      await browser.firstRunPage();
      const popup = await browser.openPage('popup.html', hash);
      await popup.bringToFront();
      return popup;
    },
  };
}

/** A fresh code from the built server's own `pair` command, for the hub whose state dir `env` names. */
export const pairingCode = (env: Record<string, string>): Promise<string> => serverPairingCode(SERVER_ENTRY, env);

export { pairInSettings, setHubPort };

/**
 * The popup on Settings, paired as a person pairs it: Hub port → Save, then a fresh code → Pair; its uncaught errors
 * go to `errors`.
 */
export async function pairedPopup(browser: ExtensionBrowser, options: { port: number; code: () => Promise<string>; errors: string[]; timeout: number }): Promise<Page> {
  const popup = await browser.openPopup('#/settings');
  popup.on('pageerror', (error) => options.errors.push(error.message));
  await setHubPort(popup, options.port, options.timeout);
  await pairInSettings(popup, await options.code(), options.timeout);
  return popup;
}

/**
 * A CTAP 2.1 platform authenticator that verifies its user and answers at once, through Chromium's CDP `WebAuthn`
 * domain on the page `cdp` was opened for: what the passkey tests sign with.
 */
export async function addVirtualAuthenticator(cdp: CDPSession): Promise<string> {
  await cdp.send('WebAuthn.enable', { enableUI: false });
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', ctap2Version: 'ctap2_1', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  });
  return authenticatorId;
}

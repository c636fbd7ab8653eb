import { browser } from '../../extension/browser.js';

/** The route of the extension's own page that asks for the pairing code. */
export const WELCOME_HASH = '#/welcome';

/**
 * Every browser pairs with the hub before it connects, so a fresh install opens the page that asks for the code rather
 * than waiting for the person to find Settings. Updates and browser restarts do not: the key is already there.
 */
export function openWelcomeOnInstall(): void {
  browser.runtime.onInstalled.addListener((details) => {
    if (details.reason !== 'install') return;
    void browser.tabs.create({ url: `${browser.runtime.getURL('/review.html')}${WELCOME_HASH}` });
  });
}

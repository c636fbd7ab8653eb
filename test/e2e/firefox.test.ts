// The Firefox build (MV2) in a real Firefox: Debian's firefox-esr driven by puppeteer-core over WebDriver BiDi, against
// the built stdio server started by a real MCP client. Pairing, the inbox, the toolbar badge and a decision that reaches
// elicit_result; then the same with Firefox 154's Local Network Access gate on WebSockets forced on.
// System notifications are not part of it: a headless box without D-Bus cannot show them.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readStoredRow } from './stored-row.js';
import { shownHash } from '../../shared/shown-hash.js';
import { connect, type Harness } from '../helpers/mcp-harness.js';
import { freePort } from '../helpers/scripted-extension.js';
import { BROWSER_REQUIRED, pairingCode } from './extension-browser.js';
import { FIREFOX_INSTALL_HINT, FIREFOX_PATH, firefoxFound, launchFirefoxExtension, until, type FirefoxExtension } from './firefox-browser.js';

const UI_TIMEOUT = 10_000;

describe.runIf(!firefoxFound && BROWSER_REQUIRED)('Firefox end-to-end prerequisites', () => {
  it('has a Firefox to run the extension in (ELICITLY_REQUIRE_BROWSER=1)', () => {
    expect.fail(`no Firefox at ${FIREFOX_PATH}; install one with: ${FIREFOX_INSTALL_HINT}`);
  });
});

const skipped = `SKIPPED: no Firefox at ${FIREFOX_PATH}; install one with: ${FIREFOX_INSTALL_HINT}`;

/** One whole run, in its own hub (state dir, port) and its own Firefox with `prefs`. */
function pairAndDecide(title: string, prefs: Record<string, unknown>): void {
  describe.skipIf(!firefoxFound)(firefoxFound ? title : `${title} — ${skipped}`, () => {
    const port = freePort();
    // Made in beforeAll: a skipped describe still runs its body.
    let stateDir = '';
    let env: Record<string, string> = {};
    let agent: Harness;
    let firefox: FirefoxExtension;
    let popup: Page;
    let welcome: Page;

    const waitFor = (selector: string) => popup.waitForSelector(selector, { timeout: UI_TIMEOUT });
    const text = (selector: string) => popup.$eval(selector, (e) => e.textContent ?? '');
    const badgeBecomes = (expected: string) =>
      until(`the badge to read "${expected}"`, UI_TIMEOUT, async () => ((await firefox.badgeText(popup)) === expected ? expected : undefined));

    beforeAll(async () => {
      stateDir = mkdtempSync(join(tmpdir(), 'elicitly-firefox-'));
      env = { ELICITLY_STATE_DIR: stateDir, ELICITLY_PORT: String(port) };
      agent = await connect('v2-2025', { env });
      // The first approval-family call makes this process the hub.
      await agent.callTool('elicit_status', { elicitationId: 'el_warmup' });
      firefox = await launchFirefoxExtension(prefs);
      // Opened by the install, and it takes the front: the popup is opened after it so that it stays in front.
      welcome = await firefox.firstRunPage(UI_TIMEOUT);
      popup = await firefox.openPage('/popup.html#/settings', UI_TIMEOUT);
    }, 45_000);

    afterAll(async () => {
      await firefox?.close();
      await agent?.close();
      if (stateDir) rmSync(stateDir, { recursive: true, force: true });
    });

    it('the install opened the first-run page, which asks for the pairing code', async () => {
      await welcome.waitForSelector('::-p-text(Pair this browser with elicitly-companion)', { timeout: UI_TIMEOUT });
      expect(await welcome.$$eval('#pairing-code', (inputs) => inputs.length)).toBe(1);
    });

    it('pairs with a code from `elicitly-companion pair` and connects to the hub', async () => {
      await popup.locator('#settings-port').setTimeout(UI_TIMEOUT).fill(String(port));
      await popup.locator('form.settings button[type="submit"]').setTimeout(UI_TIMEOUT).click();
      await popup.locator('form.settings .saved::-p-text(Saved.)').setTimeout(UI_TIMEOUT).wait();
      // With no key for this port the extension opens no socket and says so.
      await waitFor('[data-state="pairing_needed"]');

      await popup.locator('#pairing-code').setTimeout(UI_TIMEOUT).fill(await pairingCode(env));
      await popup.locator('form.pairing button[type="submit"]').setTimeout(UI_TIMEOUT).click();
      await waitFor('[data-state="connected"]');
      expect(await text('.pairing-status')).toBe(`This browser is paired with the hub on port ${port}.`);
    });

    it('shows the request in the inbox and on the badge; the approval reaches elicit_await and elicit_result', async () => {
      const message = 'Deploy 2.1 to production (Firefox)';
      const context = { env: 'production', version: '2.1' };
      const created = await agent.callTool('elicit_approval', { message, context });
      expect(created.isError).toBeFalsy();
      const id = created.structuredContent?.elicitationId;
      expect(id).toMatch(/^el_/);

      await popup.evaluate(() => void (location.hash = '#/inbox'));
      const item = `button.inbox-item[data-id="${String(id)}"]`;
      await waitFor(item);
      expect(await text(`${item} .message`)).toBe(message);
      expect(await badgeBecomes('1')).toBe('1');

      await popup.locator(item).setTimeout(UI_TIMEOUT).click();
      const approve = '.review-footer button.primary';
      await waitFor(approve);
      expect(await text(approve)).toBe('Approve');
      await popup.locator(approve).setTimeout(UI_TIMEOUT).click();

      const awaited = await agent.callTool('elicit_await', { elicitationId: id, waitSeconds: 10 });
      expect(awaited.structuredContent).toEqual({ status: 'approved' });
      // The row the popup showed, read from the extension's database: the hub took the decision made on it, and its
      // receipt names the request's hash, which is that row's.
      const row = await popup.evaluate(readStoredRow, String(id));
      if (!row) throw new Error(`no stored row for ${String(id)}`);
      expect((await agent.callTool('elicit_result', { elicitationId: id })).structuredContent).toEqual({
        status: 'consumed', decision: 'approved', action: 'submit', decidedVia: 'extension', context, values: {},
        receipt: expect.objectContaining({ decidedVia: 'extension', ledgerIndex: expect.any(Number), requestHash: await shownHash(row) }),
      });
      expect(await badgeBecomes('')).toBe('');
    });

    it('the popup threw no uncaught error', () => {
      expect(firefox.pageErrors).toEqual([]);
    });
  });
}

pairAndDecide('the Firefox build end to end in headless Firefox ESR', {});
// Firefox 154 gates WebSockets to local addresses behind Local Network Access; extension pages are exempt, and this
// proves it before 154 ships to users.
pairAndDecide('the Firefox build end to end with Local Network Access on WebSockets (Firefox 154+)', { 'network.lna.websocket.enabled': true });

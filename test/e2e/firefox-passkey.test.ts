// Passkeys in the Firefox build (issue 34, part 4): Firefox gives an extension no WebAuthn RP ID of its own, so the
// extension borrows `elicitly.localhost` through an optional host permission (Firefox 150+), and signs with the stable
// origin Firefox derives from its gecko id. Debian's firefox-esr over WebDriver BiDi, with Firefox's own soft token as
// the authenticator (a privileged call in the browser's chrome scope, as Mozilla's own tests add one).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { firefoxWebAuthnOrigin, LOCAL_RP_ID } from '../../server/passkeys/passkey-origins.js';
import { FIREFOX_EXTENSION_ID } from '../../shared/extension-id.js';
import { ReceiptSchema } from '../../shared/receipt.js';
import { connect, type Harness } from '../helpers/mcp-harness.js';
import { freePort } from '../helpers/scripted-extension.js';
import { pairingCode } from './extension-browser.js';
import { FIREFOX_INSTALL_HINT, FIREFOX_PATH, firefoxFound, launchFirefoxExtension, type FirefoxExtension } from './firefox-browser.js';

const UI_TIMEOUT = 15_000;
/** Firefox's soft token answers WebAuthn calls; without it `create` waits for a USB key that is not there. */
const SOFT_TOKEN = { 'security.webauth.webauthn_enable_softtoken': true, 'security.webauth.webauthn_enable_usbtoken': false };

interface BidiConnection {
  send(method: string, params: object): Promise<{ result: unknown }>;
}
function isBidiConnection(value: unknown): value is BidiConnection {
  return typeof value === 'object' && value !== null && typeof Reflect.get(value, 'send') === 'function';
}

/** Runs `expression` in the browser's own (chrome) scope, where Firefox's test hooks live; what it gives, as a string. */
async function inChrome(browser: Browser, expression: string): Promise<string> {
  const connection: unknown = Reflect.get(browser, 'connection');
  if (!isBidiConnection(connection)) throw new Error('puppeteer gave no BiDi connection');
  const tree = (await connection.send('browsingContext.getTree', { 'moz:scope': 'chrome' })).result as { contexts: { context: string }[] };
  const context = tree.contexts[0]?.context;
  if (!context) throw new Error('no chrome context');
  const answer = (await connection.send('script.evaluate', { target: { context }, expression, awaitPromise: true })).result as { type: string; result?: { value?: unknown }; exceptionDetails?: { text?: string } };
  if (answer.type !== 'success') throw new Error(`chrome scope: ${answer.exceptionDetails?.text ?? 'failed'}`);
  return String(answer.result?.value);
}

describe.skipIf(!firefoxFound)(firefoxFound ? 'passkeys in Firefox ESR' : `passkeys in Firefox ESR — SKIPPED: no Firefox at ${FIREFOX_PATH}; install one with: ${FIREFOX_INSTALL_HINT}`, () => {
  const port = freePort();
  let stateDir = '';
  let env: Record<string, string> = {};
  let agent: Harness;
  let firefox: FirefoxExtension;
  let tab: Page;

  beforeAll(async () => {
    stateDir = mkdtempSync(join(tmpdir(), 'elicitly-firefox-passkey-'));
    env = { ELICITLY_STATE_DIR: stateDir, ELICITLY_PORT: String(port) };
    agent = await connect('v2-2025', { env });
    await agent.callTool('elicit_status', { elicitationId: 'el_warmup' });
    firefox = await launchFirefoxExtension(SOFT_TOKEN);
    await firefox.firstRunPage(UI_TIMEOUT);
    tab = await firefox.openPage('/review.html#/settings', UI_TIMEOUT);
    await tab.locator('#settings-port').setTimeout(UI_TIMEOUT).fill(String(port));
    await tab.locator('form.settings button[type="submit"]').setTimeout(UI_TIMEOUT).click();
    await tab.locator('form.settings .saved::-p-text(Saved.)').setTimeout(UI_TIMEOUT).wait();
    await tab.locator('#pairing-code').setTimeout(UI_TIMEOUT).fill(await pairingCode(env));
    await tab.locator('form.pairing button[type="submit"]').setTimeout(UI_TIMEOUT).click();
    await tab.waitForSelector('[data-state="connected"]', { timeout: UI_TIMEOUT });
    // What the person's click on "Allow" in the permission prompt grants (a headless browser shows no prompt), and an
    // authenticator: Firefox's soft token, user-verifying.
    await inChrome(firefox.browser, `(async () => {
      const { ExtensionPermissions } = ChromeUtils.importESModule('resource://gre/modules/ExtensionPermissions.sys.mjs');
      const policy = WebExtensionPolicy.getByID(${JSON.stringify(FIREFOX_EXTENSION_ID)});
      await ExtensionPermissions.add(policy.id, { permissions: [], origins: ['http://${LOCAL_RP_ID}/*'] }, policy.extension);
      return 'granted';
    })()`);
    await inChrome(firefox.browser, `String(Cc['@mozilla.org/webauthn/service;1'].getService(Ci.nsIWebAuthnService).addVirtualAuthenticator('ctap2_1', 'internal', true, true, true, true))`);
  }, 60_000);

  afterAll(async () => {
    await firefox?.close();
    await agent?.close();
    if (stateDir) rmSync(stateDir, { recursive: true, force: true });
  });

  it('adds a passkey in Settings with the RP ID elicitly.localhost, and decides with it: the receipt names that RP ID and the derived origin', async () => {
    await tab.locator('#passkey-label').setTimeout(UI_TIMEOUT).fill('Firefox laptop');
    await tab.locator('::-p-text(Add a passkey)').setTimeout(UI_TIMEOUT).click();
    await tab.waitForSelector('::-p-text(Added Firefox laptop.)', { timeout: UI_TIMEOUT });

    const created = await agent.callTool('elicit_approval', { message: 'Ship it from Firefox (passkey)', context: { build: 42 }, assurance: 'passkey' });
    expect(created.isError).toBeFalsy();
    const id = String(created.structuredContent?.elicitationId);
    await tab.evaluate((hash) => void (location.hash = hash), `#/review/${encodeURIComponent(id)}`);
    await tab.waitForSelector('::-p-text(Deciding this asks for one of your passkeys)', { timeout: UI_TIMEOUT });
    await tab.locator('::-p-text(Approve)').setTimeout(UI_TIMEOUT).click();

    expect((await agent.callTool('elicit_await', { elicitationId: id, waitSeconds: 10 })).structuredContent).toEqual({ status: 'approved' });
    const result = (await agent.callTool('elicit_result', { elicitationId: id })).structuredContent ?? {};
    const receipt = ReceiptSchema.parse(result.receipt);
    expect(receipt.passkey).toMatchObject({ rpId: LOCAL_RP_ID, origin: firefoxWebAuthnOrigin(FIREFOX_EXTENSION_ID), requestId: id });
    expect(firefox.pageErrors).toEqual([]);
  });
});

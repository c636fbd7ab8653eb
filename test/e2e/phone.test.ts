// Issue 20 end to end, in real parts: the built server started by a real MCP client (it becomes the hub), the phone
// page it serves at /phone/, and Debian's Chromium emulating a phone (390×844, touch). Pair by the QR's link, see a
// request an agent filed, decide it by tapping, and elicit_result says the phone decided, with exactly what was shown.
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StateDir } from '../../server/state-dir.js';
import type { Harness } from '../helpers/mcp-harness.js';
import { ScriptedExtension, freePort, pairedKey } from '../helpers/scripted-extension.js';
import { until } from '../helpers/poll.js';
import { browserFound, chromiumSuite } from './extension-browser.js';
import { startPhoneHub, storedDeviceKey, type PhoneHub } from './phone-page.js';

const UI_TIMEOUT = 15_000;
/** `ELICITLY_SCREENSHOTS=1` writes the README's phone screenshots (390 px wide) into docs/screenshots/. */
const SCREENSHOTS = process.env.ELICITLY_SCREENSHOTS === '1' ? fileURLToPath(new URL('../../docs/screenshots/', import.meta.url)) : null;

const title = chromiumSuite('the phone reviewer end to end');

describe.skipIf(!browserFound)(title, () => {
  const stateDir = mkdtempSync(join(tmpdir(), 'elicitly-phone-e2e-'));
  const port = freePort();
  let hub: PhoneHub;
  let agent: Harness;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  /** Script errors and CSP refusals: the page must run under the hub's CSP without one. */
  const problems: string[] = [];

  const created = (result: { structuredContent?: Record<string, unknown>; isError?: boolean }): string => {
    expect(result.isError).toBeFalsy();
    const id = result.structuredContent?.elicitationId;
    if (typeof id !== 'string') throw new Error(`no elicitationId in ${JSON.stringify(result.structuredContent)}`);
    return id;
  };

  async function shoot(name: string): Promise<void> {
    if (SCREENSHOTS) await page.screenshot({ path: join(SCREENSHOTS, name), scale: 'css' });
  }

  async function outcome(id: string): Promise<Record<string, unknown> | undefined> {
    await agent.callTool('elicit_await', { elicitationId: id, waitSeconds: 10 });
    return (await agent.callTool('elicit_result', { elicitationId: id })).structuredContent;
  }

  async function openPhone(hash: string): Promise<Page> {
    const opened = await context.newPage();
    opened.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    opened.on('console', (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) problems.push(`console: ${message.text()}`);
    });
    await opened.goto(`http://127.0.0.1:${port}/phone/${hash}`);
    return opened;
  }

  beforeAll(async () => {
    if (SCREENSHOTS) mkdirSync(SCREENSHOTS, { recursive: true });
    hub = await startPhoneHub({ stateDir, port });
    ({ agent, browser } = hub);
    context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 3, colorScheme: 'light' });
  }, 60_000);

  afterAll(async () => {
    await hub?.close();
  });

  it('pairs by the QR\'s link: the code leaves the address, the device is named, and the header says Connected', async () => {
    const { code } = new StateDir(stateDir).createPairing('device');
    page = await openPhone(`#pair=${code}`);
    const name = page.getByLabel('Name this device');
    await name.waitFor({ timeout: UI_TIMEOUT });
    expect(page.url()).toBe(`http://127.0.0.1:${port}/phone/`);
    await name.fill('E2E phone');
    await page.getByRole('button', { name: 'Pair', exact: true }).tap();
    await page.locator('[data-state="connected"]').waitFor({ timeout: UI_TIMEOUT });
    // Kept with the origin the page was opened from: the only one its key opens a socket from.
    expect(new StateDir(stateDir).pairedDevices().map((d) => [d.name, d.origin])).toEqual([['E2E phone', `http://127.0.0.1:${port}`]]);
    expect(await storedDeviceKey(page)).toMatchObject({ keyId: new StateDir(stateDir).pairedDevices()[0]?.keyId, extractable: false, legacy: null });
    await page.getByText('Nothing to review.', { exact: false }).waitFor({ timeout: UI_TIMEOUT });
    expect(problems).toEqual([]);
  }, 60_000);

  it('an approval an agent files appears in the inbox; tapped open and approved, elicit_result says decidedVia "phone"', async () => {
    const message = 'Deploy build 812 to staging';
    const id = created(await agent.callTool('elicit_approval', { message, context: { build: 812, target: 'staging' } }));
    const item = page.getByRole('link', { name: new RegExp(message) });
    await item.waitFor({ timeout: UI_TIMEOUT });
    expect(await item.textContent()).toMatch(/Approval · .* · expires in/);
    await shoot('phone-inbox.png');
    await item.tap();
    expect(page.url()).toBe(`http://127.0.0.1:${port}/phone/#/r/${id}`);
    const approve = page.getByRole('button', { name: 'Approve', exact: true });
    await approve.waitFor({ timeout: UI_TIMEOUT });
    await shoot('phone-review.png');
    await approve.tap();
    // Back in the inbox, a confirmation that names what was decided.
    await page.getByRole('status').filter({ hasText: `Approved: ${message}` }).waitFor({ timeout: UI_TIMEOUT });
    expect(await outcome(id)).toEqual({
      status: 'consumed', decision: 'approved', action: 'submit', values: {}, decidedVia: 'phone', context: { build: 812, target: 'staging' },
      receipt: expect.objectContaining({ decidedVia: 'phone', ledgerIndex: expect.any(Number), requestHash: expect.stringMatching(/^[0-9a-f]{64}$/) }),
    });
    expect(problems).toEqual([]);
  }, 60_000);

  it('a form-mode approval: the values typed on the phone are exactly what elicit_result returns', async () => {
    const message = 'Name the release branch';
    const id = created(await agent.callTool('elicit_approval', {
      message,
      requestedSchema: {
        type: 'object',
        properties: { branch: { type: 'string', title: 'Branch', minLength: 3, default: 'main' }, tag: { type: 'boolean', title: 'Tag it' } },
        required: ['branch'],
      },
    }));
    await page.getByRole('link', { name: new RegExp(message) }).tap({ timeout: UI_TIMEOUT });
    const branch = page.getByLabel('Branch');
    await branch.waitFor({ timeout: UI_TIMEOUT });
    await branch.fill('release/2.1');
    await page.getByLabel('Tag it').tap();
    const shown = { branch: await branch.inputValue(), tag: await page.getByLabel('Tag it').isChecked() };
    expect(shown).toEqual({ branch: 'release/2.1', tag: true });
    await page.getByRole('button', { name: 'Approve', exact: true }).tap();
    await page.getByRole('status').filter({ hasText: `Approved: ${message}` }).waitFor({ timeout: UI_TIMEOUT });
    expect(await outcome(id)).toMatchObject({ status: 'consumed', decision: 'approved', decidedVia: 'phone', values: shown });
  }, 60_000);

  it('first decision wins against the extension: the review open on the phone says the extension decided, and a tap there decides nothing', async () => {
    const ext = await ScriptedExtension.connect(port, { key: pairedKey(stateDir) });
    try {
      const message = 'Drop the stale preview databases';
      const id = created(await agent.callTool('elicit_approval', { message, context: { previews: 3 } }));
      await page.getByRole('link', { name: new RegExp(message) }).tap({ timeout: UI_TIMEOUT });
      const approve = page.getByRole('button', { name: 'Approve', exact: true });
      await approve.waitFor({ timeout: UI_TIMEOUT });
      // The person hesitates on the phone; meanwhile the extension rejects it.
      expect((await ext.call('decide', { elicitationId: id, idempotencyKey: 'ext-first', decision: 'rejected', comment: 'not today' })).result).toMatchObject({ ok: true });
      await page.getByText(/no longer pending: rejected, decided in the browser extension/i).waitFor({ timeout: UI_TIMEOUT });
      expect(await approve.count()).toBe(0);
      expect(await outcome(id)).toMatchObject({ status: 'consumed', decision: 'rejected', decidedVia: 'extension' });
      expect(problems).toEqual([]);
    } finally {
      ext.close();
    }
  }, 60_000);

  it('the history lists what ended, with who decided it', async () => {
    await page.getByRole('link', { name: 'History' }).tap();
    const list = page.getByRole('list', { name: 'Recent requests' });
    await list.waitFor({ timeout: UI_TIMEOUT });
    const first = list.getByRole('link').first();
    expect(await first.textContent()).toMatch(/Drop the stale preview databases.*Rejected · decided in the browser extension/);
    expect(await list.getByRole('link', { name: /Deploy build 812 to staging/ }).textContent()).toMatch(/Approved · decided on a paired phone/);
    await shoot('phone-history.png');
    expect(problems).toEqual([]);
  }, 60_000);

  it('a device removed on the computer is cut off at once: "This phone is no longer paired", and its key is gone', async () => {
    const [device] = new StateDir(stateDir).pairedDevices();
    if (!device) throw new Error('no paired device');
    expect(new StateDir(stateDir).removePairedDevice(device.keyId)).toBe(true);
    await page.getByText('This phone is no longer paired.').waitFor({ timeout: UI_TIMEOUT });
    expect(await page.locator('.connection').getAttribute('data-state')).toBe('pairing_needed');
    await until('the key to be dropped', async () => ((await storedDeviceKey(page)) === null ? true : undefined), UI_TIMEOUT);
    // A reload finds no key: it opens no socket and says how to pair.
    await page.reload();
    await page.getByText(/elicitly-companion remote pair/).waitFor({ timeout: UI_TIMEOUT });
    expect(problems).toEqual([]);
  }, 60_000);
});

// Passkeys on the phone page (issue 34, part 4): the page the hub serves can use WebAuthn on `elicitly.localhost` (an
// IP address is no RP ID: on 127.0.0.1 it says where to open it instead). Debian's Chromium with a CDP virtual
// authenticator, the built server started by a real MCP client: pair, add a passkey in the page's Passkeys view, and
// decide a request that needs one; elicit_result says the phone decided and the receipt carries the page's assertion.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_RP_ID } from '../../server/passkeys/passkey-origins.js';
import { ReceiptSchema } from '../../shared/receipt.js';
import type { Harness } from '../helpers/mcp-harness.js';
import { freePort } from '../helpers/scripted-extension.js';
import { addVirtualAuthenticator, browserFound, chromiumSuite } from './extension-browser.js';
import { pairPhonePage, startPhoneHub, type PhoneHub } from './phone-page.js';

const UI_TIMEOUT = 15_000;

describe.skipIf(!browserFound)(chromiumSuite('passkeys on the phone page'), () => {
  const stateDir = mkdtempSync(join(tmpdir(), 'elicitly-phone-passkey-'));
  const port = freePort();
  let hub: PhoneHub;
  const origin = `http://${LOCAL_RP_ID}:${port}`;
  const problems: string[] = [];
  let agent: Harness;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    hub = await startPhoneHub({ stateDir, port });
    ({ agent, browser } = hub);
    context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    page = await context.newPage();
    page.on('pageerror', (error) => problems.push(error.message));
    await addVirtualAuthenticator(await context.newCDPSession(page));
    await pairPhonePage(page, { stateDir, origin, name: 'Passkey phone', timeout: UI_TIMEOUT });
  }, 60_000);

  afterAll(async () => {
    await hub?.close();
  });

  it('adds a passkey in the page\'s Passkeys view (RP ID elicitly.localhost) and decides with it', async () => {
    await page.getByRole('link', { name: 'Passkeys' }).click();
    await page.getByLabel('Name for a new passkey').fill('This phone', { timeout: UI_TIMEOUT });
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.getByRole('status').filter({ hasText: 'Added This phone.' }).waitFor({ timeout: UI_TIMEOUT });

    const created = await agent.callTool('elicit_approval', { message: 'Restart the queue (phone, passkey)', context: { queue: 'jobs' }, assurance: 'passkey' });
    expect(created.isError).toBeFalsy();
    const id = String(created.structuredContent?.elicitationId);
    await page.goto(`${origin}/phone/#/r/${encodeURIComponent(id)}`);
    await page.getByRole('note').filter({ hasText: 'Deciding this asks for one of your passkeys' }).waitFor({ timeout: UI_TIMEOUT });
    await page.getByRole('button', { name: 'Approve' }).click();

    expect((await agent.callTool('elicit_await', { elicitationId: id, waitSeconds: 10 })).structuredContent).toEqual({ status: 'approved' });
    const result = (await agent.callTool('elicit_result', { elicitationId: id })).structuredContent ?? {};
    expect(result).toMatchObject({ decision: 'approved', decidedVia: 'phone' });
    expect(ReceiptSchema.parse(result.receipt).passkey).toMatchObject({ rpId: LOCAL_RP_ID, origin, requestId: id });
    expect(problems).toEqual([]);
  });

  it('on 127.0.0.1 the Passkeys view says where passkeys work, and offers no ceremony that would fail', async () => {
    const other = await context.newPage();
    other.on('pageerror', (error) => problems.push(error.message));
    await pairPhonePage(other, { stateDir, origin: `http://127.0.0.1:${port}`, name: 'IP phone', timeout: UI_TIMEOUT });
    await other.getByRole('link', { name: 'Passkeys' }).click();
    await other.getByText(`open the page as http://${LOCAL_RP_ID}:${port}/phone/ instead`, { exact: false }).waitFor({ timeout: UI_TIMEOUT });
    expect(await other.getByRole('button', { name: 'Add a passkey' }).isDisabled()).toBe(true);
    await other.close();
    expect(problems).toEqual([]);
  });
});

// The history in the real product: a proposal decided in the built extension (one value edited, one field left out),
// then the History says Approved — and collected once the agent has read it — and the past request opens to what was
// proposed, what was submitted and what was included. Real server, real hub, headless Chromium.
// Then a stand-in hub (an old or hostile one: the real server refuses such input) sends a request nested too deep for
// the browser to store: the extension skips that one, shows the others, and re-sends its queued decision.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { PROTOCOL_VERSION, PeerFrameSchema, type PeerFrame, type RequestView } from '../../shared/wire-protocol.js';
import { northmarkProposal } from '../fixtures/northmark.js';
import { connect, type Harness } from '../helpers/mcp-harness.js';
import { freePort } from '../helpers/scripted-extension.js';
import { expectAccessibleInEachScheme } from './axe-schemes.js';
import { StandInHandshake, sendFrame } from './stand-in-hub.js';
import {
  browserFound, chromiumSuite, launchExtension, pairedPopup, pairInSettings, setHubPort, pairingCode, type ExtensionBrowser,
} from './extension-browser.js';

const UI_TIMEOUT = 15_000;
const ARTIFACTS = join(process.cwd(), 'test-results');

const title = chromiumSuite('the history end to end');

describe.skipIf(!browserFound)(title, () => {
  const stateDir = mkdtempSync(join(tmpdir(), 'elicitly-e2e-history-'));
  const port = freePort();
  const env = { ELICITLY_STATE_DIR: stateDir, ELICITLY_PORT: String(port) };
  let agent: Harness;
  let browser: ExtensionBrowser;
  let popup: Page;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    agent = await connect('v2-2025', { env });
    // The first approval-family call makes this process the hub.
    await agent.callTool('elicit_status', { elicitationId: 'el_warmup' });
    browser = await launchExtension();
    popup = await pairedPopup(browser, { port, code: () => pairingCode(env), errors: pageErrors, timeout: UI_TIMEOUT });
    popup.setDefaultTimeout(UI_TIMEOUT);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await agent?.close();
    rmSync(stateDir, { recursive: true, force: true });
  });

  /** The decision cell of the history row whose message is `message`. */
  const decisionCell = (message: string) => popup.getByRole('row').filter({ has: popup.getByRole('button', { name: message, exact: true }) }).getByRole('cell').nth(2);

  it('a decided proposal reads Approved in the history, and opens to proposed vs submitted and what was included', async () => {
    const message = 'Sync NorthMark Strategies into Salesforce (history)';
    const result = await agent.callTool('elicit_proposal', { ...structuredClone(northmarkProposal), message });
    expect(result.isError).toBeFalsy();
    const id = result.structuredContent?.elicitationId as string;

    await popup.evaluate(() => (location.hash = '#/inbox'));
    await popup.getByRole('button', { name: message }).first().click();
    await popup.getByRole('table', { name: 'Proposed changes' }).waitFor();
    await popup.getByLabel('Proposed Number of Employees').fill('250');
    await popup.getByRole('checkbox', { name: 'Include Institution Types' }).uncheck();
    await popup.getByRole('button', { name: 'Submit Changes' }).click();
    expect((await agent.callTool('elicit_await', { elicitationId: id, waitSeconds: 10 })).structuredContent).toEqual({ status: 'approved' });
    // Once the hub has answered, the review goes back to the inbox by itself; from there, as a person would.
    await popup.waitForURL(/#\/inbox$/, { timeout: UI_TIMEOUT });
    await popup.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'History' }).click();
    await popup.getByRole('table', { name: 'History' }).waitFor();
    await expect.poll(() => decisionCell(message).textContent(), { timeout: UI_TIMEOUT }).toBe('Approvednot collected yet');

    // The agent reads the result: the row says so, live, and still says what was decided.
    expect((await agent.callTool('elicit_result', { elicitationId: id })).structuredContent).toMatchObject({ status: 'consumed', decision: 'approved' });
    await expect.poll(() => decisionCell(message).textContent(), { timeout: UI_TIMEOUT }).toBe('Approvedcollected by the agent');
    await popup.getByRole('combobox', { name: 'Decision' }).selectOption('approved');
    await popup.getByRole('combobox', { name: 'Agent' }).selectOption({ index: 1 });
    await expect.poll(() => popup.getByRole('button', { name: message, exact: true }).count(), { timeout: UI_TIMEOUT }).toBe(1);

    await popup.getByRole('button', { name: message, exact: true }).click();
    const fields = popup.getByRole('table', { name: 'Fields' });
    await fields.waitFor();
    expect(popup.url()).toContain(`#/history/${encodeURIComponent(id)}`);
    const request = popup.getByLabel('Request');
    expect(await request.locator('dt').allTextContents()).toEqual(expect.arrayContaining(['Decision', 'Kind', 'Agent', 'Created', 'Decided']));
    expect(await request.locator('dd').first().textContent()).toBe('Approved · collected by the agent');
    expect(await fields.getByRole('columnheader').allTextContents()).toEqual(['Field', 'Salesforce', 'Proposed', 'Submitted', 'Included']);
    const rows = await fields.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => Array.from(tr.children, (c) => c.textContent ?? '')));
    expect(rows).toEqual([
      ['Name', '(blank)', 'NorthMark Strategies', 'NorthMark Strategies', 'Included'],
      ['Website', '(blank)', 'https://www.northmarkstrategies.com/', 'https://www.northmarkstrategies.com/', 'Included'],
      ['Number of Employees', '(blank)', '230', '250 (edited)', 'Included'],
      ['Institution Types', '(blank)', 'Asset Manager, Private Equity', 'not sent', 'Not included'],
    ]);
    await expectAccessibleInEachScheme(popup, 'a past proposal opened from the history in the popup');
    mkdirSync(ARTIFACTS, { recursive: true });
    await popup.locator('.mode-popup').screenshot({ path: join(ARTIFACTS, 'history-detail.png') });
    await popup.getByRole('link', { name: 'Back to history' }).click();
    await popup.getByRole('table', { name: 'History' }).waitFor();
    await expect.poll(() => decisionCell(message).textContent(), { timeout: UI_TIMEOUT }).toBe('Approvedcollected by the agent');
    await expectAccessibleInEachScheme(popup, 'the history with a decided row and filters set in the popup');
    await popup.locator('.mode-popup').screenshot({ path: join(ARTIFACTS, 'history.png') });
    expect(pageErrors).toEqual([]);
  }, 60_000);
});

describe.skipIf(!browserFound)(`${title}: a request that cannot be stored`, () => {
  const CODE = '0a1b2c3d4e5f';
  const KEY = '5e'.repeat(32);
  const KEY_ID = 'k_0123456789abcdef';
  let hub: WebSocketServer;
  let browser: ExtensionBrowser;
  let popup: Page;
  const sockets: WebSocket[] = [];
  const received: { connection: number; message: PeerFrame }[] = [];
  const workerLogs: string[] = [];
  const pageErrors: string[] = [];
  const now = Date.now();

  function view(id: string, message: string, context: unknown): RequestView {
    return {
      elicitationId: id, kind: 'approval', status: 'pending', message, createdAt: now, expiresAt: now + 3_600_000,
      requester: { client: 'stand-in agent', pid: 7 }, renderedTemplate: null,
      request: { kind: 'approval', mode: 'json', message, context, requestedSchema: null, labels: { ok: 'Approve', cancel: 'Decline' }, timeoutSeconds: 3600 },
    };
  }
  function deep(depth: number): unknown {
    let value: unknown = 'bottom';
    for (let i = 0; i < depth; i++) value = { next: value };
    return value;
  }
  const pending = [view('el_ok_1', 'First request that fits', { n: 1 }), view('el_deep', 'Nested 3000 deep', deep(3000)), view('el_ok_2', 'Second request that fits', { n: 2 })];
  const decides = (after = 0) => received.filter((r) => r.message.method === 'decide' && r.message.id !== undefined && r.connection > after);

  beforeAll(async () => {
    // Speaks the hub's side of the handshake (pairing with CODE, then proving KEY) and welcomes with `pending`.
    hub = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise<void>((resolve) => hub.once('listening', resolve));
    hub.on('connection', (socket) => {
      const connection = sockets.push(socket);
      const handshake = new StandInHandshake({ code: CODE, key: KEY, keyId: KEY_ID }, () => (hub.address() as AddressInfo).port);
      let queue = Promise.resolve();
      socket.on('error', () => undefined);
      socket.on('message', (data) => {
        queue = queue.then(async () => {
          const message = PeerFrameSchema.parse(JSON.parse(String(data)));
          received.push({ connection, message });
          await handshake.answer(socket, message, () => ({ protocol: PROTOCOL_VERSION, hubPid: 1, pending, rules: [] }));
        });
      });
    });
    browser = await launchExtension();
    (await browser.worker()).on('console', (m) => workerLogs.push(m.text()));
    popup = await browser.openPopup('#/settings');
    popup.setDefaultTimeout(UI_TIMEOUT);
    popup.on('pageerror', (error) => pageErrors.push(error.message));
    await setHubPort(popup, (hub.address() as AddressInfo).port, UI_TIMEOUT);
    await pairInSettings(popup, CODE, UI_TIMEOUT);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    for (const client of hub?.clients ?? []) client.terminate();
    await new Promise<void>((resolve) => (hub ? hub.close(() => resolve()) : resolve()));
  });

  const inbox = () => popup.getByRole('list', { name: 'Pending requests' }).getByRole('button').allTextContents();

  it('is skipped and reported; the rest of the welcome shows, the queued decision is re-sent, later requests show', async () => {
    await popup.evaluate(() => (location.hash = '#/inbox'));
    await expect.poll(async () => (await inbox()).filter((t) => t.includes('that fits')).length, { timeout: UI_TIMEOUT }).toBe(2);
    expect((await inbox()).some((t) => t.includes('Nested 3000 deep'))).toBe(false);
    await expect.poll(() => workerLogs.some((l) => /skipped request el_deep of the welcome: it cannot be stored here/.test(l)), { timeout: UI_TIMEOUT }).toBe(true);

    // A decision the stand-in never answers: it waits in the outbox, and the socket then drops.
    await popup.getByRole('list', { name: 'Pending requests' }).getByRole('button', { name: /^First request that fits/ }).click();
    await popup.getByRole('button', { name: 'Approve', exact: true }).click();
    await expect.poll(() => decides().length, { timeout: UI_TIMEOUT }).toBe(1);
    const first = decides()[0]!;
    sockets.at(-1)!.close(1001, 'hub closing');

    // The next welcome carries the deep request again; the outbox is replayed anyway, with the same decision and key
    // (a new call on the new socket: only its call id is the socket's own).
    await expect.poll(() => decides(first.connection).length, { timeout: 20_000 }).toBe(1);
    const again = decides(first.connection)[0]!;
    expect(again.message.params).toEqual(first.message.params);
    expect(again.message.params).toMatchObject({ elicitationId: 'el_ok_1', decision: 'approved', idempotencyKey: expect.any(String) });

    sendFrame(sockets.at(-1)!, { method: 'request.created', params: { request: view('el_later', 'Arrived after the deep one', { n: 3 }) } });
    await popup.evaluate(() => (location.hash = '#/inbox'));
    await expect.poll(async () => (await inbox()).some((t) => t.startsWith('Arrived after the deep one')), { timeout: UI_TIMEOUT }).toBe(true);
    expect(pageErrors).toEqual([]);
  }, 60_000);
});

// The whole product in real parts: the stdio MCP server started by a real MCP client, its hub, and the built extension
// in headless Chromium, driven by accessible names the way a person (or a screen reader) finds things.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { randomHex } from '../../shared/hub-auth.js';
import { readStoredRow } from './stored-row.js';
import { shownHash } from '../../shared/shown-hash.js';
import { PAIRING_SUBPROTOCOL, PROTOCOL_VERSION, SUBPROTOCOL } from '../../shared/wire-protocol.js';
import { REFUSAL_TEXT } from '../../kit/ui/labels.js';
import { northmarkProposal } from '../fixtures/northmark.js';
import { connect, type Harness } from '../helpers/mcp-harness.js';
import { freePort } from '../helpers/scripted-extension.js';
import { expectAccessibleInEachScheme } from './axe-schemes.js';
import {
  browserFound, chromiumSuite, launchExtension, pairInSettings, setHubPort, pairingCode, type ExtensionBrowser,
} from './extension-browser.js';

const UI_TIMEOUT = 15_000;
const ARTIFACTS = join(process.cwd(), 'test-results');
/** The browser's time zone, pinned (Chromium reads TZ) so a local time has a known offset: +01:00 on 2026-11-30. */
const BROWSER_ZONE = 'Europe/Paris';

const title = chromiumSuite('the extension end to end');

describe.skipIf(!browserFound)(title, () => {
  const stateDir = mkdtempSync(join(tmpdir(), 'elicitly-e2e-'));
  const port = freePort();
  const env = { ELICITLY_STATE_DIR: stateDir, ELICITLY_PORT: String(port) };
  let agent: Harness;
  let browser: ExtensionBrowser;
  let popup: Page;
  const pageErrors: string[] = [];
  const originalZone = process.env.TZ;

  const created = (result: { structuredContent?: Record<string, unknown>; isError?: boolean }) => {
    expect(result.isError).toBeFalsy();
    return result.structuredContent?.elicitationId as string;
  };

  async function openFromInbox(page: Page, message: string): Promise<void> {
    if (!(await page.url()).endsWith('#/inbox')) await page.evaluate(() => (location.hash = '#/inbox'));
    await page.getByRole('button', { name: message }).first().click({ timeout: UI_TIMEOUT });
  }

  /** Creates an approval, lets the hub go away, and approves it in the popup: the decision waits in the outbox. */
  async function approveWhileHubAway(message: string, step: string): Promise<string> {
    const id = created(await agent.callTool('elicit_approval', { message, context: { step } }));
    await openFromInbox(popup, message);
    await popup.getByRole('button', { name: 'Approve' }).waitFor({ timeout: UI_TIMEOUT });
    await agent.close();
    await popup.locator('[data-state="reconnecting"]').first().waitFor({ timeout: UI_TIMEOUT });
    await popup.getByRole('button', { name: 'Approve' }).click();
    await popup.getByText('Waiting for the hub to deliver this decision.').waitFor({ timeout: UI_TIMEOUT });
    return id;
  }

  /** axe on the review of `id` in the tab the extension opens for it (wider than the popup: the grid lays out anew). */
  async function expectAccessibleReviewTab(id: string, where: string, shown: (tab: Page) => Locator): Promise<void> {
    const tab = await browser.context.newPage();
    tab.on('pageerror', (error) => pageErrors.push(error.message));
    try {
      await tab.goto(`chrome-extension://${browser.extensionId}/review.html#/review/${encodeURIComponent(id)}`);
      await shown(tab).waitFor({ timeout: UI_TIMEOUT });
      await expectAccessibleInEachScheme(tab, where);
    } finally {
      await tab.close();
    }
  }


  /**
   * The hash of what the extension shows for `id` (its stored row's request and template): the hub took the decision
   * only if it is its own request's, and its receipt's `requestHash` says which.
   */
  async function shownByExtension(id: string): Promise<string> {
    const row = await popup.evaluate(readStoredRow, id);
    if (!row) throw new Error(`no row for ${id} in the extension`);
    return shownHash(row);
  }

  async function waitConnected(page: Page): Promise<void> {
    await page.locator('[data-state="connected"]').first().waitFor({ timeout: UI_TIMEOUT });
  }

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    agent = await connect('v2-2025', { env });
    // The first approval-family call makes this process the hub.
    await agent.callTool('elicit_status', { elicitationId: 'el_warmup' });
    // Playwright starts the browser with this process's environment.
    process.env.TZ = BROWSER_ZONE;
    browser = await launchExtension();
    popup = await browser.openPopup('#/settings');
    popup.on('pageerror', (error) => pageErrors.push(error.message));
    await setHubPort(popup, port, UI_TIMEOUT);
    // Every extension pairs once, Chrome's pinned id included: with no key it opens no socket and says so.
    await popup.locator('[data-state="pairing_needed"]').first().waitFor({ timeout: UI_TIMEOUT });
    await pairInSettings(popup, await pairingCode(env), UI_TIMEOUT);
  }, 60_000);

  afterAll(async () => {
    process.env.TZ = originalZone;
    await browser?.close();
    await agent?.close();
    rmSync(stateDir, { recursive: true, force: true });
  });

  it('the install opened the first-run page, which asks for the pairing code; the popup says this browser is paired', async () => {
    const welcome = await browser.firstRunPage();
    await welcome.getByRole('heading', { name: 'Pair this browser with elicitly-companion' }).waitFor({ timeout: UI_TIMEOUT });
    expect(await welcome.getByLabel('Pairing code').count()).toBe(1);
    expect(await welcome.getByRole('button', { name: 'Pair', exact: true }).count()).toBe(1);
    expect(await popup.getByText(`This browser is paired with the hub on port ${port}.`).count()).toBe(1);
  });

  it('axe, light and dark: the first-run page, the settings and the empty inbox have no serious violation', async () => {
    const welcome = await browser.firstRunPage();
    await welcome.getByRole('heading', { name: 'Pair this browser with elicitly-companion' }).waitFor({ timeout: UI_TIMEOUT });
    await expectAccessibleInEachScheme(welcome, 'the first-run page');
    await popup.getByText(`This browser is paired with the hub on port ${port}.`).waitFor({ timeout: UI_TIMEOUT });
    await expectAccessibleInEachScheme(popup, 'the settings in the popup');
    await popup.evaluate(() => (location.hash = '#/inbox'));
    await popup.getByText('Nothing to review.').waitFor({ timeout: UI_TIMEOUT });
    await expectAccessibleInEachScheme(popup, 'the empty inbox in the popup');
  });

  it('NorthMark (seed 004): edit, double-click a source, untick a row, submit → elicit_result has exactly the included values', async () => {
    const message = 'Sync NorthMark Strategies from Apollo into Salesforce (submit)';
    const id = created(await agent.callTool('elicit_proposal', { ...structuredClone(northmarkProposal), message }));
    await openFromInbox(popup, message);
    const grid = popup.getByRole('table', { name: 'Proposed changes' });
    await grid.waitFor({ timeout: UI_TIMEOUT });

    expect(await popup.getByRole('checkbox', { name: 'Include Name' }).isDisabled()).toBe(true);
    expect(await popup.getByRole('cell', { name: 'Crunchbase: Name' }).getAttribute('title')).toBe('Double-click to use as proposed value.');
    await popup.getByLabel('Proposed Number of Employees').fill('250');
    await popup.getByRole('cell', { name: 'Crunchbase: Name' }).dblclick();
    expect(await popup.getByLabel('Proposed Name').inputValue()).toBe('NorthMark Strategies Inc.');
    await popup.getByRole('checkbox', { name: 'Include Institution Types' }).uncheck();
    expect(await popup.getByText('3 of 4 included').count()).toBe(1);
    await expectAccessibleInEachScheme(popup, 'the proposal review in the popup');
    await expectAccessibleReviewTab(id, 'the proposal review in a tab', (tab) => tab.getByRole('table', { name: 'Proposed changes' }));
    await grid.screenshot({ path: join(ARTIFACTS, 'proposal-grid.png') });
    await popup.locator('.mode-popup').screenshot({ path: join(ARTIFACTS, 'proposal-review.png') });
    await popup.getByRole('button', { name: 'Submit Changes' }).click();

    const awaited = await agent.callTool('elicit_await', { elicitationId: id, waitSeconds: 10 });
    expect(awaited.structuredContent).toEqual({ status: 'approved' });
    expect((await agent.callTool('elicit_result', { elicitationId: id })).structuredContent).toEqual({
      status: 'consumed',
      receipt: expect.objectContaining({ decidedVia: 'extension', ledgerIndex: expect.any(Number), requestHash: await shownByExtension(id) }),
      decision: 'approved',
      action: 'submit',
      decidedVia: 'extension',
      context: northmarkProposal.context,
      values: { name: 'NorthMark Strategies Inc.', website: 'https://www.northmarkstrategies.com/', employeeCount: 250 },
    });
  });

  it('the Cancel path: elicit_result reports a rejected proposal with its context', async () => {
    const message = 'Sync NorthMark Strategies (cancel path)';
    const id = created(await agent.callTool('elicit_proposal', { ...structuredClone(northmarkProposal), message }));
    await openFromInbox(popup, message);
    await popup.getByRole('button', { name: 'Cancel', exact: true }).click({ timeout: UI_TIMEOUT });
    await agent.callTool('elicit_await', { elicitationId: id, waitSeconds: 10 });
    expect((await agent.callTool('elicit_result', { elicitationId: id })).structuredContent).toEqual({
      status: 'consumed', decision: 'rejected', action: 'cancel', decidedVia: 'extension', context: northmarkProposal.context,
      receipt: expect.objectContaining({ decidedVia: 'extension', ledgerIndex: expect.any(Number), requestHash: await shownByExtension(id) }),
    });
  });

  it('a form-mode approval: the person fills the fields and approves', async () => {
    const message = 'Name the release branch';
    const id = created(await agent.callTool('elicit_approval', {
      message,
      requestedSchema: {
        type: 'object',
        properties: { branch: { type: 'string', title: 'Branch', minLength: 3 }, tag: { type: 'boolean', title: 'Tag it' } },
        required: ['branch'],
      },
    }));
    await openFromInbox(popup, message);
    await popup.getByLabel('Branch').fill('release/2.1');
    await popup.getByLabel('Tag it').check();
    await expectAccessibleInEachScheme(popup, 'the form-mode approval in the popup');
    await popup.getByRole('button', { name: 'Approve' }).click();
    await agent.callTool('elicit_await', { elicitationId: id, waitSeconds: 10 });
    expect((await agent.callTool('elicit_result', { elicitationId: id })).structuredContent).toMatchObject({
      status: 'consumed', decision: 'approved', action: 'submit', decidedVia: 'extension', values: { branch: 'release/2.1', tag: true },
    });
  });

  it('a proposal with a required yes/no without default and date-times: the agent gets false, its own default, and local time with the browser\'s offset', async () => {
    const message = 'Schedule the Beta kickoff';
    const id = created(await agent.callTool('elicit_proposal', {
      message,
      columns: { sources: [{ key: 'crm', label: 'CRM' }], current: { label: 'Calendar' } },
      requestedSchema: {
        type: 'object',
        properties: {
          confirmed: { type: 'boolean', title: 'Confirmed' },
          startsAt: { type: 'string', format: 'date-time', title: 'Starts at', default: '2026-11-30T16:05:00Z' },
          endsAt: { type: 'string', format: 'date-time', title: 'Ends at' },
        },
        required: ['confirmed'],
      },
      fields: { startsAt: { sources: { crm: '2026-11-30T16:05:00Z' }, current: null } },
    }));
    await openFromInbox(popup, message);
    const confirmed = popup.getByLabel('Proposed Confirmed');
    await confirmed.waitFor({ timeout: UI_TIMEOUT });
    // The unticked box is what the agent gets: false, not null.
    expect(await confirmed.isChecked()).toBe(false);
    expect(await popup.getByRole('checkbox', { name: 'Include Confirmed' }).isDisabled()).toBe(true);
    // The agent's default, written in UTC, is shown in the browser's local time.
    expect(await popup.getByLabel('Proposed Starts at').inputValue()).toBe('2026-11-30T17:05');
    const ends = popup.getByLabel('Proposed Ends at');
    expect(await ends.getAttribute('type')).toBe('datetime-local');
    await ends.fill('2026-11-30T18:30');
    expect(await popup.getByText('Your local time (UTC+01:00)').count()).toBe(2);
    await popup.getByRole('button', { name: 'Submit Changes' }).click();

    expect((await agent.callTool('elicit_await', { elicitationId: id, waitSeconds: 10 })).structuredContent).toEqual({ status: 'approved' });
    expect((await agent.callTool('elicit_result', { elicitationId: id })).structuredContent).toMatchObject({
      decision: 'approved',
      values: { confirmed: false, startsAt: '2026-11-30T16:05:00Z', endsAt: '2026-11-30T18:30:00+01:00' },
    });
  });

  it('a json-mode approval with a template: formatting shows, scripts and remote loads do not, the comment travels back', async () => {
    const message = 'Deploy 2.1 to production';
    const id = created(await agent.callTool('elicit_approval', {
      message,
      context: { env: 'production', version: '2.1' },
      displayTemplate: '<h2>Deploy {{ context.version }}</h2><p>to <b>{{ context.env }}</b></p><script>window.__pwned = 1</script><img src="http://127.0.0.1:9/x.png" onerror="window.__pwned = 2">',
      labels: { ok: 'Ship it', cancel: 'Hold' },
    }));
    await openFromInbox(popup, message);
    await popup.getByRole('heading', { name: 'Deploy 2.1', exact: true }).waitFor({ timeout: UI_TIMEOUT });
    expect(await popup.locator('.template b').textContent()).toBe('production');
    expect(await popup.locator('.template img, .template script').count()).toBe(0);
    expect(await popup.evaluate(() => Reflect.get(window, '__pwned') as unknown)).toBeUndefined();
    await popup.getByLabel('Comment (optional)').fill('after the standup');
    await expectAccessibleInEachScheme(popup, 'the json-mode approval in the popup');
    await expectAccessibleReviewTab(id, 'the json-mode approval in a tab', (tab) => tab.getByRole('heading', { name: 'Deploy 2.1', exact: true }));
    await popup.getByRole('button', { name: 'Ship it' }).click();
    await agent.callTool('elicit_await', { elicitationId: id, waitSeconds: 10 });
    expect((await agent.callTool('elicit_result', { elicitationId: id })).structuredContent).toEqual({
      status: 'consumed', decision: 'approved', action: 'submit', decidedVia: 'extension', context: { env: 'production', version: '2.1' }, values: {}, comment: 'after the standup',
      // The template the hub rendered is part of what was shown, and of the hash.
      receipt: expect.objectContaining({ decidedVia: 'extension', ledgerIndex: expect.any(Number), requestHash: await shownByExtension(id) }),
    });
  });

  it('a row changed in the extension after the hub sent it: the hub refuses its decision (shown_mismatch), the review says so, the request stays pending', async () => {
    const message = 'Rotate the signing key';
    const id = created(await agent.callTool('elicit_approval', { message, context: { key: 'prod-signing' } }));
    await popup.evaluate(() => (location.hash = '#/inbox'));
    await popup.getByRole('button', { name: message }).waitFor({ timeout: UI_TIMEOUT });
    const held = await shownByExtension(id);
    // What a stale or altered view amounts to: the row the review renders is no longer the request the hub holds.
    await popup.evaluate((key) => new Promise<void>((resolve, reject) => {
      const open = indexedDB.open('elicitly');
      open.onerror = () => reject(open.error ?? new Error('the database did not open'));
      open.onsuccess = () => {
        const tx = open.result.transaction('requests', 'readwrite');
        const store = tx.objectStore('requests');
        const get = store.get(key);
        get.onsuccess = () => {
          const row = get.result as { request: { context: unknown } };
          store.put({ ...row, request: { ...row.request, context: { key: 'staging-signing' } } });
        };
        tx.oncomplete = () => {
          open.result.close();
          resolve();
        };
        tx.onerror = () => reject(tx.error ?? new Error('the row could not be changed'));
      };
    }), id);
    expect(await shownByExtension(id)).not.toBe(held);
    await popup.reload();
    await waitConnected(popup);
    await openFromInbox(popup, message);
    expect(await popup.getByRole('region', { name: 'Context' }).textContent({ timeout: UI_TIMEOUT })).toContain('staging-signing');
    await popup.getByRole('button', { name: 'Approve' }).click();
    await popup.getByRole('alert').filter({ hasText: REFUSAL_TEXT.shown_mismatch }).waitFor({ timeout: UI_TIMEOUT });
    expect((await agent.callTool('elicit_status', { elicitationId: id })).structuredContent).toEqual({ status: 'pending' });
    expect((await agent.callTool('elicit_cancel', { elicitationId: id })).structuredContent).toEqual({ status: 'canceled' });
    await popup.evaluate(() => (location.hash = '#/inbox'));
  });

  it('looks: the popup fits 800×600 with the grid scrolling inside it, long values wrap, focus shows, dark mode follows the system', async () => {
    const long = 'x'.repeat(400);
    const properties: Record<string, unknown> = {};
    const fields: Record<string, unknown> = {};
    for (let i = 0; i < 40; i++) {
      properties[`f${i}`] = { type: 'string', title: `A rather long field title number ${i} that needs to wrap`, default: `${long}${i}` };
      fields[`f${i}`] = { sources: { crm: `${long}-source-${i}` }, current: `${long}-current-${i}` };
    }
    const message = 'Forty long fields';
    const id = created(await agent.callTool('elicit_proposal', {
      message, columns: { sources: [{ key: 'crm', label: 'CRM' }], current: { label: 'Now' } },
      requestedSchema: { type: 'object', properties }, fields,
    }));
    await popup.setViewportSize({ width: 800, height: 600 });
    await openFromInbox(popup, message);
    await popup.getByRole('table', { name: 'Proposed changes' }).waitFor({ timeout: UI_TIMEOUT });
    const layout = await popup.evaluate(() => {
      const app = document.querySelector('.app') as HTMLElement;
      const scroll = document.querySelector('.grid-scroll') as HTMLElement;
      const cell = document.querySelector('.proposal-grid td.source') as HTMLElement;
      const box = app.getBoundingClientRect();
      return {
        appWidth: box.width, appHeight: box.height, pageScrollWidth: document.documentElement.scrollWidth,
        gridScrolls: scroll.scrollHeight > scroll.clientHeight, gridOverflowsSideways: scroll.scrollWidth > scroll.clientWidth + 1,
        cellRight: cell.getBoundingClientRect().right, scrollRight: scroll.getBoundingClientRect().right, cellLines: cell.getClientRects().length, cellHeight: cell.getBoundingClientRect().height,
      };
    });
    expect(layout.appWidth).toBeLessThanOrEqual(800);
    expect(layout.appHeight).toBeLessThanOrEqual(600);
    expect(layout.pageScrollWidth).toBeLessThanOrEqual(800);
    expect(layout.gridScrolls).toBe(true);
    expect(layout.gridOverflowsSideways).toBe(false);
    // A 400-character value wraps inside its cell instead of pushing the grid wider.
    expect(layout.cellRight).toBeLessThanOrEqual(layout.scrollRight);
    expect(layout.cellHeight).toBeGreaterThan(60);

    // Focus is visible on an editor inside the scrolling grid.
    await popup.getByLabel('Proposed A rather long field title number 0 that needs to wrap').focus();
    await popup.keyboard.press('Tab');
    const outline = await popup.evaluate(() => {
      const style = getComputedStyle(document.activeElement as Element);
      return { style: style.outlineStyle, width: parseFloat(style.outlineWidth) };
    });
    expect(outline.style).not.toBe('none');
    expect(outline.width).toBeGreaterThan(0);

    // Light and dark follow prefers-color-scheme.
    const luminance = () => popup.evaluate(() => {
      const [r, g, b] = getComputedStyle(document.body).backgroundColor.match(/\d+/g)!.map(Number);
      return (0.2126 * r! + 0.7152 * g! + 0.0722 * b!) / 255;
    });
    await popup.emulateMedia({ colorScheme: 'light' });
    expect(await luminance()).toBeGreaterThan(0.8);
    await popup.emulateMedia({ colorScheme: 'dark' });
    expect(await luminance()).toBeLessThan(0.2);
    await popup.screenshot({ path: join(ARTIFACTS, 'popup-dark-grid.png') });
    await popup.emulateMedia({ colorScheme: 'light' });

    expect((await agent.callTool('elicit_cancel', { elicitationId: id })).structuredContent).toEqual({ status: 'canceled' });
    await popup.evaluate(() => (location.hash = '#/inbox'));
  });

  it('the service worker stopped through the DevTools protocol comes back with every pending request', async () => {
    const before = 'Pending before the worker stops';
    created(await agent.callTool('elicit_approval', { message: before, context: { n: 1 } }));
    await popup.getByRole('button', { name: before }).waitFor({ timeout: UI_TIMEOUT });
    await browser.stopServiceWorkers();
    // Raised while no worker runs: only the welcome after the restart can bring it.
    const during = 'Raised while the worker was stopped';
    created(await agent.callTool('elicit_approval', { message: during, context: { n: 2 } }));
    await popup.reload();
    await waitConnected(popup);
    await popup.getByRole('button', { name: during }).waitFor({ timeout: UI_TIMEOUT });
    await popup.getByRole('button', { name: before }).waitFor({ timeout: UI_TIMEOUT });
    await expectAccessibleInEachScheme(popup, 'the inbox with pending requests in the popup');
  });

  it('a decision made while the hub is down is delivered once it returns', async () => {
    const id = await approveWhileHubAway('Approve while the hub is away', 'migrate');
    // The context is a named region: a bare <pre> is generic, and a name on it is dropped (axe's aria-prohibited-attr,
    // which axe can only flag for manual review while the element has text).
    expect(await popup.getByRole('region', { name: 'Context' }).textContent({ timeout: UI_TIMEOUT })).toContain('"step": "migrate"');
    await expectAccessibleInEachScheme(popup, 'a decision waiting for the hub, the header reconnecting');

    agent = await connect('v2-2025', { env });
    await agent.callTool('elicit_status', { elicitationId: 'el_warmup' });
    await popup.reload();
    await waitConnected(popup);
    const awaited = await agent.callTool('elicit_await', { elicitationId: id, waitSeconds: 15 });
    expect(awaited.structuredContent).toEqual({ status: 'approved' });
    expect((await agent.callTool('elicit_result', { elicitationId: id })).structuredContent).toEqual({
      status: 'consumed', decision: 'approved', action: 'submit', decidedVia: 'extension', context: { step: 'migrate' }, values: {},
      // Queued with the hash of what was shown, and sent to a hub started anew from its journal: the same request.
      receipt: expect.objectContaining({ decidedVia: 'extension', ledgerIndex: expect.any(Number), requestHash: await shownByExtension(id) }),
    });
  }, 60_000);

  it('the popup threw no uncaught error through all of the above', () => {
    expect(pageErrors).toEqual([]);
  });

  it('a web page on another localhost port cannot open the hub socket', async () => {
    const server: Server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html><title>elsewhere</title><p>an ordinary page</p>');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const page = await browser.context.newPage();
    try {
      await page.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
      const outcome = await page.evaluate(async ({ hubPort, protocols }) => {
        const attempt = (protocols: string[]) => new Promise<string>((resolve) => {
          const ws = new WebSocket(`ws://127.0.0.1:${hubPort}`, protocols);
          ws.onopen = () => resolve('opened');
          ws.onclose = () => resolve('refused');
          setTimeout(() => resolve('timeout'), 5000);
        });
        return [await attempt([protocols.plain]), await attempt([protocols.plain, protocols.pairing])];
      }, { hubPort: port, protocols: { plain: SUBPROTOCOL, pairing: PAIRING_SUBPROTOCOL } });
      expect(outcome).toEqual(['refused', 'refused']);
    } finally {
      await page.close();
      // The browser keeps the page's connection alive; close() alone would wait for it.
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('a process holding the port after the hub left: "Untrusted hub on port N", it gets only hellos, and the decision waits for the real hub', async () => {
    const id = await approveWhileHubAway('Approve while something squats the port', 'squat');

    // It accepts any socket and answers every hello with a challenge it cannot prove (it does not hold the key).
    const impostor = new WebSocketServer({ host: '127.0.0.1', port });
    await new Promise<void>((resolve) => impostor.once('listening', resolve));
    // Each connection ends when the extension, refusing the proof, closes it: nothing more can arrive on it after that.
    const connections: { protocol: string | undefined; frames: unknown[]; ended: Promise<void> }[] = [];
    let secondArrived: () => void = () => undefined;
    const second = new Promise<void>((resolve) => (secondArrived = resolve));
    impostor.on('connection', (socket, request) => {
      const seen = { protocol: request.headers['sec-websocket-protocol'], frames: [] as unknown[], ended: new Promise<void>((resolve) => socket.once('close', () => resolve())) };
      connections.push(seen);
      if (connections.length === 2) secondArrived();
      socket.on('error', () => undefined);
      socket.on('message', (data) => {
        const frame: unknown = JSON.parse(String(data));
        seen.frames.push(frame);
        if (seen.frames.length === 1) socket.send(JSON.stringify({ id: 'hello', result: { nonce: randomHex(32), proof: randomHex(32) } }));
      });
    });
    try {
      // A page opening wakes the background, which connects at once instead of waiting out its backoff.
      await popup.reload();
      const header = popup.locator('[data-state="untrusted_hub"]').first();
      await header.waitFor({ timeout: UI_TIMEOUT });
      expect(await header.textContent()).toMatch(new RegExp(
        `^Untrusted hub on port ${port}: something that is not this computer's Elicitly hub answers on the port, so nothing was sent to it\\. (Next try in \\d+ s\\.|Trying now…)$`,
      ));
      // A second attempt meets it again, and the header keeps saying so.
      await popup.reload();
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`a second attempt, both closed: not within 10 s (${connections.length} connections)`)), 10_000);
        void second.then(() => Promise.all(connections.map((c) => c.ended))).then(() => (clearTimeout(timer), resolve()));
      });
      await header.waitFor({ timeout: UI_TIMEOUT });
      expect(connections.length).toBeGreaterThanOrEqual(2);
      for (const connection of connections) {
        expect(connection.protocol).toBe(SUBPROTOCOL);
        expect(connection.frames).toEqual([{
          id: 'hello',
          method: 'hello',
          params: {
            protocol: PROTOCOL_VERSION, role: 'extension', client: { name: 'elicitly-companion-extension', version: expect.any(String) },
            nonce: expect.stringMatching(/^[0-9a-f]{64}$/), keyId: expect.stringMatching(/^k_[0-9a-f]{16}$/),
          },
        }]);
      }
    } finally {
      for (const client of impostor.clients) client.terminate();
      await new Promise<void>((resolve) => impostor.close(() => resolve()));
    }

    agent = await connect('v2-2025', { env });
    await agent.callTool('elicit_status', { elicitationId: 'el_warmup' });
    await popup.reload();
    await waitConnected(popup);
    expect((await agent.callTool('elicit_await', { elicitationId: id, waitSeconds: 15 })).structuredContent).toEqual({ status: 'approved' });
    expect(pageErrors).toEqual([]);
  }, 90_000);
});

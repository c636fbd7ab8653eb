// The review inside the chat (MCP App) in a real host's shoes: a test host built on the SDK's own host side
// (`AppBridge`, ./app-host/) in headless Chromium renders the server's UI resource in a sandboxed frame under the spec's
// CSP and proxies the view's calls to the built server over stdio, through a real v2 client that declared the UI
// extension. The "model" calls the tools through that client; the person reviews inside the view by accessible names,
// the same names as in the extension. Then the real extension, paired with the same hub, decides the same request at
// the same moment as the app: one decision stands, and the surface that lost says so.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP_META_KEY, REVIEW_APP_URI } from '../../shared/app-surface.js';
import { northmarkProposal } from '../fixtures/northmark.js';
import { freePort } from '../helpers/scripted-extension.js';
import {
  buildHostScript, callTool, connectAppClient, manyFieldProposal, openAppHost, type AppClient, type AppHostPage, type HostEvent, type ToolCallResult,
} from './app-host/app-host.js';
import { HOST_COLOURS, ONE_SIDED_INVERSE, VIEW_PRIMARY } from './app-host/host-colours.js';
import { describeViolations, seriousViolations, violationsOf } from './axe.js';
import {
  browserFound, CHROMIUM_PATH, chromiumSuite, launchExtension, pairedPopup, pairingCode, type ExtensionBrowser,
} from './extension-browser.js';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { SERVER_ENTRY } from '../helpers/mcp-harness.js';
import { APP_CAPABILITIES } from './app-host/app-host.js';

const UI_TIMEOUT = 15_000;
const NORTHMARK_VALUES = { name: 'NorthMark Strategies Inc.', website: 'https://www.northmarkstrategies.com/', employeeCount: 250 };

const title = chromiumSuite('the review inside the chat (MCP App) in a test host');

describe.skipIf(!browserFound)(title, () => {
  const stateDir = mkdtempSync(join(tmpdir(), 'elicitly-e2e-app-'));
  const port = freePort();
  const env = { ELICITLY_STATE_DIR: stateDir, ELICITLY_PORT: String(port) };
  let agent: AppClient;
  let browser: Browser;
  let hostScript: string;
  const hosts: AppHostPage[] = [];

  beforeAll(async () => {
    hostScript = await buildHostScript();
    agent = await connectAppClient(env);
    // The first approval-family call makes this process the hub (the extension below pairs with it).
    await callTool(agent.client, 'elicit_status', { elicitationId: 'el_warmup' });
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'] });
  }, 60_000);

  afterAll(async () => {
    for (const host of hosts) await host.close().catch(() => undefined);
    await browser?.close();
    await agent?.close();
    rmSync(stateDir, { recursive: true, force: true });
  });

  async function newHost(viewport?: { width: number; height: number }): Promise<AppHostPage> {
    const host = await openAppHost(browser, agent.client, hostScript, viewport);
    hosts.push(host);
    return host;
  }

  /** The model's call: a pending proposal whose result carries the view's key in `_meta`. */
  async function propose(input: Record<string, unknown>): Promise<{ id: string; result: ToolCallResult }> {
    const result = await callTool(agent.client, 'elicit_proposal', input);
    expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
    const id = result.structuredContent?.elicitationId as string;
    expect(result._meta?.[APP_META_KEY]).toMatchObject({ elicitationId: id });
    return { id, result };
  }

  async function outcome(id: string): Promise<Record<string, unknown> | undefined> {
    const awaited = await callTool(agent.client, 'elicit_await', { elicitationId: id, waitSeconds: 10 });
    expect(['approved', 'rejected']).toContain(awaited.structuredContent?.status);
    return (await callTool(agent.client, 'elicit_result', { elicitationId: id })).structuredContent;
  }

  /** The receipt elicit_result carries for a decision made in the chat: the hub took it on the request it holds. */
  const appReceipt = expect.objectContaining({ decidedVia: 'app', ledgerIndex: expect.any(Number), requestHash: expect.stringMatching(/^[0-9a-f]{64}$/) });

  const northmark = (message: string) => ({ ...structuredClone(northmarkProposal), message }) as unknown as Record<string, unknown>;
  const calls = (events: HostEvent[]) => events.flatMap((e) => (e.type === 'tool-call' ? [`${e.name}${e.allowed ? '' : ' (refused)'}`] : []));

  it('NorthMark (seed 004) inside the app: edit, double-click a source, untick a row, Submit Changes → elicit_result has exactly the included values, decided via the app', async () => {
    const { tools } = await agent.client.listTools();
    const proposalTool = tools.find((t) => t.name === 'elicit_proposal');
    expect(proposalTool?._meta).toMatchObject({ ui: { resourceUri: REVIEW_APP_URI } });

    const input = northmark('Sync NorthMark Strategies into Salesforce (in the chat)');
    const { id, result } = await propose(input);
    const host = await newHost();
    await host.show('elicit_proposal', input, result);
    const { view } = host;
    const grid = view.getByRole('table', { name: 'Proposed changes' });
    await grid.waitFor({ timeout: UI_TIMEOUT });

    expect(await view.getByRole('checkbox', { name: 'Include Name' }).isDisabled()).toBe(true);
    expect(await view.getByRole('cell', { name: 'Crunchbase: Name' }).getAttribute('title')).toBe('Double-click to use as proposed value.');
    await view.getByLabel('Proposed Number of Employees').fill('250');
    await view.getByRole('cell', { name: 'Crunchbase: Name' }).dblclick();
    expect(await view.getByLabel('Proposed Name').inputValue()).toBe('NorthMark Strategies Inc.');
    await view.getByRole('checkbox', { name: 'Include Institution Types' }).uncheck();
    expect(await view.getByText('3 of 4 included').count()).toBe(1);
    await view.getByRole('button', { name: 'Submit Changes' }).click();

    expect(await outcome(id)).toEqual({
      status: 'consumed', decision: 'approved', action: 'submit', context: northmarkProposal.context, values: NORTHMARK_VALUES, decidedVia: 'app', receipt: appReceipt,
    });
    await view.getByText(/^Decided here at /).waitFor({ timeout: UI_TIMEOUT });

    // The view read the request and decided through the app-only tools, which the host let it call; it reported a size.
    expect(calls(host.events)).toEqual(['elicit_app_view', 'elicit_app_decide', 'elicit_app_view']);
    const sizes = host.events.filter((e): e is Extract<HostEvent, { type: 'size' }> => e.type === 'size');
    expect(sizes.length).toBeGreaterThan(0);
    expect(Math.max(...sizes.map((s) => s.height ?? 0))).toBeGreaterThan(100);
    // The test host's own isolation: the view cannot reach the server past the bridge through Playwright's binding.
    const frame = await host.viewFrame();
    await expect(frame.evaluate(() => window.elicitlyMcpJson('tools/list', {}))).rejects.toThrow(/only the host page may reach the server/);
    expect(host.errors).toEqual([]);
  });

  it('Esc asks first, then "Yes, cancel" → the rejected envelope, decided via the app', async () => {
    const input = northmark('Sync NorthMark Strategies (cancel with Esc in the chat)');
    const { id, result } = await propose(input);
    const host = await newHost();
    await host.show('elicit_proposal', input, result);
    const { view } = host;
    await view.getByLabel('Proposed Name').click({ timeout: UI_TIMEOUT });
    await host.page.keyboard.press('Escape');
    const dialog = view.getByRole('alertdialog', { name: 'Cancel this request?' });
    await dialog.waitFor({ timeout: UI_TIMEOUT });
    await dialog.getByRole('button', { name: 'Yes, cancel' }).click();
    expect(await outcome(id)).toEqual({ status: 'consumed', decision: 'rejected', action: 'cancel', context: northmarkProposal.context, decidedVia: 'app', receipt: appReceipt });
    await view.getByText(/^Decided here at /).waitFor({ timeout: UI_TIMEOUT });
    expect(host.errors).toEqual([]);
  });

  it('the Cancel button → the rejected envelope', async () => {
    const input = northmark('Sync NorthMark Strategies (Cancel button in the chat)');
    const { id, result } = await propose(input);
    const host = await newHost();
    await host.show('elicit_proposal', input, result);
    await host.view.getByRole('button', { name: 'Cancel', exact: true }).click({ timeout: UI_TIMEOUT });
    expect(await outcome(id)).toEqual({ status: 'consumed', decision: 'rejected', action: 'cancel', context: northmarkProposal.context, decidedVia: 'app', receipt: appReceipt });
    expect(host.errors).toEqual([]);
  });

  it('Ctrl+Enter submits, as in the extension', async () => {
    const input = northmark('Sync NorthMark Strategies (Ctrl+Enter in the chat)');
    const { id, result } = await propose(input);
    const host = await newHost();
    await host.show('elicit_proposal', input, result);
    await host.view.getByLabel('Proposed Number of Employees').fill('240', { timeout: UI_TIMEOUT });
    await host.page.keyboard.press('Control+Enter');
    expect(await outcome(id)).toMatchObject({
      decision: 'approved', action: 'submit', decidedVia: 'app',
      values: { name: 'NorthMark Strategies', website: 'https://www.northmarkstrategies.com/', employeeCount: 240, institutionTypes: ['Asset Manager', 'Private Equity'] },
    });
    expect(host.errors).toEqual([]);
  });

  it('a host that drops the result _meta: the review shows read-only and sends the person to the extension', async () => {
    const input = northmark('Sync NorthMark Strategies (no key in the chat)');
    const { id, result } = await propose(input);
    const host = await newHost();
    const withoutMeta: ToolCallResult = { ...result };
    delete withoutMeta._meta;
    await host.show('elicit_proposal', input, withoutMeta);
    await host.view.getByText('Decide this in the Elicitly browser extension: this chat did not pass the review\'s key.').waitFor({ timeout: UI_TIMEOUT });
    expect(await host.view.getByRole('button', { name: 'Submit Changes' }).count()).toBe(0);
    expect(calls(host.events)).toEqual(['elicit_app_view']);
    expect((await callTool(agent.client, 'elicit_status', { elicitationId: id })).structuredContent).toEqual({ status: 'pending' });
    expect(host.errors).toEqual([]);
    await callTool(agent.client, 'elicit_cancel', { elicitationId: id });
  });

  /** In the view: its width, what scrolls sideways, and which Include boxes, editors or card labels lie outside it. */
  async function narrowLayout(host: AppHostPage) {
    const frame = await host.viewFrame();
    return frame.evaluate(() => {
      const root = document.documentElement;
      const width = root.clientWidth;
      const name = (el: Element) => el.getAttribute('aria-label') ?? el.textContent ?? el.tagName;
      const scrollBoxes = [root, ...Array.from(document.querySelectorAll('body *')).filter((el) => /auto|scroll/.test(getComputedStyle(el).overflowX))];
      const controls = Array.from(document.querySelectorAll('.proposal-grid td.include input, .proposal-grid td.proposed :is(input, select, textarea), .proposal-grid .card-label'));
      const outside = (el: Element) => {
        const r = el.getBoundingClientRect();
        return r.width === 0 || r.left < 0 || r.right > width;
      };
      return {
        width,
        sideways: scrollBoxes.filter((el) => el.scrollWidth > el.clientWidth).map((el) => `${el.tagName}.${el.className}: ${el.scrollWidth} > ${el.clientWidth}`),
        controls: controls.length,
        outside: controls.filter(outside).map(name),
        // Each value in a card says whose it is.
        labels: Array.from(document.querySelectorAll('.proposal-grid tbody tr:first-child :is(td.source, td.current)')).map((td) => getComputedStyle(td, '::before').content),
      };
    });
  }

  it('a narrow chat frame (512 px, 390 px) shows each field as a card: nothing scrolls sideways, every Include and editor is in view, and what is set at 390 px is what elicit_result returns; full screen only on a click', async () => {
    const displayModes = (host: AppHostPage) => host.events.filter((e) => e.type === 'display-mode');
    for (const width of [512, 390]) {
      const input = northmark(`NorthMark in a ${width} px chat frame`);
      const { id, result } = await propose(input);
      const host = await newHost();
      await host.show('elicit_proposal', input, result, { inlineWidth: width });
      const { view } = host;
      await view.getByRole('table', { name: 'Proposed changes' }).waitFor({ timeout: UI_TIMEOUT });
      // The size reported after the grid rendered comes after any request the render made.
      await host.waitForEvent((e) => e.type === 'size' && (e.height ?? 0) > 300, UI_TIMEOUT);

      const layout = await narrowLayout(host);
      expect(layout, `${width} px`).toEqual({ width, sideways: [], controls: 4 + 4 + 4 + 4, outside: [], labels: ['"Apollo"', '"Crunchbase"', '"Salesforce"'] });
      expect(displayModes(host), `${width} px: no full screen without a click`).toEqual([]);
      expect(await view.getByRole('button', { name: 'Full screen' }).count()).toBe(1);

      if (width === 512) {
        await view.getByRole('button', { name: 'Full screen' }).click();
        expect(await host.waitForEvent((e) => e.type === 'display-mode', UI_TIMEOUT)).toEqual({ type: 'display-mode', requested: 'fullscreen', granted: 'fullscreen' });
        await view.getByRole('button', { name: 'Exit full screen' }).click({ timeout: UI_TIMEOUT });
        await view.getByRole('button', { name: 'Full screen' }).waitFor({ timeout: UI_TIMEOUT });
        expect(displayModes(host).map((e) => e.type === 'display-mode' && e.requested)).toEqual(['fullscreen', 'inline']);
        expect((await callTool(agent.client, 'elicit_cancel', { elicitationId: id })).structuredContent).toEqual({ status: 'canceled' });
      } else {
        // In the cards: type a value, take a source's by double-click, untick a row by its visible "Include" label.
        await view.getByLabel('Proposed Number of Employees').fill('250');
        await view.getByRole('cell', { name: 'Crunchbase: Name' }).dblclick();
        expect(await view.getByLabel('Proposed Name').inputValue()).toBe('NorthMark Strategies Inc.');
        const card = view.getByRole('row').filter({ has: view.getByRole('rowheader', { name: 'Institution Types' }) });
        await card.getByText('Include', { exact: true }).click();
        expect(await view.getByRole('checkbox', { name: 'Include Institution Types' }).isChecked()).toBe(false);
        expect(await view.getByText('3 of 4 included').count()).toBe(1);
        await view.getByRole('button', { name: 'Submit Changes' }).click();
        expect(await outcome(id)).toEqual({
          status: 'consumed', decision: 'approved', action: 'submit', context: northmarkProposal.context, values: NORTHMARK_VALUES, decidedVia: 'app', receipt: appReceipt,
        });
        await view.getByText(/^Decided here at /).waitFor({ timeout: UI_TIMEOUT });
        // A decided review has nothing a bigger frame would help with.
        expect(await view.getByRole('button', { name: 'Full screen' }).count()).toBe(0);
        expect(displayModes(host)).toEqual([]);
      }
      expect(host.errors).toEqual([]);
    }
  });

  it('full screen only on a click, even for a grid wider than the frame: NorthMark at 900 px and 100 fields from four sources stay inline until the button', async () => {
    const sizeAbove = (px: number) => (e: HostEvent) => e.type === 'size' && (e.height ?? 0) > px;

    const fits = northmark('NorthMark in a wide chat column');
    const small = await propose(fits);
    const narrowHost = await newHost();
    await narrowHost.show('elicit_proposal', fits, small.result, { inlineWidth: 900 });
    await narrowHost.view.getByRole('table', { name: 'Proposed changes' }).waitFor({ timeout: UI_TIMEOUT });
    await narrowHost.waitForEvent(sizeAbove(300), UI_TIMEOUT);
    expect(narrowHost.events.filter((e) => e.type === 'display-mode')).toEqual([]);
    expect(await narrowHost.view.getByRole('button', { name: 'Full screen' }).count()).toBe(1);
    expect((await callTool(agent.client, 'elicit_cancel', { elicitationId: small.id })).structuredContent).toEqual({ status: 'canceled' });

    const input = manyFieldProposal('A hundred fields from four sources', 100, 4);
    const { id, result } = await propose(input);
    const host = await newHost();
    await host.show('elicit_proposal', input, result, { inlineWidth: 900, theme: 'dark' });
    const { view } = host;
    const rows = view.locator('table[aria-label="Proposed changes"] tbody > tr');
    await rows.nth(99).waitFor({ state: 'attached', timeout: UI_TIMEOUT });
    expect(await rows.count()).toBe(100);
    await host.waitForEvent(sizeAbove(300), UI_TIMEOUT);
    expect(await view.locator('html').getAttribute('data-theme')).toBe('dark');
    expect(host.events.filter((e) => e.type === 'display-mode')).toEqual([]);

    await view.getByRole('button', { name: 'Full screen' }).click();
    const asked = await host.waitForEvent((e) => e.type === 'display-mode', UI_TIMEOUT);
    expect(asked).toEqual({ type: 'display-mode', requested: 'fullscreen', granted: 'fullscreen' });
    // It took the host's answer: its toggle now offers the way back; it asked once.
    await view.getByRole('button', { name: 'Exit full screen' }).waitFor({ timeout: UI_TIMEOUT });
    expect(host.events.filter((e) => e.type === 'display-mode')).toHaveLength(1);
    expect([...narrowHost.errors, ...host.errors]).toEqual([]);
    expect((await callTool(agent.client, 'elicit_cancel', { elicitationId: id })).structuredContent).toEqual({ status: 'canceled' });
  });

  /** `#rrggbb` as getComputedStyle says a colour. */
  const rgb = (hex: string) => `rgb(${[1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)).join(', ')})`;

  // One test per theme: four views with axe runs in one test came close to the time limit on a loaded machine.
  it.each(['light', 'dark'] as const)('in the host\'s %s theme: the primary button takes the host\'s inverse button colours, and axe finds no serious violation in an approval or a proposal', async (theme) => {
    for (const [tool, input, button] of [
      ['elicit_approval', { message: `Deploy build 812 to staging (${theme})`, context: { build: 812 } }, 'Approve'],
      ['elicit_proposal', northmark(`NorthMark in the ${theme} theme`), 'Submit Changes'],
    ] as const) {
      const result = await callTool(agent.client, tool, input);
      const id = result.structuredContent?.elicitationId as string;
      const host = await newHost();
      await host.show(tool, input, result, { theme });
      const primary = host.view.getByRole('button', { name: button });
      await primary.waitFor({ timeout: UI_TIMEOUT });
      const where = `${tool} in the ${theme} theme`;
      expect(await primary.evaluate((el) => [getComputedStyle(el).backgroundColor, getComputedStyle(el).color]), where)
        .toEqual([rgb(HOST_COLOURS[theme]['--color-background-inverse']), rgb(HOST_COLOURS[theme]['--color-text-inverse'])]);
      const violations = await seriousViolations(await host.viewFrame());
      expect(violations, describeViolations(where, violations)).toEqual([]);
      expect(host.errors, where).toEqual([]);
      expect((await callTool(agent.client, 'elicit_cancel', { elicitationId: id })).structuredContent).toEqual({ status: 'canceled' });
    }
  });

  // Issue 38 item 1: the Inspector sets --color-text-inverse and not --color-background-inverse; its white text landed on
  // the view's own light blue (2.42:1). Each half of a pair alone must leave the view's own pair on the button.
  it.each(['light', 'dark'] as const)('issue 38: in the %s theme the primary button uses the host\'s inverse pair only when the host sets both, and keeps AA contrast with neither, one or both', async (theme) => {
    const pair = ONE_SIDED_INVERSE[theme];
    const combos = [
      ['neither', {}, VIEW_PRIMARY[theme].background, VIEW_PRIMARY[theme].text],
      ['the text only', { '--color-text-inverse': pair['--color-text-inverse'] }, VIEW_PRIMARY[theme].background, VIEW_PRIMARY[theme].text],
      ['the background only', { '--color-background-inverse': pair['--color-background-inverse'] }, VIEW_PRIMARY[theme].background, VIEW_PRIMARY[theme].text],
      ['both', pair, pair['--color-background-inverse'], pair['--color-text-inverse']],
    ] as const;
    for (const [what, inverse, background, text] of combos) {
      const input = { message: `Deploy build 813 (${theme}, ${what})`, context: { build: 813 } };
      const result = await callTool(agent.client, 'elicit_approval', input);
      const id = result.structuredContent?.elicitationId as string;
      const host = await newHost();
      const page = { ...HOST_COLOURS[theme] } as Record<string, string>;
      delete page['--color-background-inverse'];
      delete page['--color-text-inverse'];
      await host.show('elicit_approval', input, result, { theme, variables: { ...page, ...inverse } });
      const primary = host.view.getByRole('button', { name: 'Approve' });
      await primary.waitFor({ timeout: UI_TIMEOUT });
      const where = `a host setting ${what} of its inverse pair, ${theme} theme`;
      // Soft: one run names every combination that fails.
      expect.soft(await primary.evaluate((el) => [getComputedStyle(el).backgroundColor, getComputedStyle(el).color]), where).toEqual([rgb(background), rgb(text)]);
      const violations = await violationsOf(await host.viewFrame(), ['color-contrast', 'page-has-heading-one']);
      expect.soft(violations, describeViolations(where, violations)).toEqual([]);
      expect(host.errors, where).toEqual([]);
      expect((await callTool(agent.client, 'elicit_cancel', { elicitationId: id })).structuredContent).toEqual({ status: 'canceled' });
      await host.close();
    }
  });

  it('the view\'s own CSP is in <head> and enforced, also in a host that wraps the HTML in a document of its own, and nothing is logged as an error', async () => {
    for (const wrap of [false, true]) {
      const input = northmark(`NorthMark in a host that ${wrap ? 'wraps' : 'does not wrap'} the view`);
      const { id, result } = await propose(input);
      const host = await newHost();
      await host.show('elicit_proposal', input, result, { wrap });
      await host.view.getByRole('table', { name: 'Proposed changes' }).waitFor({ timeout: UI_TIMEOUT });
      const frame = await host.viewFrame();
      const placed = await frame.evaluate(() => ({
        wrapped: document.querySelector('.host-frame meta[name="elicitly-csp"]') !== null,
        inHead: Array.from(document.head.querySelectorAll('meta[http-equiv="Content-Security-Policy"]'), (m) => (m as HTMLMetaElement).content),
      }));
      const own = await frame.evaluate(() => document.querySelector<HTMLMetaElement>('meta[name="elicitly-csp"]')?.content);
      expect(own).toContain("form-action 'none'");
      // The host's own policy and the view's, each once.
      expect(placed.wrapped).toBe(wrap);
      expect(placed.inHead.filter((c) => c === own)).toHaveLength(1);
      expect(placed.inHead).toHaveLength(2);
      expect(host.errors).toEqual([]);

      // Enforced, not only present: an image from outside is refused by the view's policy too (the event names it).
      const refusedBy = await frame.evaluate(`new Promise((resolve) => {
        const seen = [];
        const timer = setTimeout(() => resolve(seen), 5000);
        document.addEventListener('securitypolicyviolation', (e) => {
          seen.push(e.originalPolicy);
          if (e.originalPolicy === ${JSON.stringify(own)}) { clearTimeout(timer); resolve(seen); }
        });
        new Image().src = 'http://127.0.0.1:9/probe.png';
      })`) as string[];
      expect(refusedBy).toContain(own);
      expect((await callTool(agent.client, 'elicit_cancel', { elicitationId: id })).structuredContent).toEqual({ status: 'canceled' });
    }
  });

  describe('the app and the extension deciding the same request at once', () => {
    let extension: ExtensionBrowser;
    let popup: Page;
    const popupErrors: string[] = [];

    beforeAll(async () => {
      extension = await launchExtension();
      popup = await pairedPopup(extension, { port, code: () => pairingCode(env), errors: popupErrors, timeout: UI_TIMEOUT });
    }, 60_000);

    afterAll(async () => {
      await extension?.close();
    });

    /** The same request open in both surfaces, each with its own edit, both at Submit Changes. */
    async function openInBoth(message: string): Promise<{ id: string; host: AppHostPage; appSubmit: Locator; extSubmit: Locator }> {
      const input = northmark(message);
      const { id, result } = await propose(input);
      const host = await newHost();
      await host.show('elicit_proposal', input, result);
      await host.view.getByLabel('Proposed Number of Employees').fill('250', { timeout: UI_TIMEOUT });
      if (!popup.url().endsWith('#/inbox')) await popup.evaluate(() => (location.hash = '#/inbox'));
      await popup.getByRole('list', { name: 'Pending requests' }).getByRole('button', { name: message }).click({ timeout: UI_TIMEOUT });
      await popup.getByLabel('Proposed Number of Employees').fill('260', { timeout: UI_TIMEOUT });
      return { id, host, appSubmit: host.view.getByRole('button', { name: 'Submit Changes' }), extSubmit: popup.getByRole('button', { name: 'Submit Changes' }) };
    }

    /** The app lost: it names the extension as the decider, and the extension's decision (its edit) is what stands. */
    async function appSaysExtensionDecided(host: AppHostPage): Promise<void> {
      const note = host.view.getByRole('status').filter({ hasText: /^Decided in the browser extension at / });
      await note.waitFor({ timeout: UI_TIMEOUT });
      expect(await note.textContent()).toMatch(/^Decided in the browser extension at .+\. Your decision here was not used\.$/);
      expect(await host.view.getByRole('button', { name: 'Submit Changes' }).count()).toBe(0);
    }

    /**
     * The extension lost: its open review turned read-only, "no longer pending: …, decided in the chat" (approved, or
     * consumed once the agent read the result), and either its own decision never left or the hub's refusal is shown.
     */
    async function extensionSaysChatDecided(): Promise<void> {
      await popup.getByText(/^This request is no longer pending: .+, decided in the chat\.$/).waitFor({ timeout: UI_TIMEOUT });
      const refused = popup.getByText('The hub did not take this decision: This request was already decided; your decision was not used.');
      await refused.or(popup.getByText('No decision was made here.')).waitFor({ timeout: UI_TIMEOUT });
      expect(await popup.getByRole('button', { name: 'Submit Changes' }).count()).toBe(0);
    }

    const employees = (result: Record<string, unknown> | undefined) => (result?.values as Record<string, unknown> | undefined)?.employeeCount;

    it('both submit at the same moment: exactly one decision stands, and the surface that lost says which one decided', async () => {
      const winners: string[] = [];
      for (let round = 0; round < 3; round++) {
        const { id, host, appSubmit, extSubmit } = await openInBoth(`Decide me twice, round ${round + 1}`);
        // Both buttons are resolved first, then clicked in the same turn: the two decisions leave together.
        const [appButton, extButton] = await Promise.all([appSubmit.elementHandle({ timeout: UI_TIMEOUT }), extSubmit.elementHandle({ timeout: UI_TIMEOUT })]);
        const clicks = [appButton, extButton].map((button) => () => button.evaluate((b: HTMLButtonElement) => b.click()));
        // Which one is dispatched first alternates from round to round.
        await Promise.all((round % 2 ? clicks.reverse() : clicks).map((click) => click()));

        const result = await outcome(id);
        expect(result).toMatchObject({ status: 'consumed', decision: 'approved', action: 'submit' });
        // The app's decision did leave: the host passed its call to the server.
        await host.waitForEvent((e) => e.type === 'tool-done' && e.name === 'elicit_app_decide', UI_TIMEOUT);
        const via = result?.decidedVia as string;
        winners.push(via);
        if (via === 'app') {
          expect(employees(result), `round ${round + 1}`).toBe(250);
          await host.view.getByText(/^Decided here at /).waitFor({ timeout: UI_TIMEOUT });
          await extensionSaysChatDecided();
        } else {
          expect(via, `round ${round + 1}`).toBe('extension');
          expect(employees(result), `round ${round + 1}`).toBe(260);
          await appSaysExtensionDecided(host);
          // The extension's review closed on its own decision: back to the inbox, the request gone from it.
          await popup.waitForURL(/#\/inbox$/, { timeout: UI_TIMEOUT });
          await popup.getByRole('list', { name: 'Pending requests' }).getByRole('button', { name: `Decide me twice, round ${round + 1}` }).waitFor({ state: 'detached', timeout: UI_TIMEOUT });
        }
        // Whoever lost was told so, and nothing else changed the outcome afterwards.
        expect((await callTool(agent.client, 'elicit_status', { elicitationId: id })).structuredContent).toEqual({ status: 'consumed' });
        expect(host.errors).toEqual([]);
      }
      expect(winners.every((via) => via === 'app' || via === 'extension')).toBe(true);
      expect(popupErrors).toEqual([]);
    }, 90_000);

    it('the extension first, then the app: the app says the browser extension decided and its decision was not used', async () => {
      const { id, host, appSubmit, extSubmit } = await openInBoth('Decided in the extension first');
      await extSubmit.click();
      await popup.waitForURL(/#\/inbox$/, { timeout: UI_TIMEOUT });
      await appSubmit.click();
      await appSaysExtensionDecided(host);
      const result = await outcome(id);
      expect(result).toMatchObject({ decision: 'approved', decidedVia: 'extension' });
      expect(employees(result)).toBe(260);
      expect(host.errors).toEqual([]);
    }, 45_000);

    it('the app first: the extension\'s open review says it was decided in the chat', async () => {
      const { id, host, appSubmit } = await openInBoth('Decided in the chat first');
      await appSubmit.click();
      await host.view.getByText(/^Decided here at /).waitFor({ timeout: UI_TIMEOUT });
      await extensionSaysChatDecided();
      const result = await outcome(id);
      expect(result).toMatchObject({ decision: 'approved', decidedVia: 'app' });
      expect(employees(result)).toBe(250);
      expect(popupErrors).toEqual([]);
    }, 45_000);
  });
});

describe.skipIf(!browserFound)(chromiumSuite('the view shows what a tool returned in sentences, never raw JSON'), () => {
  const stateDir = mkdtempSync(join(tmpdir(), 'elicitly-e2e-app-text-'));
  const port = freePort();
  /** How the test host's own dialog answers the next ask (it records what it was asked). */
  let dialog: (params: { requestedSchema?: unknown }) => { action: 'accept' | 'decline' | 'cancel'; content?: Record<string, unknown> } = () => ({ action: 'cancel' });
  let client: Client;
  let browser: Browser;
  let hostScript: string;
  const hosts: AppHostPage[] = [];

  beforeAll(async () => {
    hostScript = await buildHostScript();
    // A chat that renders MCP Apps and shows its own form dialog: an `auto` ask goes to that dialog.
    client = new Client({ name: 'elicitly-test-host', version: '0.0.0' }, {
      capabilities: { ...APP_CAPABILITIES, elicitation: { form: {} } },
      versionNegotiation: { mode: 'legacy' },
    } as ConstructorParameters<typeof Client>[1]);
    client.setRequestHandler('elicitation/create', async (req) => dialog(req.params as { requestedSchema?: unknown }) as never);
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env[key] = value;
    await client.connect(new StdioClientTransport({
      command: process.execPath, args: [SERVER_ENTRY], env: { ...env, ELICITLY_LOG_LEVEL: 'warn', ELICITLY_STATE_DIR: stateDir, ELICITLY_PORT: String(port) }, stderr: 'pipe',
    }));
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'] });
  }, 60_000);

  afterAll(async () => {
    for (const host of hosts) await host.close().catch(() => undefined);
    await browser?.close();
    await client?.close();
    rmSync(stateDir, { recursive: true, force: true });
  });

  const calls = (events: HostEvent[]) => events.flatMap((e) => (e.type === 'tool-call' ? [e.name] : []));

  /** The model calls `name`, the host renders the view of its result: what the view then says, once it says `text`. */
  async function shown(name: string, input: Record<string, unknown>, result: ToolCallResult, text: string | RegExp): Promise<{ host: AppHostPage; said: string }> {
    const host = await openAppHost(browser, client, hostScript);
    hosts.push(host);
    await host.show(name, input, result);
    await host.view.getByText(text).first().waitFor({ timeout: UI_TIMEOUT });
    const said = await host.view.locator('main').innerText();
    return { host, said };
  }

  it('an elicit_confirm the host answered in its own dialog: "Answered in the chat: Keep.", with the agent\'s label and no JSON', async () => {
    dialog = () => ({ action: 'accept', content: { answer: 'no' } });
    const input = { question: 'Delete the staging cluster?', yesLabel: 'Delete', noLabel: 'Keep' };
    const result = await callTool(client, 'elicit_confirm', input);
    expect(result.structuredContent).toEqual({ confirmed: false, action: 'accept', via: 'host' });
    const { host, said } = await shown('elicit_confirm', input, result, 'Answered in the chat: Keep.');
    expect(said).toContain('Delete the staging cluster?');
    expect(said).not.toContain('{');
    expect(said).not.toContain('confirmed');
    // Nothing to read or decide: the view called no tool.
    expect(calls(host.events)).toEqual([]);
    expect(host.errors).toEqual([]);
  });

  it('an elicit_form the host answered: each field\'s title and the value given; an elicit_selection declined there: "Declined in the chat."', async () => {
    dialog = () => ({ action: 'accept', content: { version: '2.4.1', channel: 'beta', notify: true } });
    const form = {
      message: 'Which release?',
      requestedSchema: {
        type: 'object',
        properties: {
          version: { type: 'string', title: 'Version' },
          channel: { type: 'string', title: 'Channel', oneOf: [{ const: 'stable', title: 'Stable' }, { const: 'beta', title: 'Beta testers' }] },
          notify: { type: 'boolean', title: 'Notify subscribers' },
        },
        required: ['version'],
      },
    };
    const answered = await callTool(client, 'elicit_form', form);
    expect(answered.structuredContent).toMatchObject({ action: 'accept', via: 'host' });
    const { host, said } = await shown('elicit_form', form, answered, 'Answered in the chat:');
    const answer = host.view.getByRole('definition');
    expect(await host.view.getByRole('term').allInnerTexts()).toEqual(['Version', 'Channel', 'Notify subscribers']);
    expect(await answer.allInnerTexts()).toEqual(['2.4.1', 'Beta testers', 'Yes']);
    expect(said).not.toContain('{');

    dialog = () => ({ action: 'decline' });
    const selection = { message: 'Which region?', options: [{ value: 'eu', label: 'Europe' }, { value: 'us', label: 'Americas' }], via: 'host' };
    const declined = await callTool(client, 'elicit_selection', selection);
    expect(declined.structuredContent).toEqual({ action: 'decline', selected: null, via: 'host' });
    const second = await shown('elicit_selection', selection, declined, 'Declined in the chat.');
    expect(second.said).not.toContain('{');
    expect(host.errors).toEqual([]);
    expect(second.host.errors).toEqual([]);
  });

  it('elicit_app_view and elicit_app_decide results rendered as the view (a host that lists the app-only tools): the request read-only, then the decision in words', async () => {
    const input = { ...structuredClone(northmarkProposal), message: 'NorthMark, read through elicit_app_view' } as unknown as Record<string, unknown>;
    const created = await callTool(client, 'elicit_proposal', input);
    const key = created._meta?.[APP_META_KEY] as { elicitationId: string; token: string };
    expect(key).toMatchObject({ elicitationId: created.structuredContent?.elicitationId });
    const { elicitationId, token } = key;

    const viewResult = await callTool(client, 'elicit_app_view', { elicitationId });
    expect(viewResult.isError).toBeFalsy();
    const viewed = await shown('elicit_app_view', { elicitationId }, viewResult, 'NorthMark, read through elicit_app_view');
    expect(await viewed.host.view.getByRole('table', { name: 'Proposed values' }).count()).toBe(1);
    expect(viewed.said).toContain('Decide this in the Elicitly browser extension');
    expect(await viewed.host.view.getByRole('button', { name: 'Submit Changes' }).count()).toBe(0);
    expect(viewed.said).not.toContain('"elicitationId"');

    const decideInput = { elicitationId, token, idempotencyKey: crypto.randomUUID(), decision: 'rejected' };
    const decided = await callTool(client, 'elicit_app_decide', decideInput);
    expect(decided.structuredContent).toMatchObject({ ok: true });
    const ok = await shown('elicit_app_decide', decideInput, decided, 'The decision was recorded.');
    expect(ok.said).not.toContain('{');

    const again = { ...decideInput, idempotencyKey: crypto.randomUUID() };
    const spent = await callTool(client, 'elicit_app_decide', again);
    expect(spent.isError).toBe(true);
    // The key is spent because the request was decided: the view says who decided and when.
    const refused = await shown('elicit_app_decide', again, spent, /^This request was already decided; your decision was not used\./);
    expect(refused.said).toContain('Decided in the chat at ');
    expect(refused.said).not.toContain('Decide this');
    expect(refused.said).not.toContain('{');
    for (const h of [viewed.host, ok.host, refused.host]) {
      expect(calls(h.events)).toEqual([]);
      expect(h.errors).toEqual([]);
    }
  });
});

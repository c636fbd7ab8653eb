// Issue 35 (2), first item: at 320 px nothing on the phone page may scroll sideways. A long word (a commit hash, a URL)
// in a request's message widened the review to 510–835 px. Debian's Chromium at 320×640, the built server started by
// a real MCP client, the page the hub serves.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Harness } from '../helpers/mcp-harness.js';
import { freePort } from '../helpers/scripted-extension.js';
import { expectAccessibleInEachScheme } from './axe-schemes.js';
import { browserFound, chromiumSuite } from './extension-browser.js';
import { pairPhonePage, startPhoneHub, type PhoneHub } from './phone-page.js';

const UI_TIMEOUT = 15_000;
/** `ELICITLY_SCREENSHOTS=1` writes the README's proposal screenshot (390 px wide) into docs/screenshots/. */
const SCREENSHOTS = process.env.ELICITLY_SCREENSHOTS === '1' ? fileURLToPath(new URL('../../docs/screenshots/', import.meta.url)) : null;
const WIDTH = 320;
const HASH = '9fceb02d0ae598e95dc970b74767f19372d61af8';
const URL_WORD = `https://example.com/${'deploy-pipeline-artifact-'.repeat(8)}`;

describe.skipIf(!browserFound)(chromiumSuite('the phone page at 320 px'), () => {
  const stateDir = mkdtempSync(join(tmpdir(), 'elicitly-phone-narrow-'));
  const port = freePort();
  let hub: PhoneHub;
  let agent: Harness;
  let browser: Browser;
  let page: Page;

  /** How far the page scrolls sideways: 0 when nothing is wider than the screen. */
  const sideways = () => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

  beforeAll(async () => {
    hub = await startPhoneHub({ stateDir, port });
    ({ agent, browser } = hub);
    const context = await browser.newContext({ viewport: { width: WIDTH, height: 640 }, isMobile: true, hasTouch: true });
    page = await context.newPage();
    await pairPhonePage(page, { stateDir, origin: `http://127.0.0.1:${port}`, name: 'Narrow phone', timeout: UI_TIMEOUT });
  }, 60_000);

  afterAll(async () => {
    await hub?.close();
  });

  it('a message with a commit hash and a long URL wraps: the inbox and the review scroll only down', async () => {
    const message = `Revert commit ${HASH} and redeploy from ${URL_WORD}`;
    const created = await agent.callTool('elicit_approval', { message, context: { commit: HASH, artifact: URL_WORD } });
    expect(created.isError).toBeFalsy();
    const id = String(created.structuredContent?.elicitationId);
    await page.getByRole('link', { name: new RegExp(HASH) }).waitFor({ timeout: UI_TIMEOUT });
    expect(await sideways()).toBe(0);
    await page.goto(`http://127.0.0.1:${port}/phone/#/r/${encodeURIComponent(id)}`);
    await page.getByRole('button', { name: 'Approve' }).waitFor({ timeout: UI_TIMEOUT });
    expect(await sideways()).toBe(0);
    // Every control of the verdict stays on the screen without scrolling sideways.
    const approve = await page.getByRole('button', { name: 'Approve' }).boundingBox();
    expect((approve?.x ?? WIDTH) + (approve?.width ?? 0)).toBeLessThanOrEqual(WIDTH);
  });

  it('a proposal whose values hold long words wraps too; its controls are 44 px tap targets', async () => {
    const created = await agent.callTool('elicit_proposal', {
      message: `Point the release at ${HASH}`,
      columns: { sources: [{ key: 'ci', label: 'CI' }], current: { label: 'Release' } },
      requestedSchema: { type: 'object', properties: { commit: { type: 'string', title: 'Commit' }, artifact: { type: 'string', title: 'Artifact' } } },
      fields: { commit: { sources: { ci: HASH }, current: 'main' }, artifact: { sources: { ci: URL_WORD }, current: null } },
    });
    expect(created.isError, JSON.stringify(created.structuredContent)).toBeFalsy();
    const id = String(created.structuredContent?.elicitationId);
    await page.goto(`http://127.0.0.1:${port}/phone/#/r/${encodeURIComponent(id)}`);
    await page.getByRole('button', { name: /Submit/ }).waitFor({ timeout: UI_TIMEOUT });
    expect(await sideways()).toBe(0);
    // A row left out: its Proposed cell is dimmed, and must still read (axe, light and dark).
    // Every control is a tap target of at least 44×44 px (WCAG 2.5.5), and the header keeps to 15 % of a 390×844 screen.
    await page.setViewportSize({ width: 390, height: 844 });
    const small = await page.evaluate(() => Array.from(document.querySelectorAll('input[type=checkbox], input[type=radio], button, a'))
      .map((e) => ({ name: e.getAttribute('aria-label') ?? (e.textContent ?? '').trim().slice(0, 30), box: e.getBoundingClientRect() }))
      .filter(({ box }) => box.width > 0 && (box.width < 44 || box.height < 44))
      .map(({ name, box }) => `${name} ${Math.round(box.width)}x${Math.round(box.height)}`));
    expect(small).toEqual([]);
    expect(await page.evaluate(() => document.querySelector('.phone-header')?.getBoundingClientRect().height ?? 844)).toBeLessThanOrEqual(844 * 0.15);
    await page.setViewportSize({ width: WIDTH, height: 640 });
    expect(await sideways()).toBe(0);
    await page.getByRole('checkbox', { name: 'Include Artifact' }).uncheck();
    await expectAccessibleInEachScheme(page, 'the phone proposal review at 320 px, a row left out');
  });

  it('a proposal of many fields is one scroll: nothing scrolls inside the page, and the verdict bar with full-width buttons stays on screen', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    const keys = ['name', 'email', 'phone', 'street', 'city', 'country', 'plan', 'seats'];
    const created = await agent.callTool('elicit_proposal', {
      message: 'Update the customer record',
      columns: { sources: [{ key: 'crm', label: 'CRM' }], current: { label: 'Billing' } },
      requestedSchema: { type: 'object', properties: Object.fromEntries(keys.map((k) => [k, { type: 'string', title: k }])) },
      fields: Object.fromEntries(keys.map((k) => [k, { sources: { crm: `${k} from the CRM, a value long enough to wrap on a phone` }, current: `${k} in billing` }])),
    });
    expect(created.isError, JSON.stringify(created.structuredContent)).toBeFalsy();
    await page.goto(`http://127.0.0.1:${port}/phone/#/r/${encodeURIComponent(String(created.structuredContent?.elicitationId))}`);
    const submit = page.getByRole('button', { name: /Submit/ });
    await submit.waitFor({ timeout: UI_TIMEOUT });
    // Opened straight from the review before it (a notification's link does that): this request's eight rows, not the
    // last one's.
    expect(await page.locator('.counter').textContent()).toMatch(/ of 8 included$/);
    // No element but the page itself holds content it scrolls.
    const scrollers = await page.evaluate(() => Array.from(document.querySelectorAll('.phone *')).filter((e) => {
      const style = getComputedStyle(e);
      return /(auto|scroll)/.test(style.overflowY) && e.scrollHeight > e.clientHeight + 1;
    }).map((e) => e.className || e.tagName));
    expect(scrollers).toEqual([]);
    const bar = async () => page.evaluate(() => {
      const footer = document.querySelector('.review-footer')?.getBoundingClientRect();
      const buttons = Array.from(document.querySelectorAll('.review-footer button'), (b) => b.getBoundingClientRect());
      return { top: footer?.top ?? -1, bottom: footer?.bottom ?? -1, widths: buttons.map((b) => Math.round(b.width)), height: window.innerHeight, scrolled: window.scrollY, page: document.documentElement.scrollHeight };
    });
    const atTop = await bar();
    expect(atTop.page).toBeGreaterThan(atTop.height * 1.5);
    expect(atTop.bottom).toBeLessThanOrEqual(atTop.height);
    expect(atTop.top).toBeGreaterThan(atTop.height * 0.7);
    // Two buttons side by side, each close to half the screen.
    expect(atTop.widths).toHaveLength(2);
    for (const w of atTop.widths) expect(w).toBeGreaterThan(150);
    // Half-way down the page the bar is where it was: the last field is reached with Submit in reach.
    await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight / 2));
    const midway = await bar();
    if (SCREENSHOTS) await page.screenshot({ path: join(SCREENSHOTS, 'phone-proposal.png'), scale: 'css' });
    expect(midway.scrolled).toBeGreaterThan(0);
    expect(midway.bottom).toBeLessThanOrEqual(midway.height);
    expect(midway.top).toBeGreaterThan(midway.height * 0.7);
    await page.getByRole('checkbox', { name: 'Include seats' }).scrollIntoViewIfNeeded();
    expect(await page.getByRole('checkbox', { name: 'Include seats' }).isVisible()).toBe(true);
    await expectAccessibleInEachScheme(page, 'the phone proposal review at 390 px, one scroll and the verdict bar');
    await page.setViewportSize({ width: WIDTH, height: 640 });
  });

  it('every page of the phone, at 320 px, has no serious or critical axe violation, light and dark', async () => {
    const approval = await agent.callTool('elicit_approval', { message: 'Rotate the signing key', context: { key: 'release-signing', reason: 'yearly rotation', notify: true, owners: ['ops', 'security'] } });
    const approvalId = String(approval.structuredContent?.elicitationId);
    const ended = await agent.callTool('elicit_approval', { message: 'Ended one', context: { n: 1 } });
    await agent.callTool('elicit_cancel', { elicitationId: String(ended.structuredContent?.elicitationId) });
    const base = `http://127.0.0.1:${port}/phone/`;
    await page.goto(`${base}#/`);
    await page.getByRole('heading', { name: 'Notifications on this phone' }).waitFor({ timeout: UI_TIMEOUT });
    await expectAccessibleInEachScheme(page, 'the phone inbox');
    await page.goto(`${base}#/r/${encodeURIComponent(approvalId)}`);
    const context = page.getByRole('region', { name: 'Context' });
    await context.waitFor({ timeout: UI_TIMEOUT });
    // The context as label and value rows, the exact JSON one tap away.
    expect(await context.locator('dt').allTextContents()).toEqual(['key', 'reason', 'notify', 'owners']);
    await expectAccessibleInEachScheme(page, 'an approval review, its context as rows');
    await page.getByText('Raw JSON').click();
    expect(await page.getByLabel('Context as JSON').isVisible()).toBe(true);
    await expectAccessibleInEachScheme(page, 'an approval review, its raw JSON open');
    expect(await sideways()).toBe(0);
    await page.goto(`${base}#/history`);
    await page.getByText('Ended one').first().waitFor({ timeout: UI_TIMEOUT });
    await expectAccessibleInEachScheme(page, 'the phone history');
    await page.goto(`${base}#/passkeys`);
    await page.getByRole('heading', { name: /Passkeys/ }).first().waitFor({ timeout: UI_TIMEOUT });
    await expectAccessibleInEachScheme(page, 'the phone passkeys view');
    expect(await sideways()).toBe(0);
    await agent.callTool('elicit_cancel', { elicitationId: approvalId });
  });
});

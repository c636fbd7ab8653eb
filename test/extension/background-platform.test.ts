import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { fakeBrowser } from 'wxt/testing';
import { browser } from 'wxt/browser';
import { openWelcomeOnInstall } from '../../entrypoints/background/first-run.js';
import { createPlatform, listenForNotificationClicks, NOTIFICATION_PREFIX } from '../../entrypoints/background/platform.js';
import { ensureSafetyAlarm, onSafetyAlarm, SAFETY_ALARM } from '../../entrypoints/background/safety-alarm.js';
import { rowFromView } from '../../kit/rows/rows.js';
import { proposalView } from './fakes.js';

beforeEach(() => fakeBrowser.reset());

const { action: mv3Action, browserAction: mv2BrowserAction } = fakeBrowser;
// Put back what a test reshaped before the next reset (which walks every namespace, and would trip on a missing one).
afterEach(() => Object.assign(fakeBrowser, { action: mv3Action, browserAction: mv2BrowserAction }));

/**
 * The Firefox build's shape: MV2 has `browserAction` and no `action`. The fake's `browserAction` is not implemented,
 * and its badge calls are the same as `action`'s, so the in-memory `action` stands in for it under the MV2 name.
 */
function shapeAsManifestV2(): void {
  Object.assign(fakeBrowser, { action: undefined, browserAction: mv3Action });
}

describe('background platform (WXT fake browser)', () => {
  it('shows the pending count on the badge, blank at zero, capped at 99+', async () => {
    const platform = createPlatform();
    await platform.setBadge(3);
    expect(await browser.action.getBadgeText({})).toBe('3');
    await platform.setBadge(150);
    expect(await browser.action.getBadgeText({})).toBe('99+');
    await platform.setBadge(0);
    expect(await browser.action.getBadgeText({})).toBe('');
  });

  it('MV2 (the Firefox build): the badge goes through browser.browserAction, since there is no browser.action', async () => {
    shapeAsManifestV2();
    const platform = createPlatform();
    await platform.setBadge(4);
    expect(await browser.browserAction.getBadgeText({})).toBe('4');
    expect(await browser.browserAction.getBadgeBackgroundColor({})).toEqual([180, 83, 9, 255]);
    await platform.setBadge(0);
    expect(await browser.browserAction.getBadgeText({})).toBe('');
  });

  it('a badge that cannot be set rejects, every time (the controller logs it)', async () => {
    Object.assign(fakeBrowser, { action: undefined, browserAction: undefined });
    const platform = createPlatform();
    await expect(platform.setBadge(1)).rejects.toThrow('neither browser.action nor browser.browserAction');
    await expect(platform.setBadge(2)).rejects.toThrow('neither browser.action nor browser.browserAction');
  });

  it('an API that throws rejects too', async () => {
    // The fake's MV2 namespace is unimplemented: every call throws, as a broken API would.
    Object.assign(fakeBrowser, { action: undefined });
    await expect(createPlatform().setBadge(1)).rejects.toThrow(/^Browser\.browserAction\.setBadgeText not implemented/);
  });

  it('raises one plain-text notification per request and clears it by request id', async () => {
    const platform = createPlatform();
    const row = rowFromView(proposalView('el_9', Date.now(), { message: '<b>Sync</b> NorthMark' }));
    await platform.notify(row);
    const all = await browser.notifications.getAll();
    expect(Object.keys(all)).toEqual([`${NOTIFICATION_PREFIX}el_9`]);
    expect(all[`${NOTIFICATION_PREFIX}el_9`]).toMatchObject({ title: 'Proposal from claude-code', message: '<b>Sync</b> NorthMark' });
    await platform.clearNotification('el_9');
    expect(await browser.notifications.getAll()).toEqual({});
  });

  it('opens the review page in a tab when a notification is clicked', async () => {
    listenForNotificationClicks();
    await browser.notifications.onClicked.trigger(`${NOTIFICATION_PREFIX}el_7`);
    const tabs = await browser.tabs.query({});
    expect(tabs.map((t: { url?: string }) => t.url)).toContain('chrome-extension://test-extension-id/review.html#/review/el_7');
  });

  it('creates the 30 s safety alarm once, so waking up never postpones it', async () => {
    await ensureSafetyAlarm();
    const first = await browser.alarms.get(SAFETY_ALARM);
    expect(first?.periodInMinutes).toBe(0.5);
    // A minute later by the clock: an alarm created again now would be scheduled a minute later.
    vi.setSystemTime(Date.now() + 60_000);
    try {
      await ensureSafetyAlarm();
    } finally {
      vi.useRealTimers();
    }
    expect((await browser.alarms.get(SAFETY_ALARM))?.scheduledTime).toBe(first?.scheduledTime);
  });

  it('runs the tick only for its own alarm', async () => {
    let ticks = 0;
    onSafetyAlarm(() => ticks++);
    await browser.alarms.onAlarm.trigger({ name: 'something-else', scheduledTime: 0 });
    await browser.alarms.onAlarm.trigger({ name: SAFETY_ALARM, scheduledTime: 0 });
    expect(ticks).toBe(1);
  });

  it('opens the page that asks for the pairing code on install, and only then', async () => {
    const urls = async () => (await browser.tabs.query({})).map((t: { url?: string }) => t.url);
    const before = await urls();
    openWelcomeOnInstall();
    await browser.runtime.onInstalled.trigger({ reason: 'update', previousVersion: '0.0.1', temporary: false });
    await browser.runtime.onInstalled.trigger({ reason: 'browser_update', temporary: false });
    expect(await urls()).toEqual(before);
    await browser.runtime.onInstalled.trigger({ reason: 'install', temporary: false });
    expect(await urls()).toEqual([...before, 'chrome-extension://test-extension-id/review.html#/welcome']);
  });
});

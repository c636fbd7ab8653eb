// Issue 35, part 1, in real parts: the built server as the hub (started by a real MCP client), a loopback stand-in for
// the push service, the phone page paired in Debian's Chromium with its real service worker. The hub's push is opened
// with the subscription's keys (as a push service delivers it to the browser), handed to the page's worker through CDP
// (`ServiceWorker.deliverPushMessage`), shown as a notification with Approve and Deny, and the worker's decision (made
// with the key the page keeps in IndexedDB, which cannot be read back) reaches elicit_result as decided on the phone.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, type BrowserContext, type CDPSession, type Page, type Worker } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StateDir } from '../../server/state-dir.js';
import { northmarkProposal } from '../fixtures/northmark.js';
import { FakeNtfy } from '../helpers/fake-ntfy.js';
import type { Harness } from '../helpers/mcp-harness.js';
import { until } from '../helpers/poll.js';
import { browserPushKeys, decryptPush, type BrowserPushKeys } from '../helpers/push-receiver.js';
import { ScriptedDevice, openDevice } from '../helpers/scripted-device.js';
import { freePort } from '../helpers/scripted-extension.js';
import { browserFound, chromiumSuite } from './extension-browser.js';
import { pairPhonePage, startPhoneHub, storedDeviceKey, type PhoneHub } from './phone-page.js';

const UI_TIMEOUT = 15_000;

interface Shown {
  title: string;
  body: string;
  tag: string;
  actions: { action: string; title: string }[];
}

describe.skipIf(!browserFound)(chromiumSuite('push notifications with actions on the phone page'), () => {
  const stateDir = mkdtempSync(join(tmpdir(), 'elicitly-phone-push-'));
  const state = new StateDir(stateDir);
  const port = freePort();
  const origin = `http://127.0.0.1:${port}`;
  let service: FakeNtfy;
  let agent: Harness;
  let hub: PhoneHub;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let cdp: CDPSession;
  let worker: Worker;
  let registrationId = '';
  /** A second device, subscribed at the stand-in: what the hub pushes is the same for every device, encrypted to each. */
  let relayKeys: BrowserPushKeys;
  const problems: string[] = [];
  const opened: { close: () => void }[] = [];

  const created = (result: { structuredContent?: Record<string, unknown>; isError?: boolean; content?: unknown }): string => {
    expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
    const id = result.structuredContent?.elicitationId;
    if (typeof id !== 'string') throw new Error(`no elicitationId in ${JSON.stringify(result.structuredContent)}`);
    return id;
  };

  /** The push the hub sent for `id`, opened as the browser opens it: the text the worker's push event carries. */
  async function pushedText(id: string): Promise<string> {
    const received = await service.next((r) => r.path === '/push/relay' && decryptPush(r.raw, relayKeys).includes(`"elicitationId":"${id}"`), UI_TIMEOUT);
    return decryptPush(received.raw, relayKeys);
  }

  async function shown(tag: string): Promise<Shown | undefined> {
    return page.evaluate(async (t) => {
      const registration = await navigator.serviceWorker.ready;
      const [n] = await registration.getNotifications({ tag: t });
      if (!n) return undefined;
      const actions = (n as Notification & { actions: { action: string; title: string }[] }).actions.map((a) => ({ action: a.action, title: a.title }));
      return { title: n.title, body: n.body, tag: n.tag, actions };
    }, tag);
  }

  /** The tags the worker asked the browser to show a notification for, in order (recorded in the worker, below). */
  async function showsAsked(): Promise<string[]> {
    return worker.evaluate(() => [...(self as unknown as { __shown: string[] }).__shown]);
  }

  /**
   * Delivers `text` to the page's worker as its push event (CDP), and returns the notification it shows for `tag`.
   * Headless Chromium now and then drops a notification a push event showed, right after showing it (its own
   * user-visible bookkeeping for pushes; seen in 1 of 3 runs, never in a page's own showNotification): when the worker
   * did ask for it and it is not there, the push is delivered again, at most 3 times. A worker that never asks fails
   * at once: that would be ours.
   */
  async function pushAndShow(text: string, tag: string): Promise<Shown> {
    for (let attempt = 1; ; attempt++) {
      const before = (await showsAsked()).length;
      await cdp.send('ServiceWorker.deliverPushMessage', { origin, registrationId, data: text });
      await until('the worker to show the push', async () => ((await showsAsked()).slice(before).includes(tag) ? true : undefined), UI_TIMEOUT);
      const found = await until('the notification', () => shown(tag), 3000).catch(() => undefined);
      if (found) return found;
      if (attempt === 3) throw new Error(`the worker showed ${tag} 3 times and the browser kept none`);
    }
  }

  /** The person presses one of the notification's buttons: the worker's notificationclick, with that action. */
  async function press(tag: string, action: string): Promise<void> {
    await worker.evaluate(
      async ([t, a]) => {
        const scope = self as unknown as { registration: ServiceWorkerRegistration; dispatchEvent(e: Event): boolean };
        const [notification] = await scope.registration.getNotifications({ tag: t });
        if (!notification) throw new Error(`no notification ${t}`);
        const NotificationEventClass = (self as unknown as { NotificationEvent: new (type: string, init: { notification: Notification; action: string }) => Event }).NotificationEvent;
        scope.dispatchEvent(new NotificationEventClass('notificationclick', { notification, action: a }));
      },
      [tag, action] as const,
    );
  }

  beforeAll(async () => {
    service = await FakeNtfy.start(() => 201);
    hub = await startPhoneHub({ stateDir, port, env: { ELICITLY_PUSH_SERVICES: service.url }, clientInfo: { name: 'push-e2e-agent', version: '1.0.0' } });
    ({ agent, browser } = hub);
    // The second device: paired and subscribed over its socket as the page would, with keys this test holds.
    const { code } = state.createPairing('device');
    const relay = openDevice(await ScriptedDevice.connect(`ws://127.0.0.1:${port}/phone/socket`, { origin, pairing: true }, opened));
    await relay.pair(code, port, 'Relay phone');
    relayKeys = browserPushKeys(`${service.url}/push/relay`);
    expect((await relay.call('push.subscribe', { subscription: relayKeys.subscription })).result).toEqual({ subscribed: true });

    context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    await context.grantPermissions(['notifications'], { origin });
    page = await context.newPage();
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) problems.push(`console: ${message.text()}`);
    });
    cdp = await context.newCDPSession(page);
    const registered = new Promise<string>((resolve) => {
      cdp.on('ServiceWorker.workerRegistrationUpdated', ({ registrations }) => {
        const mine = registrations.find((r) => r.scopeURL === `${origin}/phone/` && !r.isDeleted);
        if (mine) resolve(mine.registrationId);
      });
    });
    await cdp.send('ServiceWorker.enable');
    await pairPhonePage(page, { stateDir, origin, name: 'Push phone', timeout: UI_TIMEOUT });
    registrationId = await registered;
    await page.evaluate(() => navigator.serviceWorker.ready.then(() => undefined));
    worker = context.serviceWorkers().find((w) => w.url() === `${origin}/phone/worker.js`) ?? (await context.waitForEvent('serviceworker', { timeout: UI_TIMEOUT }));
    // What the worker asks the browser to show, recorded in the worker: a notification the browser then drops is told
    // apart from one the worker never showed.
    await worker.evaluate(() => {
      const scope = self as unknown as { __shown: string[]; registration: ServiceWorkerRegistration };
      scope.__shown = [];
      const original = scope.registration.showNotification.bind(scope.registration);
      scope.registration.showNotification = async (title: string, options?: NotificationOptions) => {
        await original(title, options);
        scope.__shown.push(options?.tag ?? '');
      };
    });
  }, 90_000);

  afterAll(async () => {
    for (const o of opened) o.close();
    await hub?.close();
    await service?.close();
  });

  it('the page keeps its key in IndexedDB as a key that cannot be read back, and nothing in localStorage', async () => {
    const kept = await storedDeviceKey(page);
    const device = state.pairedDevices().find((d) => d.name === 'Push phone');
    expect(kept).toMatchObject({ keyId: device?.keyId, extractable: false, legacy: null });
    expect(kept?.exported).toMatch(/InvalidAccessError|not extractable/);
  }, 30_000);

  it('a push for a short approval shows its agent, kind and question with Approve and Decline; Approve decides it as the phone', async () => {
    const message = 'Deploy build 812 to staging?';
    const id = created(await agent.callTool('elicit_approval', { message, context: { build: 812 } }));
    const notification = await pushAndShow(await pushedText(id), id);
    expect(notification).toEqual({ title: 'Approval from push-e2e-agent', body: `${message}\nbuild: 812`, tag: id, actions: [{ action: 'approve', title: 'Approve' }, { action: 'deny', title: 'Decline' }] });

    await press(id, 'approve');
    await agent.callTool('elicit_await', { elicitationId: id, waitSeconds: 10 });
    expect((await agent.callTool('elicit_result', { elicitationId: id })).structuredContent).toMatchObject({ status: 'consumed', decision: 'approved', decidedVia: 'phone' });
    // The notification now says what happened, and offers nothing more.
    const after = await until('the outcome notification', async () => ((await shown(id))?.title.startsWith('Approve:') ? shown(id) : undefined), UI_TIMEOUT);
    expect(after).toMatchObject({ title: 'Approve: sent and recorded', body: message, actions: [] });
    // The page's own socket heard it too: the request left the inbox.
    await page.getByRole('link', { name: new RegExp(message) }).waitFor({ state: 'detached', timeout: UI_TIMEOUT });
    expect(problems).toEqual([]);
  }, 60_000);

  it('a button pressed on a notification for a request decided elsewhere is refused, and says so', async () => {
    const message = 'Rotate the API key?';
    const id = created(await agent.callTool('elicit_approval', { message, context: { key: 'api' } }));
    const text = await pushedText(id);
    await pushAndShow(text, id);
    // Decided in the page first (the phone's review), then Deny on the notification still on the lock screen.
    await page.getByRole('link', { name: new RegExp(message) }).tap();
    await page.getByRole('button', { name: 'Approve', exact: true }).tap();
    await page.getByRole('status').filter({ hasText: `Approved: ${message}` }).waitFor({ timeout: UI_TIMEOUT });
    await press(id, 'deny');
    const after = await until('the refusal', async () => ((await shown(id))?.title.startsWith('Not recorded') ? shown(id) : undefined), UI_TIMEOUT);
    expect(after).toMatchObject({ title: 'Not recorded: it was already decided elsewhere', actions: [] });
    await agent.callTool('elicit_await', { elicitationId: id, waitSeconds: 10 });
    expect((await agent.callTool('elicit_result', { elicitationId: id })).structuredContent).toMatchObject({ decision: 'approved', decidedVia: 'phone' });
  }, 60_000);

  it('a notification whose content was altered on the way is refused by its hash, and the request still waits', async () => {
    const id = created(await agent.callTool('elicit_approval', { message: 'Pay invoice 77?', context: { amount: 120 } }));
    const payload = JSON.parse(await pushedText(id)) as Record<string, unknown>;
    // What a notification claims must be what the hub stored: one with another hash decides nothing.
    await pushAndShow(JSON.stringify({ ...payload, body: 'Pay invoice 77?\namount: 1', shownHash: 'c'.repeat(64) }), id);
    await press(id, 'approve');
    const after = await until('the refusal', async () => ((await shown(id))?.title.startsWith('Not recorded') ? shown(id) : undefined), UI_TIMEOUT);
    expect(after?.title).toBe('Not recorded: it changed after this notification: open it to review it again');
    expect((await agent.callTool('elicit_status', { elicitationId: id })).structuredContent).toMatchObject({ status: 'pending' });
    await agent.callTool('elicit_cancel', { elicitationId: id });
  }, 60_000);

  it('a proposal gets no buttons: its notification only opens the review', async () => {
    const id = created(await agent.callTool('elicit_proposal', { ...structuredClone(northmarkProposal), message: 'Update the customer record' }));
    expect(await pushAndShow(await pushedText(id), id)).toMatchObject({ title: 'Approval from push-e2e-agent', actions: [] });
    await agent.callTool('elicit_cancel', { elicitationId: id });
  }, 60_000);
});

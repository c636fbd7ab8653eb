// The phone page's service worker (served at /phone/worker.js, scope /phone/). It shows each push the hub sends (decrypted
// by the browser: the push service saw ciphertext only) and, for a request that fits on a notification, sends the
// person's Approve or Deny with this device's own key, bound to the request's id and the hash of what the notification
// showed. Everything else, and a tap on the notification's body, opens the review.
// Before anything parses: the worker's CSP has no 'unsafe-eval', and zod would probe `new Function` on first use.
import '../../kit/zod-config.js';
import { PushPayloadSchema, type PushPayload } from '../../shared/push-notice.js';
import { openBrowserSocket } from '../../kit/hub/browser-socket.js';
import { decideOnce } from '../decide-once.js';
import { loadDeviceKey } from '../device-key.js';
import { outcomeNotice } from '../push-outcome.js';

declare const self: ServiceWorkerGlobalScope;
declare const __ELICITLY_VERSION__: string;

/** A worker is given about 30 s for an event; the decision's answer must come well within it. */
const DECIDE_TIMEOUT_MS = 10_000;

function show(payload: PushPayload, override?: { title: string; body: string; actions: boolean }): Promise<void> {
  const actions = override ? (override.actions ? payload.actions : []) : payload.actions;
  return self.registration.showNotification(override?.title ?? payload.title, {
    body: override?.body ?? payload.body,
    // One notification per request: a reminder, or the outcome of an action, replaces the one before.
    tag: payload.elicitationId,
    data: payload,
    requireInteraction: actions.length > 0,
    // Chromium and Firefox show `actions`; the DOM's NotificationOptions does not list it yet.
    ...{ actions: actions.map((a) => ({ action: a.action, title: a.title })) },
  });
}

function parseJson(text: string | null): unknown {
  if (text === null) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

async function onPush(text: string | null): Promise<void> {
  const parsed = PushPayloadSchema.safeParse(parseJson(text));
  // A push must show a notification; one this version cannot read still says where to look.
  if (!parsed.success) {
    await self.registration.showNotification('Elicitly: a request is waiting', { body: 'Open the inbox to see it.', tag: 'elicitly-unreadable' });
    return;
  }
  await show(parsed.data);
}

async function openReview(elicitationId: string | null): Promise<void> {
  const url = new URL(elicitationId === null ? './' : `./#/r/${encodeURIComponent(elicitationId)}`, self.registration.scope).href;
  const windows = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
  const open = windows.find((w) => w.url.startsWith(self.registration.scope));
  if (open) {
    await open.navigate(url).catch(() => null);
    await open.focus();
    return;
  }
  await self.clients.openWindow(url);
}

async function onClick(notification: Notification, actionName: string): Promise<void> {
  const parsed = PushPayloadSchema.safeParse(notification.data);
  if (!parsed.success) {
    await openReview(null);
    return;
  }
  const payload = parsed.data;
  const action = payload.actions.find((a) => a.action === actionName);
  if (!action) {
    await openReview(payload.elicitationId);
    return;
  }
  const credential = await loadDeviceKey(indexedDB).catch(() => null);
  const result = credential
    ? await decideOnce({
        url: `${credential.origin.replace(/^http/, 'ws')}/phone/socket`,
        binding: { port: credential.hubPort, role: 'device', origin: credential.origin },
        credential,
        socketFactory: openBrowserSocket,
        client: { name: 'elicitly-phone-worker', version: __ELICITLY_VERSION__ },
        params: { elicitationId: payload.elicitationId, idempotencyKey: crypto.randomUUID(), ...action.decision, shownHash: payload.shownHash },
        timeoutMs: DECIDE_TIMEOUT_MS,
      })
    : ({ state: 'unproven', message: 'no key on this phone' } as const);
  const notice = outcomeNotice(payload, action, result);
  await show(payload, { title: notice.title, body: notice.body, actions: notice.retry });
}

self.addEventListener('install', () => {
  void self.skipWaiting();
});
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));
self.addEventListener('push', (event) => {
  // Started before waitUntil: it runs to its end whoever dispatched the event.
  const work = onPush(event.data ? event.data.text() : null);
  event.waitUntil(work);
});
self.addEventListener('notificationclick', (event) => {
  // A button's notification is replaced by what became of the decision (the same tag), never closed first: a close
  // still on its way would take the replacement with it. A tap on the body opens the review and closes it.
  if (event.action === '') event.notification.close();
  const work = onClick(event.notification, event.action);
  event.waitUntil(work);
});

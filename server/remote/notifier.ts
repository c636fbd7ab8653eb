import { createHash } from 'node:crypto';
import { kindWord, pushEndpointProblem, pushNotice, type NotificationType, type PushSubscription } from '../../shared/push-notice.js';
import { shownText } from '../../shared/shown-hash.js';
import type { RequestView } from '../../shared/wire-protocol.js';
import type { ApprovalEngine } from '../approvals/approval-engine.js';
import { log } from '../log.js';
import type { RemoteConfig } from '../remote-config.js';
import type { Directory } from '../directory.js';
import type { NotifiedRequest } from './notification.js';
import { ntfyPublish, reviewUrl, title, webhookBody, webhookSignature } from './notification.js';
import { pushRequest, pushTopic, type VapidKeys } from './web-push.js';

type Fetch = (url: string, init: RequestInit) => Promise<Response>;
/** ntfy, the webhook, or one paired device's Web Push subscription (by its key id). */
type Destination = 'ntfy' | 'webhook' | `push:${string}`;

export interface NotifierOptions {
  engine: Pick<ApprovalEngine, 'onEvent' | 'pendingViews' | 'leads'>;
  /** remote.json, read again at every send: `remote notify` changes take effect without a restart. */
  settings: () => RemoteConfig;
  /** The hub's port: the review link's origin when the person configured none. */
  port: number;
  now?: () => number;
  /** Runs `run` once after `ms`; returns what cancels it. */
  schedule?: (run: () => void, ms: number) => () => void;
  fetch?: Fetch;
  sendTimeoutMs?: number;
  /** Web Push to the devices that subscribed: their subscriptions and the hub's VAPID key, and the extra push services allowed. */
  push?: { directory: Pick<Directory, 'pairedDevicesReader' | 'setDevicePush' | 'vapidKeys'>; services: readonly string[] };
}

/** Sockets open to notification servers at once. */
const MAX_SENDING = 4;
/**
 * Sends waiting for a socket. A flood of requests (an agent in a loop) is dropped past this, logged once per burst,
 * rather than queued without end: a hundred notifications already tell the person to look.
 */
export const MAX_QUEUED = 100;
const SEND_TIMEOUT_MS = 10_000;
const PRIORITY: Record<NotificationType, number> = { 'request.waiting': 4, 'request.reminder': 3, 'request.expiring': 4 };

interface Tracked {
  request: NotifiedRequest;
  /** The whole view, for Web Push alone: its message goes only to a device's subscription, encrypted to it. */
  view: RequestView;
  cancels: (() => void)[];
}

interface Job {
  /** One send per request, notification and destination is queued or in flight at a time. */
  key: string;
  id: string;
  type: NotificationType;
  destination: Destination;
}

function configured(config: RemoteConfig | null): Destination[] {
  if (!config?.enabled) return [];
  return [...(config.ntfy ? (['ntfy'] as const) : []), ...(config.webhook ? (['webhook'] as const) : [])];
}

/** SHA-256 of what a reviewer is shown (`shared/shown-hash.ts`): a push action's decision is bound to it. */
function hashOf(view: RequestView): string {
  return createHash('sha256').update(shownText(view)).digest('hex');
}

function defaultSchedule(run: () => void, ms: number): () => void {
  const timer = setTimeout(run, ms);
  // The hub's sockets keep the process alive, never a reminder.
  timer.unref();
  return () => clearTimeout(timer);
}

/**
 * Tells the person a request is waiting (ntfy, a signed webhook, and Web Push to each device that turned it on, while
 * the phone page is enabled), reminds them once after `remindMinutes` and once more `beforeExpiryMinutes` before it
 * expires. To ntfy and the webhook only the agent's name and a link leave this computer; a push carries the question,
 * encrypted to the one device's subscription (RFC 8291), so its push service sees ciphertext only. Sends are bounded,
 * logged when they fail, never retried and never awaited by the engine.
 * Returns what stops it (the hub closing or stepping down).
 */
export function startNotifier(options: NotifierOptions): () => void {
  const now = options.now ?? Date.now;
  const schedule = options.schedule ?? defaultSchedule;
  const fetchNow: Fetch = options.fetch ?? fetch;
  const timeoutMs = options.sendTimeoutMs ?? SEND_TIMEOUT_MS;
  const tracked = new Map<string, Tracked>();
  const queue: Job[] = [];
  const busy = new Set<string>();
  const stopping = new AbortController();
  let sending = 0;
  let dropped = 0;

  /** remote.json as it is now; null (nothing sent) when it cannot be read: a state-dir problem never reaches the engine. */
  const settings = (): RemoteConfig | null => {
    try {
      return options.settings();
    } catch (error) {
      log('warn', 'could not read the notification settings (remote.json): nothing sent', { error: String(error) });
      return null;
    }
  };

  // Asked at every new request: the devices file is read again only when it changed, the VAPID key once.
  const devices = options.push?.directory.pairedDevicesReader();
  let vapid: VapidKeys | undefined;

  /** Devices with a push subscription now; none when the file cannot be read (said in the log by the state dir). */
  const subscribed = (): { keyId: string; subscription: PushSubscription }[] => {
    if (!devices) return [];
    try {
      return devices().flatMap((d) => (d.push ? [{ keyId: d.keyId, subscription: d.push.subscription }] : []));
    } catch (error) {
      log('warn', 'could not read the paired devices: no push sent', { error: String(error) });
      return [];
    }
  };

  const destinations = (config: RemoteConfig | null): Destination[] => {
    if (!config?.enabled) return [];
    return [...configured(config), ...subscribed().map((d): Destination => `push:${d.keyId}`)];
  };

  const enqueue = (id: string, type: NotificationType) => {
    // Several hubs on one database all hear of every request; the one that runs the timers tells the person, once.
    if (!options.engine.leads()) return;
    for (const destination of destinations(settings())) {
      const key = `${destination} ${type} ${id}`;
      if (busy.has(key)) continue;
      if (queue.length >= MAX_QUEUED) {
        if (dropped++ === 0) log('warn', 'too many notifications waiting to be sent: dropping new ones until the queue drains', { queued: MAX_QUEUED });
        continue;
      }
      busy.add(key);
      queue.push({ key, id, type, destination });
    }
    pump();
  };

  const pump = () => {
    while (sending < MAX_SENDING) {
      const job = queue.shift();
      if (!job) break;
      sending++;
      void send(job)
        .catch((error: unknown) => log('warn', 'a notification could not be made', { to: job.destination, type: job.type, error: String(error) }))
        .finally(() => {
          sending--;
          busy.delete(job.key);
          pump();
        });
    }
    if (dropped > 0 && queue.length === 0 && sending === 0) {
      log('warn', 'notifications dropped while the queue was full', { dropped });
      dropped = 0;
    }
  };

  const send = async (job: Job): Promise<void> => {
    // Nothing is sent for a request that ended while its send waited.
    const entry = tracked.get(job.id);
    if (!entry || stopping.signal.aborted) return;
    const config = settings();
    if (!config?.enabled) return;
    if (job.destination.startsWith('push:')) {
      await sendPush(job, entry, job.destination.slice('push:'.length));
      return;
    }
    if (!configured(config).includes(job.destination)) return;
    const sentAt = now();
    const click = reviewUrl(config, options.port, job.id);
    let target: { url: string; headers: Record<string, string>; body: string } | null = null;
    if (job.destination === 'ntfy' && config.ntfy) {
      const publish = ntfyPublish(config.ntfy.url, { title: title(job.type, entry.request, sentAt), click, kind: kindWord(entry.request.kind), priority: PRIORITY[job.type] });
      if (!publish) {
        log('warn', 'the ntfy URL does not end in a topic name (letters, digits, - and _): nothing sent', { type: job.type });
        return;
      }
      target = { url: publish.url, body: publish.body, headers: { 'Content-Type': 'application/json', ...(config.ntfy.token ? { Authorization: `Bearer ${config.ntfy.token}` } : {}) } };
    } else if (job.destination === 'webhook' && config.webhook) {
      const body = webhookBody(job.type, entry.request, click, sentAt);
      const timestamp = Math.floor(sentAt / 1000);
      target = {
        url: config.webhook.url,
        body,
        headers: { 'Content-Type': 'application/json', 'X-Elicitly-Timestamp': String(timestamp), 'X-Elicitly-Signature': webhookSignature(config.webhook.secret, timestamp, body) },
      };
    }
    if (!target) return;
    // The host alone: an ntfy topic's path is its only secret, and stderr may end up in a host's logs.
    const where = { to: job.destination, host: new URL(target.url).host, type: job.type };
    try {
      const response = await fetchNow(target.url, {
        method: 'POST',
        headers: target.headers,
        body: target.body,
        // A redirect would re-post the body wherever it points: the configured URL is the only place it goes.
        redirect: 'error',
        signal: AbortSignal.any([AbortSignal.timeout(timeoutMs), stopping.signal]),
      });
      await response.body?.cancel();
      if (!response.ok) log('warn', 'a notification was refused', { ...where, status: response.status });
    } catch (error) {
      if (stopping.signal.aborted) return;
      const cause = error instanceof Error && error.cause !== undefined ? error.cause : error;
      log('warn', 'a notification could not be sent', { ...where, error: String(cause) });
    }
  };

  /** One push to one device: encrypted to its subscription; a subscription its push service says is gone is dropped. */
  const sendPush = async (job: Job, entry: Tracked, keyId: string): Promise<void> => {
    const push = options.push;
    const device = subscribed().find((d) => d.keyId === keyId);
    if (!push || !device) return;
    const problem = pushEndpointProblem(device.subscription.endpoint, push.services);
    if (problem !== null) {
      log('warn', 'a device\'s push subscription names a push service the hub does not post to: nothing sent', { keyId, problem });
      return;
    }
    try {
      vapid ??= await push.directory.vapidKeys();
    } catch (error) {
      log('warn', 'could not read the hub\'s push key: no push sent', { keyId, error: String(error) });
      return;
    }
    const sentAt = now();
    const payload = pushNotice(entry.view, job.type, hashOf(entry.view), sentAt);
    const request = pushRequest({
      keys: vapid,
      subscription: device.subscription,
      plaintext: new TextEncoder().encode(JSON.stringify(payload)),
      ttlSeconds: (entry.request.expiresAt - sentAt) / 1000,
      topic: pushTopic(entry.request.elicitationId),
      now: sentAt,
    });
    const where = { to: 'push', host: new URL(request.url).host, keyId, type: job.type };
    try {
      const response = await fetchNow(request.url, { method: 'POST', headers: request.headers, body: new Uint8Array(request.body), redirect: 'error', signal: AbortSignal.any([AbortSignal.timeout(timeoutMs), stopping.signal]) });
      await response.body?.cancel();
      // RFC 8030 §7.3: 404 and 410 say the subscription is gone for good (the person revoked it, or the browser renewed it).
      if (response.status === 404 || response.status === 410) {
        // Only that subscription: one the page sent meanwhile (renewed) stays.
        await push.directory.setDevicePush(keyId, null, { onlyEndpoint: device.subscription.endpoint });
        log('info', 'a device\'s push subscription has expired; it turns notifications on again from its page', { ...where, status: response.status });
      } else if (!response.ok) log('warn', 'a push was refused', { ...where, status: response.status });
    } catch (error) {
      if (stopping.signal.aborted) return;
      const cause = error instanceof Error && error.cause !== undefined ? error.cause : error;
      log('warn', 'a push could not be sent', { ...where, error: String(cause) });
    }
  };

  const at = (entry: Tracked, when: number, type: NotificationType) => {
    entry.cancels.push(schedule(() => enqueue(entry.request.elicitationId, type), Math.max(0, when - now())));
  };

  /** Starts watching a waiting request: notified at once when new, and its reminders scheduled from its creation. */
  const track = (view: RequestView, isNew: boolean) => {
    if (tracked.has(view.elicitationId)) return;
    const config = settings();
    if (!config || destinations(config).length === 0) return;
    const request: NotifiedRequest = { elicitationId: view.elicitationId, kind: view.kind, client: view.requester.client, createdAt: view.createdAt, expiresAt: view.expiresAt };
    const entry: Tracked = { request, view, cancels: [] };
    tracked.set(request.elicitationId, entry);
    if (isNew) enqueue(request.elicitationId, 'request.waiting');
    const current = now();
    const remindAt = config.remindMinutes > 0 ? request.createdAt + config.remindMinutes * 60_000 : null;
    const reminds = remindAt !== null && remindAt < request.expiresAt;
    // A moment already past (a hub that took over late) is skipped: the hub before it may have sent it.
    if (reminds && remindAt > current) at(entry, remindAt, 'request.reminder');
    if (config.beforeExpiryMinutes > 0) {
      const expiringAt = request.expiresAt - config.beforeExpiryMinutes * 60_000;
      if (expiringAt > current && expiringAt > (reminds ? remindAt : request.createdAt)) at(entry, expiringAt, 'request.expiring');
    }
  };

  const untrack = (id: string) => {
    const entry = tracked.get(id);
    if (!entry) return;
    tracked.delete(id);
    for (const cancel of entry.cancels) cancel();
  };

  const unsubscribe = options.engine.onEvent((event) => {
    // A request a rule decided at creation arrives decided: nobody needs to be told.
    if (event.method === 'request.created' && event.params.request.status === 'pending') track(event.params.request, true);
    else if (event.method === 'request.removed') untrack(event.params.elicitationId);
  });
  // A hub that took over: the requests already waiting were announced by the one before it.
  for (const view of options.engine.pendingViews()) track(view, false);

  return () => {
    unsubscribe();
    stopping.abort();
    for (const id of [...tracked.keys()]) untrack(id);
    queue.length = 0;
  };
}

// Issue 35, part 1: private push with actions, through the real server (dist/server/main.js) as the hub. A loopback
// stand-in for the push service receives what the hub sends: ciphertext only, which the test opens with the
// subscription's keys (http_ece, the reference code); the notification's action decides through the device's own key.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { wrapSocket } from '../../kit/hub/browser-socket.js';
import type { SocketLike } from '../../kit/hub/hub-connection.js';
import { decideOnce } from '../../phone/decide-once.js';
import { StateDir } from '../../server/state-dir.js';
import { importHubSecret } from '../../shared/hub-auth.js';
import { vapidPublicKey } from '../../server/remote/web-push.js';
import type { PushPayload } from '../../shared/push-notice.js';
import { FakeNtfy, type Received } from '../helpers/fake-ntfy.js';
import { connect, type Harness } from '../helpers/mcp-harness.js';
import { until } from '../helpers/poll.js';
import { browserPushKeys, decryptPush, openPush, type BrowserPushKeys } from '../helpers/push-receiver.js';
import { ScriptedDevice, openDevice } from '../helpers/scripted-device.js';
import { freePort } from '../helpers/scripted-extension.js';

const MARKER = 'PUSH-MARKER-5e21';
const dir = mkdtempSync(join(tmpdir(), 'elicitly-push-'));
const state = new StateDir(dir);
const port = freePort();
const LOOPBACK = `http://127.0.0.1:${port}`;
const WS = `ws://127.0.0.1:${port}/phone/socket`;
let service: FakeNtfy;
let agent: Harness;
const opened: { close: () => void }[] = [];

async function pairedPhone(name: string): Promise<{ phone: ScriptedDevice; keyId: string; key: string }> {
  const { code } = state.createPairing('device');
  const phone = openDevice(await ScriptedDevice.connect(WS, { origin: LOOPBACK, pairing: true }, opened));
  const { key } = await phone.pair(code, port, name);
  return { phone, keyId: key.keyId, key: key.key };
}

/** What the service worker's `WebSocket` is, from Node: `ws` sends the page's Origin as a browser would. */
function socketFrom(origin: string) {
  return (url: string, protocols: string[]): SocketLike => {
    const ws = new WebSocket(url, protocols, { origin });
    opened.push({ close: () => ws.terminate() });
    return wrapSocket(ws);
  };
}

async function subscribe(phone: ScriptedDevice, path: string): Promise<BrowserPushKeys> {
  const keys = browserPushKeys(`${service.url}${path}`);
  const answer = await phone.call('push.subscribe', { subscription: keys.subscription });
  expect(answer.result).toEqual({ subscribed: true });
  return keys;
}

function created(result: { structuredContent?: Record<string, unknown>; isError?: boolean; content?: unknown }): string {
  expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
  const id = result.structuredContent?.elicitationId;
  if (typeof id !== 'string') throw new Error(`no elicitationId in ${JSON.stringify(result.structuredContent)}`);
  return id;
}

/** The push for `id` that reached `path`, opened with that subscription's keys. */
async function pushFor(path: string, keys: BrowserPushKeys, id: string, type = 'request.waiting'): Promise<{ received: Received; payload: PushPayload }> {
  const opens = (r: Received) => {
    if (r.path !== path) return null;
    try {
      return openPush(r.raw, keys);
    } catch {
      return null;
    }
  };
  const received = await service.next((r) => opens(r)?.elicitationId === id && opens(r)?.type === type, 10_000);
  const payload = opens(received);
  if (!payload) throw new Error('unreachable: the push matched');
  return { received, payload };
}

const decide = (phone: ScriptedDevice, id: string, payload: PushPayload, action: 0 | 1, shownHash = payload.shownHash) => {
  const chosen = payload.actions[action];
  if (!chosen) throw new Error(`no action ${action} in ${JSON.stringify(payload.actions)}`);
  return phone.call('decide', { elicitationId: id, idempotencyKey: randomBytes(8).toString('hex'), ...chosen.decision, shownHash });
};

beforeAll(async () => {
  service = await FakeNtfy.start((path) => (path.startsWith('/gone/') ? 410 : 201));
  // A reminder 1.2 s after a request arrives: it must go through the channel the device uses, as the first did.
  state.updateRemote((current) => ({ ...current, enabled: true, remindMinutes: 1.2 / 60 }));
  agent = await connect('v2-2025', {
    clientInfo: { name: 'push-agent', version: '1.0.0' },
    env: { ELICITLY_STATE_DIR: dir, ELICITLY_PORT: String(port), ELICITLY_MIN_TIMEOUT_SECONDS: '1', ELICITLY_PUSH_SERVICES: service.url },
  });
  // The first call makes this server the hub.
  expect((await agent.callTool('elicit_status', { elicitationId: 'el_none' })).isError).toBe(true);
}, 30_000);

afterAll(async () => {
  for (const o of opened) o.close();
  await agent?.close();
  await service?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('Web Push to a paired device', () => {
  it('a subscription is refused for anything but a push service, naming the field; nothing is kept', async () => {
    const { phone, keyId } = await pairedPhone('Refused phone');
    const answer = await phone.call('push.subscribe', { subscription: browserPushKeys('https://192.168.1.10/push').subscription });
    expect(answer.result).toEqual({ subscribed: false, issues: [expect.objectContaining({ path: 'subscription.endpoint', rule: 'push_service' })] });
    expect(state.pairedDevices().find((d) => d.keyId === keyId)?.push).toBeUndefined();
    expect((await phone.call('push.info', {})).result).toEqual({ publicKey: vapidPublicKey(state.vapidKeys()), subscribed: false });
    state.removePairedDevice(keyId);
  }, 20_000);

  it('a new request reaches the push service as ciphertext only; opened with the subscription\'s keys it is the notification, and its Approve decides it as the phone', async () => {
    const { phone, keyId } = await pairedPhone('Push phone');
    const keys = await subscribe(phone, '/push/one');
    expect(state.pairedDevices().find((d) => d.keyId === keyId)?.push?.subscription).toEqual(keys.subscription);
    expect((await phone.call('push.info', {})).result).toMatchObject({ subscribed: true });

    const id = created(await agent.callTool('elicit_approval', { message: `Deploy build 812? ${MARKER}`, context: { build: 812, note: MARKER } }));
    const { received, payload } = await pushFor('/push/one', keys, id);
    // What the push service saw: no word of the request, an aes128gcm body, the hub's VAPID identity.
    expect(received.raw.toString('latin1')).not.toContain(MARKER);
    expect(received.raw.toString('latin1')).not.toContain('Deploy');
    expect(JSON.stringify(received.headers)).not.toContain(MARKER);
    expect(received.headers['content-encoding']).toBe('aes128gcm');
    expect(String(received.headers.authorization)).toMatch(new RegExp(`^vapid t=[\\w-]+\\.[\\w-]+\\.[\\w-]+, k=${vapidPublicKey(state.vapidKeys())}$`));
    expect(Number(received.headers.ttl)).toBeGreaterThan(0);
    // Another subscription's keys cannot open it.
    expect(() => decryptPush(received.raw, browserPushKeys('x'))).toThrow();
    expect(payload).toMatchObject({
      title: 'Approval from push-agent',
      body: `Deploy build 812? ${MARKER}\nbuild: 812\nnote: ${MARKER}`,
      actions: [
        { action: 'approve', title: 'Approve', decision: { decision: 'approved' } },
        { action: 'deny', title: 'Decline', decision: { decision: 'rejected' } },
      ],
    });

    expect((await decide(phone, id, payload, 0)).result).toEqual({ ok: true, status: 'approved' });
    await agent.callTool('elicit_await', { elicitationId: id, waitSeconds: 10 });
    expect((await agent.callTool('elicit_result', { elicitationId: id })).structuredContent).toMatchObject({ status: 'consumed', decision: 'approved', decidedVia: 'phone', context: { build: 812 } });
    // The other button, pressed after: the request was decided; nothing changes.
    expect((await decide(phone, id, payload, 1)).result).toMatchObject({ ok: false, reason: 'already_decided' });
  }, 30_000);

  it('the reminder of a request still waiting goes to the device the same way, encrypted, and replaces the first (one topic)', async () => {
    const { phone } = await pairedPhone('Reminded phone');
    const keys = await subscribe(phone, '/push/remind');
    const id = created(await agent.callTool('elicit_approval', { message: `Still there? ${MARKER}`, context: { n: 5 } }));
    const first = await pushFor('/push/remind', keys, id);
    const reminder = await pushFor('/push/remind', keys, id, 'request.reminder');
    expect(reminder.payload).toMatchObject({ title: 'Still waiting: approval from push-agent', body: `Still there? ${MARKER}\nn: 5`, actions: [{ title: 'Approve' }, { title: 'Decline' }] });
    expect(reminder.received.raw.toString('latin1')).not.toContain(MARKER);
    expect(reminder.received.headers.topic).toBe(first.received.headers.topic);
    await agent.callTool('elicit_cancel', { elicitationId: id });
  }, 30_000);

  it('an action for a request that is not what the notification showed is refused; the notification\'s own "No" answers the agent\'s waiting confirm', async () => {
    const { phone } = await pairedPhone('Stale phone');
    const keys = await subscribe(phone, '/push/stale');
    // elicit_confirm waits for its answer: the agent is blocked on the person's phone.
    const asked = agent.callTool('elicit_confirm', { message: 'Run the migration?', via: 'extension', waitSeconds: 20 });
    const payload = openPush((await service.next((r) => r.path === '/push/stale', 10_000)).raw, keys);
    const id = payload.elicitationId;
    expect(payload.actions.map((a) => a.title)).toEqual(['Yes', 'No']);
    expect((await decide(phone, id, payload, 0, 'b'.repeat(64))).result).toMatchObject({ ok: false, reason: 'shown_mismatch' });
    expect((await agent.callTool('elicit_status', { elicitationId: id })).structuredContent).toMatchObject({ status: 'pending' });
    expect((await decide(phone, id, payload, 1)).result).toEqual({ ok: true, status: 'approved' });
    expect((await asked).structuredContent).toMatchObject({ confirmed: false, action: 'accept' });
  }, 30_000);

  it('an action after the request expired is refused', async () => {
    const { phone } = await pairedPhone('Late phone');
    const keys = await subscribe(phone, '/push/late');
    const id = created(await agent.callTool('elicit_approval', { message: 'Quick one', context: { n: 1 }, timeoutSeconds: 1 }));
    const { payload } = await pushFor('/push/late', keys, id);
    await until('the request to expire', async () => ((await agent.callTool('elicit_status', { elicitationId: id })).structuredContent?.status === 'expired' ? true : undefined), 10_000);
    expect((await decide(phone, id, payload, 0)).result).toMatchObject({ ok: false, reason: 'expired' });
  }, 30_000);

  it('a subscription its push service says is gone (410) is dropped; a removed device\'s goes with it and gets nothing more', async () => {
    const gone = await pairedPhone('Gone phone');
    const goneKeys = await subscribe(gone.phone, '/gone/1');
    const kept = await pairedPhone('Kept phone');
    const keptKeys = await subscribe(kept.phone, '/push/kept');
    const removed = await pairedPhone('Removed phone');
    await subscribe(removed.phone, '/push/removed');
    state.removePairedDevice(removed.keyId);

    const first = created(await agent.callTool('elicit_approval', { message: 'First', context: { n: 1 } }));
    await pushFor('/gone/1', goneKeys, first);
    await until('the gone subscription to be dropped', () => (state.pairedDevices().find((d) => d.keyId === gone.keyId)?.push === undefined ? true : undefined), 10_000);
    expect(state.pairedDevices().find((d) => d.keyId === gone.keyId)).toBeDefined();
    await pushFor('/push/kept', keptKeys, first);

    const second = created(await agent.callTool('elicit_approval', { message: 'Second', context: { n: 2 } }));
    await pushFor('/push/kept', keptKeys, second);
    expect(service.received.filter((r) => r.path === '/gone/1')).toHaveLength(1);
    expect(service.received.filter((r) => r.path === '/push/removed')).toHaveLength(0);
  }, 30_000);

  it('the worker\'s one-shot client decides with the non-extractable key; a key the hub does not know, or no hub, decides nothing', async () => {
    const { keyId, key } = await pairedPhone('Worker phone');
    const id = created(await agent.callTool('elicit_approval', { message: 'From the lock screen', context: { n: 3 } }));
    const common = { url: WS, binding: { port, role: 'device' as const, origin: LOOPBACK }, socketFactory: socketFrom(LOOPBACK), client: { name: 'worker-test', version: '1' }, timeoutMs: 5000 };
    const params = { elicitationId: id, idempotencyKey: randomBytes(8).toString('hex'), decision: 'approved' as const };

    const wrong = await decideOnce({ ...common, credential: { keyId, key: await importHubSecret('0'.repeat(64)) }, params });
    expect(wrong.state).toBe('unproven');
    const nobody = await decideOnce({ ...common, url: `ws://127.0.0.1:${freePort()}/phone/socket`, credential: { keyId, key: await importHubSecret(key) }, params });
    expect(nobody.state).toBe('unreachable');
    expect((await agent.callTool('elicit_status', { elicitationId: id })).structuredContent).toMatchObject({ status: 'pending' });

    const secret = await importHubSecret(key);
    expect(secret.extractable).toBe(false);
    expect(await decideOnce({ ...common, credential: { keyId, key: secret }, params })).toEqual({ state: 'answered', answer: { ok: true, status: 'approved' } });
    expect((await agent.callTool('elicit_result', { elicitationId: id })).structuredContent).toMatchObject({ decision: 'approved', decidedVia: 'phone' });
  }, 30_000);
});

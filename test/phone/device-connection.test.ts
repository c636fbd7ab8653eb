// Issue 20, the phone page's side of the hub socket: the device handshake (the hub proves first, bound to its port and
// the page's origin), pairing by the QR's code, a removed phone, bounded waits for the welcome and for decisions.
import { describe, expect, it } from 'vitest';
import { DECIDE_TIMEOUT_MS, WELCOME_TIMEOUT_MS } from '../../phone/device-connection.js';
import {
  CLOSE_AUTH_FAILED, CLOSE_CODE_REPLACED, CLOSE_NO_PAIRING, CLOSE_PROTOCOL_MISMATCH, CLOSE_UNKNOWN_KEY, HEARTBEAT_MS, PAIRING_SUBPROTOCOL, PROTOCOL_VERSION, SUBPROTOCOL,
  protocolMismatchReason,
} from '../../shared/wire-protocol.js';
import type { HubKey } from '../../kit/rows/settings-schema.js';
import {
  HUB_PORT, ORIGIN, TEST_CODE, TEST_KEY, TEST_KEY_ID, deviceHarness, nextSent, pairHub, proposalView, proveHub, settle, until, welcome, welcomeHub, type FakeSocket,
} from './phone-fakes.js';

/** A phone paired before, connected and welcomed. */
async function welcomed(h: ReturnType<typeof deviceHarness>) {
  h.connection.ensure();
  const socket = h.last();
  socket.open();
  await welcomeHub(socket, TEST_KEY, welcome([proposalView('el_1', h.clock.t)]));
  await until(() => h.state()?.state === 'connected', 'the welcome');
  return socket;
}

/** The `index`-th decide call the page sent (bounded wait): its id to answer by, and its params. */
async function decideCall(socket: FakeSocket, index = 0): Promise<{ id: string; params: unknown }> {
  const decides = () => socket.sent.filter((m) => m.method === 'decide');
  await until(() => decides().length > index, 'the page to call decide');
  const frame = decides()[index];
  if (frame?.id === undefined) throw new Error('a decide was sent as a notice, not a call');
  return { id: frame.id, params: frame.params };
}

/** Whether `promise` has settled by now, with no time passing on the manual clock. */
async function settledYet(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true), () => (done = true));
  await settle();
  return done;
}

describe('the device handshake', () => {
  it('sends only its hello until the hub proves this phone\'s key, then its proof, and is connected on the welcome', async () => {
    const h = deviceHarness();
    h.connection.ensure();
    const socket = h.last();
    expect(socket.url).toBe('wss://laptop.tailnet.example/phone/socket');
    expect(socket.protocols).toEqual([SUBPROTOCOL]);
    socket.open();
    const hello = await nextSent(socket, 'hello');
    expect(hello).toEqual({
      id: 'hello', method: 'hello',
      params: { protocol: PROTOCOL_VERSION, role: 'device', client: { name: 'elicitly-phone', version: 'test' }, nonce: expect.stringMatching(/^[0-9a-f]{64}$/), keyId: TEST_KEY_ID },
    });
    // The hub's heartbeat before its proof is no reason to say anything, and a decision cannot go yet.
    socket.deliver({ method: 'heartbeat', params: { t: 1 } });
    expect(await h.connection.decide({ elicitationId: 'el_1', decision: 'approved' })).toMatchObject({ state: 'error', message: expect.stringContaining('Not connected') });
    await settle();
    expect(socket.methods()).toEqual(['hello']);
    const { authId } = await proveHub(socket, TEST_KEY);
    expect(socket.methods()).toEqual(['hello', 'auth']);
    expect(h.state()?.state).toBe('connecting');
    socket.answer(authId, { welcome: welcome([proposalView('el_1', h.clock.t)], [proposalView('el_0', h.clock.t - 5000, { status: 'approved', decidedAt: h.clock.t - 1000 })]) });
    await until(() => h.state()?.state === 'connected', 'the welcome');
    expect(h.welcomes).toHaveLength(1);
    expect(h.welcomes[0]?.pending.map((v) => v.elicitationId)).toEqual(['el_1']);
    expect(h.welcomes[0]?.recent.map((v) => v.elicitationId)).toEqual(['el_0']);
  });

  it.each([
    ['a wrong proof', { forge: true }],
    ['a proof bound to another origin (the page served elsewhere)', { binding: { port: HUB_PORT, role: 'device' as const, origin: 'http://127.0.0.1:17391' } }],
    ['a proof bound to the port the phone dialled, not the hub\'s', { binding: { port: 443, role: 'device' as const, origin: ORIGIN } }],
    ['an extension\'s proof', { binding: { port: HUB_PORT, role: 'extension' as const } }],
  ])('%s: untrusted, nothing after the hello is sent, the socket is closed, the key kept, and it tries again', async (_what, options) => {
    const h = deviceHarness();
    h.connection.ensure();
    const socket = h.last();
    socket.open();
    await proveHub(socket, TEST_KEY, options);
    await until(() => socket.closed, 'the socket to close');
    expect(socket.methods()).toEqual(['hello']);
    expect(h.state()).toMatchObject({ state: 'untrusted_hub', retryAt: expect.any(Number) });
    expect(h.keys.key).toEqual({ keyId: TEST_KEY_ID, key: TEST_KEY });
    h.clock.advance(2000);
    expect(h.sockets).toHaveLength(2);
  });

  it.each([
    ['a welcome (with requests to approve)', JSON.stringify({ id: 'auth', result: { welcome: welcome([proposalView('el_phish', 1)]) } })],
    ['a request.created', JSON.stringify({ method: 'request.created', params: { request: proposalView('el_phish', 1) } })],
    ['a frame that is not JSON', '{nope'],
    ["an old hub's error (protocol ≤ 8) is no proof either", JSON.stringify({ type: 'error', code: 'rate_limited', message: 'slow down' })],
  ])('%s before any proof: untrusted, nothing sent, nothing shown', async (_what, frame) => {
    const h = deviceHarness();
    h.connection.ensure();
    const socket = h.last();
    socket.open();
    await nextSent(socket, 'hello');
    socket.deliver(frame);
    await until(() => socket.closed, 'the socket to close');
    expect(socket.methods()).toEqual(['hello']);
    expect(h.welcomes).toEqual([]);
    expect(h.events).toEqual([]);
    // An old hub's frame is a mismatch (its protocol unknown), anything else an impostor.
    expect(h.state()?.state).toBe(frame.includes('"type":"error"') ? 'version_mismatch' : 'untrusted_hub');
  });

  it('without a key opens no socket: not paired', () => {
    const h = deviceHarness(null);
    h.connection.ensure();
    expect(h.sockets).toHaveLength(0);
    expect(h.state()).toMatchObject({ state: 'pairing_needed' });
    expect(h.state()).not.toHaveProperty('reason');
  });

  it('gives up on a hub that never welcomes within 10 s, and tries again after the backoff', async () => {
    const h = deviceHarness();
    h.connection.ensure();
    const socket = h.last();
    socket.open();
    await proveHub(socket, TEST_KEY);
    h.clock.advance(WELCOME_TIMEOUT_MS - 1);
    expect(socket.closed).toBe(false);
    h.clock.advance(1);
    expect(socket.closed).toBe(true);
    expect(h.state()).toMatchObject({ state: 'reconnecting' });
    h.clock.advance(1000);
    expect(h.sockets).toHaveLength(2);
  });

  it('sends a heartbeat every HEARTBEAT_MS once welcomed, and never answers the hub\'s', async () => {
    const h = deviceHarness();
    const socket = await welcomed(h);
    socket.deliver({ method: 'heartbeat', params: { t: 5 } });
    await settle();
    expect(socket.methods()).toEqual(['hello', 'auth']);
    h.clock.advance(HEARTBEAT_MS);
    h.clock.advance(HEARTBEAT_MS);
    expect(socket.methods()).toEqual(['hello', 'auth', 'heartbeat', 'heartbeat']);
    // Notices, never calls: nothing waits for an answer to them.
    expect(socket.sent.slice(2).every((m) => m.id === undefined)).toBe(true);
  });

  it('passes request events on after the welcome', async () => {
    const h = deviceHarness();
    const socket = await welcomed(h);
    socket.deliver({ method: 'request.created', params: { request: proposalView('el_2', h.clock.t) } });
    socket.deliver({ method: 'request.removed', params: { elicitationId: 'el_1', status: 'approved', decidedVia: 'extension' } });
    await until(() => h.events.length === 2, 'the events');
    expect(h.events.map((e) => e.method)).toEqual(['request.created', 'request.removed']);
    expect(h.events[1]?.params).toEqual({ elicitationId: 'el_1', status: 'approved', decidedVia: 'extension' });
  });
});

describe('pairing with the QR\'s code', () => {
  it('proves the code, names the device, keeps the opened key before the welcome, and proves the key from then on', async () => {
    // What the store held when the welcome (in the same answer to auth as the key) was applied.
    const keyAtWelcome: (HubKey | null)[] = [];
    const h = deviceHarness(null, { onWelcome: () => keyAtWelcome.push(h.keys.read()) });
    h.connection.ensure();
    expect(h.state()?.state).toBe('pairing_needed');
    h.connection.pair('0A1B-2C3D-4E5F', 'Pixel (Chrome)');
    const socket = h.last();
    expect(socket.protocols).toEqual([SUBPROTOCOL, PAIRING_SUBPROTOCOL]);
    expect(h.state()?.state).toBe('pairing');
    socket.open();
    const hello = await nextSent(socket, 'hello');
    expect(hello).toMatchObject({ params: { role: 'device', pairing: true, deviceName: 'Pixel (Chrome)' } });
    expect(hello.params).not.toHaveProperty('keyId');
    const key = 'a7'.repeat(32);
    await pairHub(socket, TEST_CODE, key, 'k_00000000000000aa');
    await until(() => h.state()?.state === 'connected', 'the welcome');
    expect(h.keys.key).toEqual({ keyId: 'k_00000000000000aa', key });
    expect(keyAtWelcome).toEqual([{ keyId: 'k_00000000000000aa', key }]);

    // The next connection proves the key, not the spent code.
    socket.closeFromHub(1001, 'going away');
    h.clock.advance(2000);
    const next = h.last();
    expect(next).not.toBe(socket);
    expect(next.protocols).toEqual([SUBPROTOCOL]);
    next.open();
    expect(await nextSent(next, 'hello')).toMatchObject({ params: { keyId: 'k_00000000000000aa' } });
    await proveHub(next, key);
  });

  it('a hub that welcomes a pairing phone without handing over a key is left', async () => {
    const h = deviceHarness(null);
    h.connection.pair(TEST_CODE, 'Phone');
    const socket = h.last();
    socket.open();
    const { authId } = await proveHub(socket, TEST_CODE);
    // The answer to auth carries the welcome but no `paired`.
    socket.answer(authId, { welcome: welcome() });
    await until(() => socket.closed, 'the socket to close');
    expect(h.keys.key).toBeNull();
    expect(h.state()?.state).not.toBe('connected');
  });

  it.each([
    [CLOSE_AUTH_FAILED, 'code_refused'],
    [CLOSE_NO_PAIRING, 'no_code_active'],
    [CLOSE_CODE_REPLACED, 'code_replaced'],
  ])('close %i while pairing: the code is dropped (%s), no socket is opened again', async (code, reason) => {
    const h = deviceHarness(null);
    h.connection.pair(TEST_CODE, 'Phone');
    const socket = h.last();
    socket.open();
    socket.closeFromHub(code);
    expect(h.refusals).toEqual([reason]);
    expect(h.state()).toMatchObject({ state: 'pairing_needed', reason });
    h.clock.advance(60_000);
    expect(h.sockets).toHaveLength(1);
  });

  it('the QR link\'s serial goes in the pairing hello, so the hub can say the code was replaced', async () => {
    const h = deviceHarness(null);
    h.connection.pair(TEST_CODE, 'Phone', 7);
    const socket = h.last();
    socket.open();
    expect(await nextSent(socket, 'hello')).toMatchObject({ params: { pairing: true, deviceName: 'Phone', pairingSerial: 7 } });
  });

  it('a hub that cannot prove the code: code_unproven, only the hello went out', async () => {
    const h = deviceHarness(null);
    h.connection.pair(TEST_CODE, 'Phone');
    const socket = h.last();
    socket.open();
    await proveHub(socket, TEST_CODE, { forge: true });
    await until(() => socket.closed, 'the socket to close');
    expect(socket.methods()).toEqual(['hello']);
    expect(h.state()).toMatchObject({ state: 'pairing_needed', reason: 'code_unproven' });
  });
});

describe('a phone the hub no longer knows', () => {
  it.each([CLOSE_UNKNOWN_KEY, CLOSE_AUTH_FAILED])('close %i: the stored key is removed, the page says so, and it stops knocking', async (code) => {
    const h = deviceHarness();
    const socket = await welcomed(h);
    socket.closeFromHub(code);
    expect(h.keys.key).toBeNull();
    expect(h.state()).toMatchObject({ state: 'pairing_needed', reason: 'key_unknown' });
    h.clock.advance(60_000);
    h.connection.ensure();
    expect(h.sockets).toHaveLength(1);
  });

  it('a version mismatch says which protocol the hub speaks and retries later', async () => {
    const h = deviceHarness();
    h.connection.ensure();
    const socket = h.last();
    socket.open();
    socket.closeFromHub(CLOSE_PROTOCOL_MISMATCH, protocolMismatchReason(PROTOCOL_VERSION + 1));
    expect(h.state()).toMatchObject({ state: 'version_mismatch', hubProtocol: PROTOCOL_VERSION + 1, retryAt: expect.any(Number) });
    expect(h.keys.key).not.toBeNull();
    h.clock.advance(2000);
    expect(h.sockets).toHaveLength(2);
  });
});

describe('decisions', () => {
  it('go as the person made them and return the hub\'s answer', async () => {
    const h = deviceHarness();
    const socket = await welcomed(h);
    const reply = h.connection.decide({ elicitationId: 'el_1', decision: 'approved', values: { name: 'Ada' }, included: ['name'], comment: 'ok' });
    const sent = await nextSent(socket, 'decide');
    expect(sent).toEqual({
      id: expect.any(String), method: 'decide',
      params: { elicitationId: 'el_1', decision: 'approved', values: { name: 'Ada' }, included: ['name'], comment: 'ok', idempotencyKey: expect.any(String) },
    });
    socket.answer(sent.id, { ok: true, status: 'approved' });
    expect(await reply).toEqual({ state: 'answered', ok: true, status: 'approved' });
  });

  it('wait at most 5 s for the answer; the same decision sent again carries the same idempotency key', async () => {
    const h = deviceHarness();
    const socket = await welcomed(h);
    let settled = false;
    const reply = h.connection.decide({ elicitationId: 'el_1', decision: 'rejected' }).finally(() => (settled = true));
    const first = await decideCall(socket);
    h.clock.advance(DECIDE_TIMEOUT_MS - 1);
    await settle();
    expect(settled).toBe(false);
    h.clock.advance(1);
    expect(await reply).toMatchObject({ state: 'error', message: expect.stringContaining('may or may not') });
    const again = h.connection.decide({ elicitationId: 'el_1', decision: 'rejected' });
    const second = await decideCall(socket, 1);
    expect(second.id).not.toBe(first.id);
    // The same decision, so the same params, idempotency key included.
    expect(second.params).toEqual(first.params);
    socket.answer(second.id, { ok: false, reason: 'already_decided', status: 'approved' });
    expect(await again).toEqual({ state: 'answered', ok: false, reason: 'already_decided', status: 'approved' });
  });

  it('waiting when the socket closes: told at once, not after the bound', async () => {
    const h = deviceHarness();
    const socket = await welcomed(h);
    const reply = h.connection.decide({ elicitationId: 'el_1', decision: 'approved' });
    const first = await decideCall(socket);
    expect(await settledYet(reply)).toBe(false);
    socket.closeFromHub(1006);
    // No time passes: the close itself answers the call.
    expect(await settledYet(reply)).toBe(true);
    expect(await reply).toMatchObject({ state: 'error', message: expect.stringContaining('may or may not') });
    // It may have been recorded: the same decision sent again carries the same key.
    h.clock.advance(2000);
    const next = h.last();
    expect(next).not.toBe(socket);
    next.open();
    await welcomeHub(next, TEST_KEY, welcome([proposalView('el_1', h.clock.t)]));
    await until(() => h.state()?.state === 'connected', 'the welcome');
    const again = h.connection.decide({ elicitationId: 'el_1', decision: 'approved' });
    const retried = await decideCall(next);
    expect(retried.params).toEqual(first.params);
    next.answer(retried.id, { ok: true, status: 'approved' });
    expect(await again).toEqual({ state: 'answered', ok: true, status: 'approved' });
  });

  it('an answer carrying an id no call waits for (a late one, after the 5 s) is ignored: the next decision waits for its own', async () => {
    const logged: string[] = [];
    const h = deviceHarness(undefined, { log: (m) => logged.push(m) });
    const socket = await welcomed(h);
    const reply = h.connection.decide({ elicitationId: 'el_1', decision: 'rejected' });
    const first = await decideCall(socket);
    h.clock.advance(DECIDE_TIMEOUT_MS);
    expect(await reply).toMatchObject({ state: 'error' });
    const again = h.connection.decide({ elicitationId: 'el_1', decision: 'rejected' });
    const second = await decideCall(socket, 1);
    socket.answer(first.id, { ok: true, status: 'rejected' });
    expect(await settledYet(again)).toBe(false);
    expect(logged).toContainEqual(expect.stringMatching(/^ignored an answer to no call of ours/));
    socket.answer(second.id, { ok: false, reason: 'already_decided', status: 'rejected' });
    expect(await again).toEqual({ state: 'answered', ok: false, reason: 'already_decided', status: 'rejected' });
  });

  it.each<[string, { code: 'invalid' | 'unavailable' | 'forbidden'; message: string; issues?: { path: string; rule: string; message: string }[] }, unknown]>([
    [
      'invalid (params that fail the schema): a refusal naming the field',
      { code: 'invalid', message: 'values.name: too long', issues: [{ path: 'values.name', rule: 'too_big', message: 'values.name: too long' }] },
      { state: 'answered', ok: false, reason: 'invalid', issues: [{ path: 'values.name', rule: 'too_big', message: 'values.name: too long' }] },
    ],
    ['unavailable (the hub could not record it): try again', { code: 'unavailable', message: 'the store failed' }, { state: 'error', message: 'The hub could not record the decision: try again.' }],
    ['forbidden: the hub\'s words', { code: 'forbidden', message: 'not for a device' }, { state: 'error', message: 'The hub refused the decision: not for a device' }],
  ])('a decide answered with an error %s', async (_what, error, expected) => {
    const h = deviceHarness();
    const socket = await welcomed(h);
    const reply = h.connection.decide({ elicitationId: 'el_1', decision: 'approved', values: { name: 'Ada' }, included: ['name'] });
    socket.deliver({ id: (await decideCall(socket)).id, error });
    expect(await reply).toEqual(expected);
  });
});

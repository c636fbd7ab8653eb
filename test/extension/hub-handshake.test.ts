// Issue 9 on the extension's side: the hub proves the key (or the pairing code) before anything but the hello leaves
// this browser; every extension pairs; a refused credential is dropped and the header says what to do.
import { beforeEach, describe, expect, it } from 'vitest';
import { getRequest } from '../../extension/db/requests-repo.js';
import { rowFromView } from '../../kit/rows/rows.js';
import { patchSettings, readConnection, readSettings } from '../../extension/db/settings-repo.js';
import { hubProof, newNonce, peerProof } from '../../shared/hub-auth.js';
import { CLOSE_AUTH_FAILED, CLOSE_NO_PAIRING, CLOSE_UNKNOWN_KEY, PAIRING_SUBPROTOCOL, PROTOCOL_VERSION, SUBPROTOCOL } from '../../shared/wire-protocol.js';
import type { BackgroundController } from '../../extension/background/background-controller.js';
import { pairHub as pairWith, welcomeOf } from '../helpers/hub-fakes.js';
import { harness, proveExtension, type Harness } from './background-harness.js';
import { TEST_CODE, TEST_KEY, TEST_KEY_ID, bindingOf, nextSent, pairHub, proposalView, proveHub, settle, type FakeSocket } from './fakes.js';

let h: Harness;
beforeEach(() => {
  h = harness();
});

const types = (socket: FakeSocket) => socket.methods();
/** The extension's hello on `socket` (bounded wait), its nonce typed. */
const helloOf = (socket: FakeSocket) => nextSent<{ nonce: string }>(socket, 'hello');
const OTHER_KEY = '77'.repeat(32);
const OTHER_KEY_ID = 'k_fedcba9876543210';

/** A decision waiting in the outbox, as one made while no hub was there leaves it. */
async function queuedDecision(): Promise<void> {
  const view = proposalView('el_1', h.clock.t - 1000);
  await h.db.requests.put({ ...rowFromView(view), outcome: { decision: 'approved', action: 'submit', values: {}, included: [] }, delivery: 'queued' });
  await h.db.outbox.put({ idempotencyKey: 'queued-key', elicitationId: 'el_1', decision: 'approved', values: {}, included: [], queuedAt: h.clock.t - 500 });
}

let controller: BackgroundController;

/** Starts a controller and opens its first socket (the test plays the hub). */
async function started(): Promise<FakeSocket> {
  controller = h.controller();
  controller.start();
  await settle();
  const socket = h.sockets[0];
  if (!socket) throw new Error('no socket was opened');
  socket.open();
  return socket;
}

describe('a paired browser and the real hub', () => {
  it('sends only its hello until the hub proves the key, then its own proof, and decisions only after the welcome', async () => {
    await h.paired();
    await queuedDecision();
    const socket = await started();
    const hello = await nextSent(socket, 'hello');
    expect(hello).toEqual({
      id: 'hello', method: 'hello', params: { protocol: PROTOCOL_VERSION, role: 'extension', client: { name: 'test', version: '1' }, nonce: expect.stringMatching(/^[0-9a-f]{64}$/), keyId: TEST_KEY_ID },
    });
    expect(socket.protocols).toEqual([SUBPROTOCOL]);
    // The hub's heartbeat before its challenge is no reason to say anything.
    socket.deliver({ method: 'heartbeat', params: { t: 1 } });
    await settle();
    expect(types(socket)).toEqual(['hello']);
    const authId = await proveExtension(socket);
    await settle();
    // Proven both ways, but not welcomed (auth not answered yet): the queued decision still waits.
    expect(types(socket)).toEqual(['hello', 'auth']);
    socket.answer(authId, { welcome: welcomeOf({ pending: [proposalView('el_1', h.clock.t - 1000)] }) });
    await settle();
    expect(types(socket)).toEqual(['hello', 'auth', 'decide']);
    expect((await readConnection(h.db))?.state).toBe('connected');
  });

  it('uses a fresh nonce on every connection', async () => {
    const first = await h.connect(h.controller(), []);
    first.drop();
    await settle();
    const second = await h.reconnect([]);
    const nonces = [(await helloOf(first)).params.nonce, (await helloOf(second)).params.nonce];
    expect(nonces[0]).toMatch(/^[0-9a-f]{64}$/);
    expect(nonces[0]).not.toBe(nonces[1]);
  });
});

describe('a proven hub before its welcome', () => {
  it('a notice from a proven hub before it answers auth is passed over (the welcome lists everything), and the welcome still applies', async () => {
    await h.paired();
    const logged: string[] = [];
    controller = h.controller({ log: (m) => logged.push(m) });
    controller.start();
    await settle();
    const socket = h.sockets[0]!;
    socket.open();
    const authId = await proveExtension(socket);
    socket.deliver({ method: 'request.created', params: { request: proposalView('el_early', h.clock.t) } });
    socket.answer(authId, { welcome: welcomeOf({ pending: [proposalView('el_1', h.clock.t - 1000)] }) });
    await settle();
    expect(logged).toContain('ignored request.created from the hub before its welcome');
    expect(await getRequest(h.db, 'el_early')).toBeUndefined();
    expect((await getRequest(h.db, 'el_1'))?.status).toBe('pending');
    expect((await readConnection(h.db))?.state).toBe('connected');
  });

  it('a hub that refuses the hello call ({id:"hello", error}) is left and tried again later: the key kept, nothing more sent', async () => {
    await h.paired();
    await queuedDecision();
    const socket = await started();
    const hello = await nextSent(socket, 'hello');
    socket.deliver({ id: hello.id ?? '', error: { code: 'rate_limited', message: 'too many sockets from this origin' } });
    await settle();
    expect(types(socket)).toEqual(['hello']);
    expect(socket.closed).toBe(true);
    expect(await readConnection(h.db)).toMatchObject({ state: 'reconnecting', detail: 'the hub refused hello: too many sockets from this origin', retryAt: expect.any(Number) });
    expect((await readSettings(h.db)).hubKeys['17391']).toEqual({ keyId: TEST_KEY_ID, key: TEST_KEY });
    expect(await h.db.outbox.count()).toBe(1);
    const next = await h.nextSocket();
    await h.accept(next, [proposalView('el_1', h.clock.t - 1000)]);
    expect(types(next)).toEqual(['hello', 'auth', 'decide']);
  });
});

/** The connection state once it is `expected`, or as it is after 500 bounded polls. */
async function connectionState(expected: string): Promise<string | undefined> {
  let state: string | undefined;
  for (let i = 0; i < 500; i++) {
    state = (await readConnection(h.db))?.state;
    if (state === expected) break;
    await new Promise((r) => setTimeout(r, 2));
  }
  return state;
}

describe('something other than the hub on the port', () => {
  it('a wrong proof: the socket is closed, nothing after the hello leaves (not the queued decision), the header says so, and it retries', async () => {
    await h.paired();
    await queuedDecision();
    const socket = await started();
    await proveHub(socket, TEST_KEY, { forge: true });
    await settle();
    expect(types(socket)).toEqual(['hello']);
    expect(socket.closed).toBe(true);
    expect(await readConnection(h.db)).toMatchObject({ state: 'untrusted_hub', port: 17391, retryAt: expect.any(Number) });
    // The key stays: the real hub may be back on the port later.
    expect((await readSettings(h.db)).hubKeys['17391']).toEqual({ keyId: TEST_KEY_ID, key: TEST_KEY });
    expect(await h.db.outbox.count()).toBe(1);

    // Still there on the next attempt: the header keeps saying it, and again only the hello went out.
    const again = await h.nextSocket();
    expect((await readConnection(h.db))?.state).toBe('untrusted_hub');
    again.open();
    await proveHub(again, TEST_KEY, { forge: true });
    await settle();
    expect(types(again)).toEqual(['hello']);

    // The real hub is back: the decision goes to it, after its welcome.
    const honest = await h.nextSocket();
    await h.accept(honest, [proposalView('el_1', h.clock.t - 1000)]);
    expect(types(honest)).toEqual(['hello', 'auth', 'decide']);
    expect((await readConnection(h.db))?.state).toBe('connected');
  });

  it('a welcome (with requests to approve) before any proof is not applied', async () => {
    await h.paired();
    const socket = await started();
    await nextSent(socket, 'hello');
    // Shaped as the answer to an auth this browser never sent.
    socket.deliver({ id: 'auth', result: { welcome: welcomeOf({ pending: [proposalView('el_phish', h.clock.t)] }) } });
    await settle();
    expect(types(socket)).toEqual(['hello']);
    expect(socket.closed).toBe(true);
    expect(await getRequest(h.db, 'el_phish')).toBeUndefined();
    expect(h.platform.notified).toEqual([]);
    expect((await readConnection(h.db))?.state).toBe('untrusted_hub');
  });

  it.each([
    ['a request.created', JSON.stringify({ method: 'request.created', params: { request: proposalView('el_x', 1) } })],
    ['a frame that is not JSON', '{nope'],
    ['a paired key with a welcome', JSON.stringify({ id: 'auth', result: { paired: { keyId: TEST_KEY_ID, sealedKey: OTHER_KEY }, welcome: welcomeOf({ pending: [proposalView('el_x', 1)] }) } })],
    ['an answer to a call never made', JSON.stringify({ id: 'c1', result: { ok: true, status: 'approved' } })],
    ['an error for no call', JSON.stringify({ id: null, error: { code: 'invalid', message: 'not JSON' } })],
  ])('%s before any proof: untrusted, nothing sent', async (_what, frame) => {
    await h.paired();
    const socket = await started();
    await nextSent(socket, 'hello');
    socket.deliver(frame);
    await settle();
    expect(types(socket)).toEqual(['hello']);
    expect(socket.closed).toBe(true);
    expect((await readConnection(h.db))?.state).toBe('untrusted_hub');
    expect(await getRequest(h.db, 'el_x')).toBeUndefined();
  });

  it('a challenge that replays our own nonce and a proof made for the other direction is refused', async () => {
    await h.paired();
    const socket = await started();
    const hello = await helloOf(socket);
    const { nonce } = hello.params;
    // Reflection: what the extension itself would prove is not what the hub must prove.
    socket.answer(hello.id, { nonce, proof: await peerProof(TEST_KEY, bindingOf(socket), nonce, nonce) });
    // The proof is checked with Web Crypto, on its own schedule: CI under load saw the state still 'connecting' after
    // a fixed number of turns of the event loop.
    expect(await connectionState('untrusted_hub')).toBe('untrusted_hub');
    expect(types(socket)).toEqual(['hello']);
  });

  it('once nothing answers on the port any more, the header says "reconnecting" again', async () => {
    await h.paired();
    const socket = await started();
    await proveHub(socket, TEST_KEY, { forge: true });
    await settle();
    const next = await h.nextSocket();
    // Refused before it opened: no process on the port now.
    next.drop();
    await settle();
    expect((await readConnection(h.db))?.state).toBe('reconnecting');
  });
});

describe('pairing', () => {
  it('with the code from settings: the pairing subprotocol and hello, the key stored for the port, the code forgotten, then the key is used', async () => {
    await patchSettings(h.db, { port: 18001, pairingCode: TEST_CODE });
    const socket = await started();
    expect(socket.url).toBe('ws://127.0.0.1:18001');
    expect(socket.protocols).toEqual([SUBPROTOCOL, PAIRING_SUBPROTOCOL]);
    const hello = await nextSent(socket, 'hello');
    expect(hello).toEqual({
      id: 'hello', method: 'hello', params: { protocol: PROTOCOL_VERSION, role: 'extension', client: { name: 'test', version: '1' }, nonce: expect.stringMatching(/^[0-9a-f]{64}$/), pairing: true },
    });
    // The key comes sealed in the answer to auth, with the welcome.
    await pairHub(socket, TEST_CODE, OTHER_KEY, OTHER_KEY_ID);
    await settle();
    expect(await readSettings(h.db)).toMatchObject({ pairingCode: '', hubKeys: { 18001: { keyId: OTHER_KEY_ID, key: OTHER_KEY } } });
    expect((await readConnection(h.db))?.state).toBe('connected');
    expect(types(socket)).toEqual(['hello', 'auth']);

    socket.drop();
    await settle();
    const next = await h.nextSocket();
    expect(next.protocols).toEqual([SUBPROTOCOL]);
    next.open();
    expect(await nextSent(next, 'hello')).toMatchObject({ params: { keyId: OTHER_KEY_ID } });
    await proveHub(next, OTHER_KEY);
  });

  it('a code typed with dashes, spaces and capitals is the code the hub printed', async () => {
    await patchSettings(h.db, { pairingCode: '0A1B-2C3D 4E5F' });
    const socket = await started();
    await pairHub(socket, TEST_CODE);
    await settle();
    expect((await readSettings(h.db)).hubKeys['17391']).toEqual({ keyId: TEST_KEY_ID, key: TEST_KEY });
  });

  it('nothing is sent before the welcome, and a hub that welcomes without handing over a key is left', async () => {
    await queuedDecision();
    await patchSettings(h.db, { pairingCode: TEST_CODE });
    const socket = await started();
    const authId = await proveExtension(socket, TEST_CODE);
    // The answer to auth carries the welcome but no `paired`.
    socket.answer(authId, { welcome: welcomeOf({ pending: [proposalView('el_1', h.clock.t - 1000)] }) });
    await settle();
    expect(types(socket)).toEqual(['hello', 'auth']);
    expect(socket.closed).toBe(true);
    expect((await readSettings(h.db)).hubKeys).toEqual({});
    expect(controller.connection.connected).toBe(false);
  });

  it('a hub that cannot prove the code (a typo, or not our hub): nothing sent after the hello, the code dropped, the header says to check it', async () => {
    await queuedDecision();
    await patchSettings(h.db, { pairingCode: TEST_CODE });
    const socket = await started();
    await proveHub(socket, TEST_CODE, { forge: true });
    await settle();
    expect(types(socket)).toEqual(['hello']);
    expect(socket.closed).toBe(true);
    expect((await readSettings(h.db)).pairingCode).toBe('');
    expect(await readConnection(h.db)).toMatchObject({ state: 'pairing_needed', port: 17391, reason: 'code_unproven' });
    // Nothing left to prove: no more sockets, and the reason stays on screen.
    h.clock.advance(60_000);
    await settle();
    await controller.tick();
    await settle();
    expect(h.sockets).toHaveLength(1);
    expect(await readConnection(h.db)).toMatchObject({ state: 'pairing_needed', reason: 'code_unproven' });
  });

  it.each([
    [CLOSE_AUTH_FAILED, 'code_refused'],
    [CLOSE_NO_PAIRING, 'no_code_active'],
  ] as const)('a close with %i: the code is dropped and the header says %s', async (code, reason) => {
    await patchSettings(h.db, { pairingCode: TEST_CODE });
    const socket = await started();
    await nextSent(socket, 'hello');
    socket.closeFromHub(code, '');
    await settle();
    expect((await readSettings(h.db)).pairingCode).toBe('');
    expect(await readConnection(h.db)).toMatchObject({ state: 'pairing_needed', reason });
    h.clock.advance(60_000);
    await settle();
    expect(h.sockets).toHaveLength(1);
  });

  it('a refused code with a key still stored: the key is tried next', async () => {
    await h.paired();
    await patchSettings(h.db, { pairingCode: TEST_CODE });
    const socket = await started();
    expect(socket.protocols).toEqual([SUBPROTOCOL, PAIRING_SUBPROTOCOL]);
    socket.closeFromHub(CLOSE_AUTH_FAILED, '');
    await settle();
    const next = await h.nextSocket();
    await h.accept(next, []);
    expect(next.sent[0]).toMatchObject({ method: 'hello', params: { keyId: TEST_KEY_ID } });
    expect((await readConnection(h.db))?.state).toBe('connected');
  });

  it('a code the person typed while the refused one was being dropped stays', async () => {
    await patchSettings(h.db, { pairingCode: TEST_CODE });
    const socket = await started();
    await patchSettings(h.db, { pairingCode: 'ffffffffffff' });
    socket.closeFromHub(CLOSE_AUTH_FAILED, '');
    await settle();
    expect((await readSettings(h.db)).pairingCode).toBe('ffffffffffff');
  });
});

describe('a key the hub no longer knows', () => {
  it.each([CLOSE_UNKNOWN_KEY, CLOSE_AUTH_FAILED])('close %i: the key is forgotten and the header asks to pair again', async (code) => {
    await h.paired();
    await queuedDecision();
    const socket = await started();
    await nextSent(socket, 'hello');
    socket.closeFromHub(code, '');
    await settle();
    expect((await readSettings(h.db)).hubKeys).toEqual({});
    expect(await readConnection(h.db)).toMatchObject({ state: 'pairing_needed', port: 17391, reason: 'key_unknown' });
    h.clock.advance(60_000);
    await settle();
    expect(h.sockets).toHaveLength(1);
    // The decision waits for a hub this browser can verify.
    expect(await h.db.outbox.count()).toBe(1);
  });

  it('a key replaced by a new pairing meanwhile is not the one forgotten', async () => {
    await h.paired();
    const socket = await started();
    await patchSettings(h.db, { hubKeys: { 17391: { keyId: OTHER_KEY_ID, key: OTHER_KEY } } });
    socket.closeFromHub(CLOSE_UNKNOWN_KEY, '');
    await settle();
    expect((await readSettings(h.db)).hubKeys['17391']?.keyId).toBe(OTHER_KEY_ID);
  });
});

describe('no key and no code', () => {
  it('opens no socket at all, says pairing is needed, queues decisions, and pairs as soon as a code is saved', async () => {
    const c = h.controller();
    c.start();
    await settle();
    await c.tick();
    h.clock.advance(120_000);
    await settle();
    expect(h.sockets).toEqual([]);
    expect(await readConnection(h.db)).toEqual({ state: 'pairing_needed', port: 17391, since: expect.any(Number) });
    await queuedDecision();
    expect(await c.decide({ elicitationId: 'el_1', decision: 'rejected' })).toMatchObject({ state: 'already_decided_here' });

    // Settings → Pairing code → Pair: the page stores the code and asks for a reconnect.
    await patchSettings(h.db, { pairingCode: TEST_CODE });
    expect(await c.handleUiMessage({ type: 'reconnect' })).toEqual({ ok: true });
    await settle();
    const socket = h.sockets[0]!;
    expect(socket.protocols).toEqual([SUBPROTOCOL, PAIRING_SUBPROTOCOL]);
    socket.open();
    await pairWith(socket, TEST_CODE, bindingOf(socket), TEST_KEY, TEST_KEY_ID, { pending: [proposalView('el_1', h.clock.t - 1000)] });
    await settle();
    expect(types(socket)).toEqual(['hello', 'auth', 'decide']);
  });

  it('settings stored before keys existed read as "not paired"; a damaged key map is dropped, the other settings kept', async () => {
    await h.db.table('settings').put({ key: 'current', value: { port: 18003, pairingCode: '', notifications: false, retentionDays: 30 } });
    expect(await readSettings(h.db)).toEqual({ port: 18003, pairingCode: '', notifications: false, retentionDays: 30, hubKeys: {} });
    const damaged = { port: 18003, pairingCode: '', notifications: false, retentionDays: 30, hubKeys: { 18003: { keyId: TEST_KEY_ID, key: 'short' } } };
    await h.db.table('settings').put({ key: 'current', value: damaged });
    expect(await readSettings(h.db)).toMatchObject({ port: 18003, notifications: false, hubKeys: {} });
    h.controller().start();
    await settle();
    expect(h.sockets).toEqual([]);
    expect(await readConnection(h.db)).toMatchObject({ state: 'pairing_needed', port: 18003 });
  });

  it('a key for another port does not count', async () => {
    await h.paired();
    await patchSettings(h.db, { port: 18002 });
    h.controller().start();
    await settle();
    expect(h.sockets).toEqual([]);
    expect(await readConnection(h.db)).toMatchObject({ state: 'pairing_needed', port: 18002 });
  });
});

describe('proofs are bound to this connection', () => {
  it('a challenge proved for another nonce (a replay from an earlier connection) is refused', async () => {
    await h.paired();
    const socket = await started();
    await nextSent(socket, 'hello');
    const hubNonce = newNonce();
    socket.answer('hello', { nonce: hubNonce, proof: await hubProof(TEST_KEY, bindingOf(socket), newNonce(), hubNonce) });
    await settle();
    expect(types(socket)).toEqual(['hello']);
    expect((await readConnection(h.db))?.state).toBe('untrusted_hub');
  });
});

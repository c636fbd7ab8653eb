// Issue 8 on the extension's side: one frame at a time, one decision per request, bounded waits, a loop-free
// keep-alive and a visible version mismatch.
import { Dexie } from 'dexie';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { getRequest } from '../../extension/db/requests-repo.js';
import { rowFromView } from '../../kit/rows/rows.js';
import { patchSettings, readConnection, readSettings } from '../../extension/db/settings-repo.js';
import { WELCOME_TIMEOUT_MS } from '../../kit/hub/hub-connection.js';
import { HEARTBEAT_MS, MAX_FRAME_BYTES, PROTOCOL_VERSION } from '../../shared/wire-protocol.js';
import { welcomeOf } from '../helpers/hub-fakes.js';
import { decideCalls, harness, proveExtension, type Harness } from './background-harness.js';
import { TEST_CODE, TEST_KEY, TEST_KEY_ID, bindingOf, nextSent, pairHub, proposalView, proveHub, settle, until, type FakeSocket } from './fakes.js';
import { sealKey } from '../../shared/hub-auth.js';

let h: Harness;
beforeEach(() => {
  h = harness();
});
afterEach(() => vi.restoreAllMocks());

const decides = (socket: FakeSocket) => decideCalls(socket).map((call) => call.params);
/** The id of the decide call the extension sent `index`-th on `socket` (bounded wait), to answer it by. */
async function decideId(socket: FakeSocket, index = 0): Promise<string> {
  await until(() => decideCalls(socket).length > index, 'the extension to call decide');
  return decideCalls(socket)[index]?.id ?? '';
}

/** Many rows make a welcome take many turns of the event loop to apply: room for a frame behind it to overtake it. */
function manyViews(count: number, at: number) {
  return Array.from({ length: count }, (_, i) => proposalView(`el_bulk_${i}`, at - 10_000 - i));
}

describe('the mirror handles one frame at a time, and a welcome in one transaction', () => {
  it('a request.created that arrives while a welcome is being applied stays pending', async () => {
    const c = h.controller();
    const first = await h.connect(c);
    first.drop();
    await settle();
    h.clock.advance(1000);
    await settle();
    const socket = h.sockets.at(-1)!;
    socket.open();
    const authId = await proveExtension(socket);
    // The welcome was written before the request was created, so it does not list it.
    socket.answer(authId, { welcome: welcomeOf({ pending: [proposalView('el_1', h.clock.t - 1000), ...manyViews(40, h.clock.t)] }) });
    socket.deliver({ method: 'request.created', params: { request: proposalView('el_new', h.clock.t) } });
    await settle(300);
    expect((await getRequest(h.db, 'el_new'))?.status).toBe('pending');
    expect(h.platform.notified.map((r) => r.elicitationId)).toContain('el_new');
  });

  it('a request.removed right after a welcome is never overwritten back to pending by it', async () => {
    const c = h.controller();
    const first = await h.connect(c, [proposalView('el_1', h.clock.t - 1000)]);
    first.drop();
    await settle();
    h.clock.advance(1000);
    await settle();
    const socket = h.sockets.at(-1)!;
    socket.open();
    const authId = await proveExtension(socket);
    socket.answer(authId, { welcome: welcomeOf({ pending: [...manyViews(40, h.clock.t), proposalView('el_1', h.clock.t - 1000)] }) });
    socket.deliver({ method: 'request.removed', params: { elicitationId: 'el_1', status: 'canceled' } });
    await settle(300);
    expect((await getRequest(h.db, 'el_1'))?.status).toBe('canceled');
  });

  it('a pairing\'s key is stored before the welcome is applied, and a frame after the welcome waits for both', async () => {
    await patchSettings(h.db, { pairingCode: TEST_CODE });
    const c = h.controller();
    c.start();
    await settle();
    const socket = h.sockets[0]!;
    socket.open();
    // The key (Web Crypto, then a settings write) and the welcome arrive in one answer to auth, and a notice right
    // behind it: a frame handled alongside them would land before the welcome's sweep.
    await pairHub(socket, TEST_CODE);
    socket.deliver({ method: 'request.created', params: { request: proposalView('el_new', h.clock.t) } });
    await settle(100);
    expect((await getRequest(h.db, 'el_new'))?.status).toBe('pending');
    expect(await readSettings(h.db)).toMatchObject({ pairingCode: '', hubKeys: { 17391: { keyId: TEST_KEY_ID, key: TEST_KEY } } });
  });

  it('drops frames from a socket that is no longer the current one', async () => {
    const c = h.controller();
    const old = await h.connect(c, []);
    c.connection.restart();
    await settle();
    old.deliver({ method: 'request.created', params: { request: proposalView('el_late', h.clock.t) } });
    await settle();
    expect(await getRequest(h.db, 'el_late')).toBeUndefined();
  });

  it('sends no ack: the hub ignores them', async () => {
    const socket = await h.connect(h.controller());
    socket.deliver({ method: 'request.created', params: { request: proposalView('el_2', h.clock.t) } });
    await settle();
    expect(socket.methods()).toEqual(['hello', 'auth']);
  });
});

describe('one decision per request from this browser', () => {
  it('popup and tab deciding at once: one decision is queued and sent, the other is told it was already decided here', async () => {
    const c = h.controller();
    const socket = await h.connect(c);
    const popup = c.decide({ elicitationId: 'el_1', decision: 'approved', values: { name: 'A' }, included: ['name'] });
    const tab = c.decide({ elicitationId: 'el_1', decision: 'rejected', comment: 'no' });
    const id = await decideId(socket);
    expect(decides(socket)).toEqual([{ elicitationId: 'el_1', idempotencyKey: 'key-1', decision: 'approved', values: { name: 'A' }, included: ['name'] }]);
    expect(await tab).toEqual({
      state: 'already_decided_here',
      decision: { decision: 'approved', action: 'submit', values: { name: 'A' }, included: ['name'] },
      delivery: 'queued',
    });
    socket.answer(id, { ok: true, status: 'approved' });
    expect(await popup).toEqual({ state: 'answered', ok: true, status: 'approved' });
    expect(await getRequest(h.db, 'el_1')).toMatchObject({ status: 'approved', delivery: 'delivered', outcome: { decision: 'approved', values: { name: 'A' } } });
    expect(await c.decide({ elicitationId: 'el_1', decision: 'rejected' })).toMatchObject({ state: 'already_decided_here', delivery: 'delivered' });
    expect(decides(socket)).toHaveLength(1);
    expect(await h.db.outbox.count()).toBe(0);
  });

  it('refuses a second decision while the first waits in the outbox for the hub', async () => {
    const c = h.controller();
    const socket = await h.connect(c);
    socket.drop();
    await settle();
    expect(await c.decide({ elicitationId: 'el_1', decision: 'approved', values: {}, included: [] })).toEqual({ state: 'queued' });
    expect(await c.decide({ elicitationId: 'el_1', decision: 'rejected' })).toMatchObject({ state: 'already_decided_here', delivery: 'queued', decision: { decision: 'approved' } });
    expect((await h.db.outbox.toArray()).map((e) => e.decision)).toEqual(['approved']);
  });

  it('lets the person decide again after the hub refused the values as invalid', async () => {
    const c = h.controller();
    const socket = await h.connect(c);
    const first = c.decide({ elicitationId: 'el_1', decision: 'approved', values: { name: 5 }, included: ['name'] });
    socket.answer(await decideId(socket), { ok: false, reason: 'invalid', issues: [] });
    expect(await first).toMatchObject({ state: 'answered', reason: 'invalid' });
    const second = c.decide({ elicitationId: 'el_1', decision: 'approved', values: { name: 'N' }, included: ['name'] });
    const secondId = await decideId(socket, 1);
    expect(decides(socket).map((m) => m.idempotencyKey)).toEqual(['key-1', 'key-2']);
    socket.answer(secondId, { ok: true, status: 'approved' });
    expect(await second).toEqual({ state: 'answered', ok: true, status: 'approved' });
  });

  it('does not send a decision for a request this browser already knows is withdrawn', async () => {
    const c = h.controller();
    const socket = await h.connect(c);
    socket.deliver({ method: 'request.removed', params: { elicitationId: 'el_1', status: 'canceled' } });
    await settle();
    expect(await c.decide({ elicitationId: 'el_1', decision: 'approved', values: {}, included: [] })).toEqual({ state: 'answered', ok: false, reason: 'withdrawn', status: 'canceled' });
    expect(decides(socket)).toEqual([]);
    expect(await h.db.outbox.count()).toBe(0);
    expect((await getRequest(h.db, 'el_1'))?.outcome).toBeUndefined();
  });
});

describe('oversized decisions', () => {
  it('are refused before they are queued, naming the largest field and the limit', async () => {
    const c = h.controller();
    const socket = await h.connect(c);
    const reply = await c.decide({ elicitationId: 'el_1', decision: 'approved', values: { name: 'N', notes: 'x'.repeat(MAX_FRAME_BYTES) }, included: ['name', 'notes'] });
    // The size is the decide call's whole frame, `{ id, method, params }` (counted with an 11-character id), as the hub
    // measures it; under protocol 8 it was the `{ type: "decide", … }` message, 1048724 bytes.
    expect(reply).toEqual({
      state: 'too_large',
      issues: [{ path: 'values.notes', rule: 'too_large', message: expect.stringMatching(/^values\.notes: is 1048578 bytes as JSON; a decision must fit in 1048576 bytes \(the hub's message limit\) and this one is 1048758 bytes$/) }],
    });
    expect(decides(socket)).toEqual([]);
    expect(await h.db.outbox.count()).toBe(0);
    expect((await getRequest(h.db, 'el_1'))?.delivery).toBeUndefined();
  });

  it('an oversized entry already in the outbox is dropped on replay with a refusal on its row, never sent', async () => {
    const view = proposalView('el_1', h.clock.t - 1000);
    await h.db.requests.put({ ...rowFromView(view), outcome: { decision: 'approved', action: 'submit' }, delivery: 'queued' });
    await h.db.outbox.put({
      idempotencyKey: 'old-key', elicitationId: 'el_1', decision: 'approved', queuedAt: h.clock.t - 500,
      values: { notes: 'x'.repeat(MAX_FRAME_BYTES + 10) }, included: ['notes'],
    });
    const socket = await h.connect(h.controller(), [view]);
    expect(decides(socket)).toEqual([]);
    expect(await h.db.outbox.count()).toBe(0);
    expect(await getRequest(h.db, 'el_1')).toMatchObject({
      status: 'pending', delivery: 'refused', refusal: { reason: 'too_large', issues: [{ path: 'values.notes', rule: 'too_large' }] },
    });
  });
});

describe('a decision the hub could not record (unavailable)', () => {
  // The engine refusing to record answers the call with the error `unavailable` (protocol 9), never a refusal reason.
  it.each<[string, (socket: FakeSocket, id: string) => void]>([
    ['an error unavailable', (socket, id) => socket.deliver({ id, error: { code: 'unavailable', message: 'the hub could not record the decision' } })],
  ])('answered with %s: stays in the outbox, queued, and is sent again with the same key after the next welcome', async (_how, answer) => {
    const c = h.controller();
    const socket = await h.connect(c);
    const reply = c.decide({ elicitationId: 'el_1', decision: 'approved', values: {}, included: [] });
    answer(socket, await decideId(socket));
    expect(await reply).toEqual({ state: 'queued' });
    await settle();
    expect(await h.db.outbox.count()).toBe(1);
    const row = await getRequest(h.db, 'el_1');
    expect(row).toMatchObject({ status: 'pending', delivery: 'queued' });
    expect(row?.refusal).toBeUndefined();
    socket.closeFromHub(1001, 'stepping down');
    await settle();
    const again = await h.reconnect([proposalView('el_1', h.clock.t - 1000)]);
    await decideId(again);
    expect(decides(again)).toEqual([{ elicitationId: 'el_1', idempotencyKey: 'key-1', decision: 'approved', values: {}, included: [] }]);
  });
});

describe('bounded waits and a loop-free keep-alive', () => {
  it(`closes a socket that gets no welcome within ${WELCOME_TIMEOUT_MS} ms and reconnects with backoff`, async () => {
    await h.paired();
    const c = h.controller();
    c.start();
    await settle();
    const socket = h.sockets[0]!;
    socket.open();
    await settle();
    expect(socket.methods()).toEqual(['hello']);
    h.clock.advance(WELCOME_TIMEOUT_MS - 1);
    await settle();
    expect(socket.closed).toBe(false);
    h.clock.advance(1);
    await settle();
    expect(socket.closed).toBe(true);
    expect((await readConnection(h.db))?.state).toBe('reconnecting');
    h.clock.advance(750);
    await settle();
    expect(h.sockets).toHaveLength(2);
  });

  it('a peer that mirrors every heartbeat, idle for 45 s, sees only the extension\'s own heartbeats', async () => {
    const c = h.controller();
    const socket = await h.connect(c, []);
    const start = socket.sent.length;
    let mirrored = 0;
    // What hubs of protocol 1 did: answer every heartbeat (a little later, and at most 1,000 times so a loop ends).
    socket.onSent = (message) => {
      if (message.method !== 'heartbeat' || mirrored >= 1000) return;
      mirrored++;
      setTimeout(() => socket.deliver({ method: 'heartbeat', params: message.params }), 0);
    };
    const t0 = h.clock.t;
    for (let elapsed = 1000; elapsed <= 45_000; elapsed += 1000) {
      h.clock.advance(1000);
      // The hub's own heartbeat every 20 s.
      if ((h.clock.t - t0) % HEARTBEAT_MS === 0) socket.deliver({ method: 'heartbeat', params: { t: h.clock.t } });
      await settle(5);
    }
    await settle();
    const sent = socket.sent.slice(start);
    expect(sent.map((m) => m.method)).toEqual(['heartbeat', 'heartbeat']);
    // Notices, never calls: nothing waits for an answer to them.
    expect(sent.every((m) => m.id === undefined)).toBe(true);
  });

  it('stops its heartbeat when the socket closes', async () => {
    const c = h.controller();
    const socket = await h.connect(c, []);
    socket.drop();
    await settle();
    h.clock.advance(HEARTBEAT_MS);
    await settle();
    expect(socket.sent.filter((m) => m.method === 'heartbeat')).toEqual([]);
  });
});

describe('a visible version mismatch', () => {
  it('a hub that closes with 4002 and a newer protocol: the state says so, and it keeps retrying with backoff', async () => {
    await h.paired();
    const c = h.controller();
    c.start();
    await settle();
    const socket = h.sockets[0]!;
    socket.open();
    socket.closeFromHub(4002, `hub speaks protocol ${PROTOCOL_VERSION + 1}`);
    await settle();
    expect(await readConnection(h.db)).toMatchObject({ state: 'version_mismatch', hubProtocol: PROTOCOL_VERSION + 1, extensionProtocol: PROTOCOL_VERSION });
    // The next attempt does not flip the header back to "reconnecting" while the mismatch is all it knows.
    h.clock.advance(750);
    await settle();
    expect(h.sockets).toHaveLength(2);
    expect((await readConnection(h.db))?.state).toBe('version_mismatch');
    await h.accept(h.sockets[1]!);
    expect((await readConnection(h.db))?.state).toBe('connected');
  });

  it('a welcome of another protocol is not applied: the socket is closed and the mismatch shown', async () => {
    await h.paired();
    const c = h.controller();
    c.start();
    await settle();
    const socket = h.sockets[0]!;
    socket.open();
    const authId = await proveExtension(socket, TEST_KEY);
    socket.answer(authId, { welcome: welcomeOf({ protocol: PROTOCOL_VERSION + 1, pending: [proposalView('el_1', h.clock.t)] }) });
    await settle();
    expect(socket.closed).toBe(true);
    expect(await readConnection(h.db)).toMatchObject({ state: 'version_mismatch', hubProtocol: PROTOCOL_VERSION + 1 });
    expect(await getRequest(h.db, 'el_1')).toBeUndefined();
    expect(c.connection.connected).toBe(false);
  });

  it('a hub of protocol ≤ 8 (its {type:"error"} answer to the hello) reads as an older hub', async () => {
    await h.paired();
    const c = h.controller();
    c.start();
    await settle();
    const socket = h.sockets[0]!;
    socket.open();
    // What hubs of protocols 1 to 8 answer a hello they cannot read with: a frame of their own shape.
    socket.deliver(JSON.stringify({ type: 'error', code: 'unsupported_protocol', message: 'this hub speaks protocol 8' }));
    await settle();
    expect(socket.closed).toBe(true);
    expect(await readConnection(h.db)).toMatchObject({ state: 'version_mismatch', hubProtocol: null, extensionProtocol: PROTOCOL_VERSION });
  });

  it('a plain close after a mismatch goes back to "reconnecting" (the hub is gone, not just old)', async () => {
    await h.paired();
    const c = h.controller();
    c.start();
    await settle();
    h.sockets[0]!.open();
    h.sockets[0]!.closeFromHub(4002, 'hub speaks protocol 1');
    await settle();
    h.clock.advance(750);
    await settle();
    h.sockets[1]!.drop();
    await settle();
    expect((await readConnection(h.db))?.state).toBe('reconnecting');
  });
});

describe('settings writes are patches', () => {
  /**
   * Pairs a controller with `TEST_CODE`, and runs `save` (the person's own write) at the exact moment the background
   * reads the settings to store the key and forget the code: the interleaving a read-modify-write loses.
   */
  async function pairWhile(save: () => Promise<unknown>): Promise<void> {
    await patchSettings(h.db, { pairingCode: TEST_CODE });
    const c = h.controller();
    c.start();
    await settle();
    const socket = h.sockets[0]!;
    socket.open();
    const { hubNonce, peerNonce } = await proveHub(socket, TEST_CODE);
    const authId = (await nextSent(socket, 'auth')).id;
    let saving: Promise<unknown> | null = null;
    const get = h.db.settings.get.bind(h.db.settings);
    vi.spyOn(h.db.settings, 'get').mockImplementation(((key: 'current') => {
      const read = get(key);
      // Outside whatever transaction the background holds: a page's write is its own transaction.
      saving ??= Dexie.ignoreTransaction(() => save());
      return read;
    }) as typeof h.db.settings.get);
    socket.answer(authId, { paired: { keyId: TEST_KEY_ID, sealedKey: await sealKey(TEST_KEY, TEST_CODE, bindingOf(socket).port, hubNonce, peerNonce) }, welcome: welcomeOf() });
    await until(() => saving !== null, 'the background to store the key');
    await saving;
    await settle();
  }

  it('the background stores the key and forgets the spent code without undoing a port saved at the same moment', async () => {
    await pairWhile(() => patchSettings(h.db, { port: 23456 }));
    expect(await readSettings(h.db)).toMatchObject({ port: 23456, pairingCode: '', hubKeys: { 17391: { keyId: TEST_KEY_ID, key: TEST_KEY } } });
  });

  it('keeps a new pairing code typed in while the old one was being spent', async () => {
    await pairWhile(() => patchSettings(h.db, { pairingCode: 'ffffffffffff' }));
    expect(await readSettings(h.db)).toMatchObject({ pairingCode: 'ffffffffffff', hubKeys: { 17391: { keyId: TEST_KEY_ID } } });
  });
});

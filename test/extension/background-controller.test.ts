import { beforeEach, describe, expect, it } from 'vitest';
import { BackgroundController } from '../../extension/background/background-controller.js';
import type { ElicitlyDb } from '../../extension/db/database.js';
import { getRequest } from '../../extension/db/requests-repo.js';
import { patchSettings, readConnection } from '../../extension/db/settings-repo.js';
import { PROTOCOL_VERSION } from '../../shared/wire-protocol.js';
import { decideCalls, harness, type DecideCall, type Harness, type RecordingPlatform } from './background-harness.js';
import { FakeSocket, TEST_KEY_ID, proposalView, settle, until, type ManualClock } from './fakes.js';

let db: ElicitlyDb;
let clock: ManualClock;
let platform: RecordingPlatform;
let sockets: FakeSocket[];
let controller: () => BackgroundController;
let connect: (c: BackgroundController, pending?: ReturnType<typeof proposalView>[]) => Promise<FakeSocket>;
let h: Harness;

/** The one decide call the extension sent on `socket` (bounded wait), to answer by its id. */
async function decideCall(socket: FakeSocket, index = 0): Promise<DecideCall> {
  await until(() => decideCalls(socket).length > index, 'the extension to call decide');
  const call = decideCalls(socket)[index];
  if (!call) throw new Error('no decide call');
  return call;
}

/** Whether `promise` has settled by now (after the turns of the event loop `settle` gives it). */
async function settledYet(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true), () => (done = true));
  await settle();
  return done;
}

beforeEach(() => {
  h = harness();
  ({ db, clock, platform, sockets } = h);
  controller = () => h.controller();
  connect = (c, pending) => h.connect(c, pending);
});

describe('BackgroundController', () => {
  it('connects to the port from settings with the subprotocol, proves its key, and mirrors the welcome', async () => {
    await patchSettings(db, { port: 23456 });
    const socket = await connect(controller());
    expect(socket.url).toBe('ws://127.0.0.1:23456');
    expect(socket.protocols).toEqual(['elicitly.v1']);
    expect(socket.sent).toEqual([
      { id: 'hello', method: 'hello', params: { protocol: PROTOCOL_VERSION, role: 'extension', client: { name: 'test', version: '1' }, nonce: expect.stringMatching(/^[0-9a-f]{64}$/), keyId: TEST_KEY_ID } },
      { id: 'auth', method: 'auth', params: { proof: expect.stringMatching(/^[0-9a-f]{64}$/) } },
    ]);
    expect((await getRequest(db, 'el_1'))?.status).toBe('pending');
    expect(platform.badge.at(-1)).toBe(1);
    expect(platform.notified.map((r) => r.elicitationId)).toEqual(['el_1']);
    expect((await readConnection(db))?.state).toBe('connected');
  });

  it('notifies once per new request and respects the notification setting', async () => {
    const socket = await connect(controller(), []);
    socket.deliver({ method: 'request.created', params: { request: proposalView('el_2', clock.t) } });
    await settle();
    socket.deliver({ method: 'request.created', params: { request: proposalView('el_2', clock.t) } });
    await settle();
    expect(platform.notified.map((r) => r.elicitationId)).toEqual(['el_2']);
    await patchSettings(db, { notifications: false });
    socket.deliver({ method: 'request.created', params: { request: proposalView('el_3', clock.t) } });
    await settle();
    expect(platform.notified).toHaveLength(1);
    expect(platform.badge.at(-1)).toBe(2);
  });

  it('removes decided, withdrawn and expired requests from the inbox and the badge', async () => {
    const socket = await connect(controller());
    socket.deliver({ method: 'request.removed', params: { elicitationId: 'el_1', status: 'canceled' } });
    await settle();
    expect((await getRequest(db, 'el_1'))?.status).toBe('canceled');
    expect(platform.badge.at(-1)).toBe(0);
    expect(platform.cleared).toContain('el_1');
  });

  it('sends a decision with an idempotency key and reports the hub answer', async () => {
    const c = controller();
    const socket = await connect(c);
    const reply = c.decide({ elicitationId: 'el_1', decision: 'approved', values: { name: 'N' }, included: ['name'] });
    const sent = await decideCall(socket);
    expect(socket.sent.find((m) => m.method === 'decide')).toEqual({
      id: sent.id, method: 'decide', params: { elicitationId: 'el_1', idempotencyKey: 'key-1', decision: 'approved', values: { name: 'N' }, included: ['name'] },
    });
    socket.answer(sent.id, { ok: true, status: 'approved' });
    expect(await reply).toEqual({ state: 'answered', ok: true, status: 'approved' });
    const row = await getRequest(db, 'el_1');
    expect(row).toMatchObject({ status: 'approved', delivery: 'delivered', outcome: { decision: 'approved', action: 'submit', values: { name: 'N' } } });
    expect(await db.outbox.count()).toBe(0);
  });

  it('keeps the request pending with the issues when the hub refuses the values', async () => {
    const c = controller();
    const socket = await connect(c);
    const reply = c.decide({ elicitationId: 'el_1', decision: 'approved', values: { name: 5 }, included: ['name'] });
    const issues = [{ path: 'values.name', rule: 'invalid_type', message: 'values.name: must be a string' }];
    socket.answer((await decideCall(socket)).id, { ok: false, reason: 'invalid', issues });
    expect(await reply).toEqual({ state: 'answered', ok: false, reason: 'invalid', issues });
    // The attempt stays, so a review reopened later starts from what the person typed.
    expect(await getRequest(db, 'el_1')).toMatchObject({
      status: 'pending', delivery: 'refused', refusal: { reason: 'invalid', issues }, outcome: { values: { name: 5 }, included: ['name'] },
    });
  });

  it('records what the hub says when the request was already decided elsewhere', async () => {
    const c = controller();
    const socket = await connect(c);
    const reply = c.decide({ elicitationId: 'el_1', decision: 'rejected' });
    socket.answer((await decideCall(socket)).id, { ok: false, reason: 'expired', status: 'expired' });
    expect(await reply).toMatchObject({ state: 'answered', ok: false, reason: 'expired' });
    expect(await getRequest(db, 'el_1')).toMatchObject({ status: 'expired', delivery: 'refused', refusal: { reason: 'expired' } });
  });

  it('queues a decision while the hub is down and delivers it once, on the next welcome', async () => {
    const c = controller();
    const socket = await connect(c);
    socket.drop();
    await settle();
    expect((await readConnection(db))?.state).toBe('reconnecting');
    expect(await c.decide({ elicitationId: 'el_1', decision: 'approved', values: {}, included: [] })).toEqual({ state: 'queued' });
    expect((await getRequest(db, 'el_1'))?.delivery).toBe('queued');
    clock.advance(1000);
    await settle();
    const again = sockets.at(-1)!;
    expect(again).not.toBe(socket);
    await h.accept(again, [proposalView('el_1', clock.t - 5000)]);
    const resent = await decideCall(again);
    expect(decideCalls(again)).toEqual([{ id: resent.id, params: { elicitationId: 'el_1', idempotencyKey: 'key-1', decision: 'approved', values: {}, included: [] } }]);
    again.answer(resent.id, { ok: true, status: 'approved' });
    await settle();
    expect(await db.outbox.count()).toBe(0);
    expect((await getRequest(db, 'el_1'))?.delivery).toBe('delivered');
  });

  it('the shown hash goes to the hub with the decision, waits in the outbox with it, and is no part of the outcome the row keeps', async () => {
    const shownHash = 'ab'.repeat(32);
    const c = controller();
    const socket = await connect(c);
    socket.drop();
    await settle();
    expect(await c.decide({ elicitationId: 'el_1', decision: 'approved', values: {}, included: [], shownHash })).toEqual({ state: 'queued' });
    expect(await db.outbox.toArray()).toEqual([{ idempotencyKey: 'key-1', elicitationId: 'el_1', decision: 'approved', values: {}, included: [], shownHash, queuedAt: expect.any(Number) }]);
    // The row keeps what the person decided; the hash is the hub's check, not part of it.
    expect((await getRequest(db, 'el_1'))?.outcome).toEqual({ decision: 'approved', action: 'submit', values: {}, included: [] });
    clock.advance(1000);
    await settle();
    const again = sockets.at(-1)!;
    await h.accept(again, [proposalView('el_1', clock.t - 5000)]);
    const resent = await decideCall(again);
    expect(decideCalls(again)).toEqual([{ id: resent.id, params: { elicitationId: 'el_1', idempotencyKey: 'key-1', decision: 'approved', values: {}, included: [], shownHash } }]);
    again.answer(resent.id, { ok: true, status: 'approved' });
    await settle();
    expect((await getRequest(db, 'el_1'))?.delivery).toBe('delivered');
  });

  it('a decision the hub refuses as shown_mismatch leaves the request pending, refused for that reason', async () => {
    const c = controller();
    const socket = await connect(c);
    const reply = c.decide({ elicitationId: 'el_1', decision: 'rejected', shownHash: 'cd'.repeat(32) });
    const call = await decideCall(socket);
    expect(call.params).toEqual({ elicitationId: 'el_1', idempotencyKey: 'key-1', decision: 'rejected', shownHash: 'cd'.repeat(32) });
    socket.answer(call.id, { ok: false, reason: 'shown_mismatch', status: 'pending', issues: [{ path: 'shownHash', rule: 'shown_mismatch', message: 'what was shown is not the stored request' }] });
    expect(await reply).toMatchObject({ state: 'answered', ok: false, reason: 'shown_mismatch', status: 'pending' });
    expect(await getRequest(db, 'el_1')).toMatchObject({ status: 'pending', delivery: 'refused', refusal: { reason: 'shown_mismatch' } });
    expect(await db.outbox.count()).toBe(0);
  });

  it('tells the page the decision is queued when the hub does not answer in time, and resends it later', async () => {
    const c = controller();
    const socket = await connect(c);
    const reply = c.decide({ elicitationId: 'el_1', decision: 'rejected' });
    await decideCall(socket);
    clock.advance(5000);
    expect(await reply).toEqual({ state: 'queued' });
    expect(await db.outbox.count()).toBe(1);
    socket.drop();
    await settle();
    const again = await h.reconnect([proposalView('el_1', clock.t - 1000)]);
    expect((await decideCall(again)).params).toEqual({ elicitationId: 'el_1', idempotencyKey: 'key-1', decision: 'rejected' });
  });

  it('a decide answered late (after the page\'s 5 s, within the call\'s 30 s) still settles the outbox and the row', async () => {
    const c = controller();
    const socket = await connect(c);
    const reply = c.decide({ elicitationId: 'el_1', decision: 'approved', values: { name: 'N' }, included: ['name'] });
    const call = await decideCall(socket);
    clock.advance(5000);
    // The page stops waiting; the call does not.
    expect(await reply).toEqual({ state: 'queued' });
    expect((await getRequest(db, 'el_1'))?.delivery).toBe('queued');
    clock.advance(24_000);
    await settle();
    socket.answer(call.id, { ok: true, status: 'approved' });
    await settle();
    expect(await db.outbox.count()).toBe(0);
    expect(await getRequest(db, 'el_1')).toMatchObject({ status: 'approved', delivery: 'delivered' });
    expect(platform.cleared).toContain('el_1');
    expect(platform.badge.at(-1)).toBe(0);
  });

  it('a decide the hub never answers gives up after 30 s, ignores the answer that comes after, and is sent again on the next welcome', async () => {
    const logged: string[] = [];
    const c = h.controller({ log: (m) => logged.push(m) });
    const socket = await connect(c);
    const reply = c.decide({ elicitationId: 'el_1', decision: 'rejected' });
    const call = await decideCall(socket);
    clock.advance(5000);
    expect(await reply).toEqual({ state: 'queued' });
    clock.advance(25_000);
    await settle();
    // Too late: no call waits for this id any more, so it settles nothing.
    socket.answer(call.id, { ok: true, status: 'rejected' });
    await settle();
    expect(logged).toContainEqual(expect.stringMatching(/^ignored an answer to no call of ours/));
    expect(await db.outbox.count()).toBe(1);
    expect(await getRequest(db, 'el_1')).toMatchObject({ status: 'pending', delivery: 'queued' });
    socket.drop();
    await settle();
    const again = await h.reconnect([proposalView('el_1', clock.t - 1000)]);
    const resent = await decideCall(again);
    expect(resent.params.idempotencyKey).toBe('key-1');
    again.answer(resent.id, { ok: true, status: 'rejected' });
    await settle();
    expect(await getRequest(db, 'el_1')).toMatchObject({ status: 'rejected', delivery: 'delivered' });
  });

  it('the socket closing while a decide call waits answers the page at once (queued), not after its 5 s', async () => {
    const c = controller();
    const socket = await connect(c);
    const reply = c.decide({ elicitationId: 'el_1', decision: 'approved', values: {}, included: [] });
    await decideCall(socket);
    expect(await settledYet(reply)).toBe(false);
    socket.drop();
    // No time passes: the close itself answers the call.
    expect(await settledYet(reply)).toBe(true);
    expect(await reply).toEqual({ state: 'queued' });
    expect(await db.outbox.count()).toBe(1);
    expect((await getRequest(db, 'el_1'))?.delivery).toBe('queued');
  });

  it('a hub answer carrying an id no call waits for is ignored (and logged): the waiting decision is untouched', async () => {
    const logged: string[] = [];
    const c = h.controller({ log: (m) => logged.push(m) });
    const socket = await connect(c);
    const reply = c.decide({ elicitationId: 'el_1', decision: 'approved', values: {}, included: [] });
    const call = await decideCall(socket);
    socket.deliver({ id: `${call.id}-other`, result: { ok: true, status: 'approved' } });
    socket.deliver({ id: null, error: { code: 'invalid', message: 'not JSON' } });
    expect(await settledYet(reply)).toBe(false);
    expect(logged.filter((m) => m.startsWith('ignored an answer to no call of ours'))).toHaveLength(2);
    expect(await db.outbox.count()).toBe(1);
    expect((await getRequest(db, 'el_1'))?.status).toBe('pending');
    expect(c.connection.connected).toBe(true);
    socket.answer(call.id, { ok: false, reason: 'already_decided', status: 'rejected' });
    expect(await reply).toEqual({ state: 'answered', ok: false, reason: 'already_decided', status: 'rejected' });
  });

  it('a decide the hub refuses as malformed ({id, error: invalid, issues}) is a refusal naming its fields, the request kept pending', async () => {
    const c = controller();
    const socket = await connect(c);
    const reply = c.decide({ elicitationId: 'el_1', decision: 'approved', values: { name: 'N' }, included: ['name'] });
    const issues = [{ path: 'values.name', rule: 'too_big', message: 'values.name: too long' }];
    socket.deliver({ id: (await decideCall(socket)).id, error: { code: 'invalid', message: 'values.name: too long', issues } });
    expect(await reply).toEqual({ state: 'answered', ok: false, reason: 'invalid', issues });
    expect(await db.outbox.count()).toBe(0);
    expect(await getRequest(db, 'el_1')).toMatchObject({ status: 'pending', delivery: 'refused', refusal: { reason: 'invalid', issues } });
  });

  it('reconnects with a jittered backoff that doubles up to 30 s', async () => {
    await h.paired();
    const c = controller();
    c.start();
    await settle();
    const delays: number[] = [];
    for (let i = 0; i < 7; i++) {
      sockets.at(-1)!.drop();
      await settle();
      delays.push(clock.pendingDelays()[0]!);
      clock.advance(delays.at(-1)!);
      await settle();
    }
    // random() is 0.5: three quarters of each ceiling 1, 2, 4, 8, 16, 30, 30 s.
    expect(delays).toEqual([750, 1500, 3000, 6000, 12000, 22500, 22500]);
    expect(sockets).toHaveLength(8);
  });

  it('the alarm tick connects at once when the socket is gone, and does not open a second one otherwise', async () => {
    const c = controller();
    await connect(c);
    await c.tick();
    expect(sockets).toHaveLength(1);
    sockets[0]!.drop();
    await settle();
    await c.tick();
    await settle();
    expect(sockets).toHaveLength(2);
  });

  it('answers malformed page messages and hub frames without throwing', async () => {
    const c = controller();
    const socket = await connect(c);
    expect(await c.handleUiMessage({ type: 'decide', elicitationId: 5 })).toMatchObject({ state: 'error', message: expect.stringContaining('elicitationId') });
    expect(await c.handleUiMessage('nonsense')).toMatchObject({ state: 'error' });
    socket.deliver('{not json');
    socket.deliver({ method: 'request.created', params: { request: { elicitationId: 'x' } } });
    await settle();
    expect(await db.requests.count()).toBe(1);
    expect(await c.handleUiMessage({ type: 'decide', elicitationId: 'missing', decision: 'approved' })).toEqual({ state: 'answered', ok: false, reason: 'not_found' });
  });

  it('the tick retires expired requests from the inbox even with no hub', async () => {
    const c = controller();
    await connect(c);
    clock.advance(3_600_000);
    await c.tick();
    expect((await getRequest(db, 'el_1'))?.status).toBe('expired');
    expect(platform.badge.at(-1)).toBe(0);
  });

  it('a badge that cannot be set is logged, not thrown at the change, and once until it works again', async () => {
    const logged: string[] = [];
    let broken = true;
    const c = new BackgroundController({
      db,
      platform: {
        setBadge: (n) => (broken ? Promise.reject(new Error('no badge API')) : platform.setBadge(n)),
        notify: (row) => platform.notify(row),
        clearNotification: (id) => platform.clearNotification(id),
        newKey: () => platform.newKey(),
      },
      socketFactory: (url, protocols) => new FakeSocket(url, protocols),
      clock,
      client: { name: 'test', version: '1' },
      log: (m) => logged.push(m),
    });
    const badgeLines = () => logged.filter((m) => m.startsWith('the toolbar badge'));
    await c.tick();
    await c.tick();
    expect(badgeLines()).toEqual(['the toolbar badge cannot be set: no badge API']);
    broken = false;
    await c.tick();
    expect(platform.badge.at(-1)).toBe(0);
    broken = true;
    await c.tick();
    expect(badgeLines()).toHaveLength(2);
  });
});

import { beforeEach, describe, expect, it } from 'vitest';
import { BackgroundController } from '../../extension/background/background-controller.js';
import type { ElicitlyDb } from '../../extension/db/database.js';
import { getRequest } from '../../extension/db/requests-repo.js';
import { patchSettings, readConnection } from '../../extension/db/settings-repo.js';
import { PROTOCOL_VERSION } from '../../shared/wire-protocol.js';
import { harness, type Harness, type RecordingPlatform } from './background-harness.js';
import { FakeSocket, TEST_KEY_ID, proposalView, settle, type ManualClock } from './fakes.js';

let db: ElicitlyDb;
let clock: ManualClock;
let platform: RecordingPlatform;
let sockets: FakeSocket[];
let controller: () => BackgroundController;
let connect: (c: BackgroundController, pending?: ReturnType<typeof proposalView>[]) => Promise<FakeSocket>;
let h: Harness;

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
      { type: 'hello', protocol: PROTOCOL_VERSION, role: 'extension', client: { name: 'test', version: '1' }, nonce: expect.stringMatching(/^[0-9a-f]{64}$/), keyId: TEST_KEY_ID },
      { type: 'auth', proof: expect.stringMatching(/^[0-9a-f]{64}$/) },
    ]);
    expect((await getRequest(db, 'el_1'))?.status).toBe('pending');
    expect(platform.badge.at(-1)).toBe(1);
    expect(platform.notified.map((r) => r.elicitationId)).toEqual(['el_1']);
    expect((await readConnection(db))?.state).toBe('connected');
  });

  it('notifies once per new request and respects the notification setting', async () => {
    const socket = await connect(controller(), []);
    socket.deliver({ type: 'request.created', request: proposalView('el_2', clock.t) });
    await settle();
    socket.deliver({ type: 'request.created', request: proposalView('el_2', clock.t) });
    await settle();
    expect(platform.notified.map((r) => r.elicitationId)).toEqual(['el_2']);
    await patchSettings(db, { notifications: false });
    socket.deliver({ type: 'request.created', request: proposalView('el_3', clock.t) });
    await settle();
    expect(platform.notified).toHaveLength(1);
    expect(platform.badge.at(-1)).toBe(2);
  });

  it('removes decided, withdrawn and expired requests from the inbox and the badge', async () => {
    const socket = await connect(controller());
    socket.deliver({ type: 'request.removed', elicitationId: 'el_1', status: 'canceled' });
    await settle();
    expect((await getRequest(db, 'el_1'))?.status).toBe('canceled');
    expect(platform.badge.at(-1)).toBe(0);
    expect(platform.cleared).toContain('el_1');
  });

  it('sends a decision with an idempotency key and reports the hub answer', async () => {
    const c = controller();
    const socket = await connect(c);
    const reply = c.decide({ elicitationId: 'el_1', decision: 'approved', values: { name: 'N' }, included: ['name'] });
    await settle();
    const sent = socket.sent.find((m) => m.type === 'decide');
    expect(sent).toEqual({ type: 'decide', elicitationId: 'el_1', idempotencyKey: 'key-1', decision: 'approved', values: { name: 'N' }, included: ['name'] });
    socket.deliver({ type: 'decision.result', elicitationId: 'el_1', idempotencyKey: 'key-1', ok: true, status: 'approved' });
    expect(await reply).toEqual({ state: 'answered', ok: true, status: 'approved' });
    const row = await getRequest(db, 'el_1');
    expect(row).toMatchObject({ status: 'approved', delivery: 'delivered', outcome: { decision: 'approved', action: 'submit', values: { name: 'N' } } });
    expect(await db.outbox.count()).toBe(0);
  });

  it('keeps the request pending with the issues when the hub refuses the values', async () => {
    const c = controller();
    const socket = await connect(c);
    const reply = c.decide({ elicitationId: 'el_1', decision: 'approved', values: { name: 5 }, included: ['name'] });
    await settle();
    const issues = [{ path: 'values.name', rule: 'invalid_type', message: 'values.name: must be a string' }];
    socket.deliver({ type: 'decision.result', elicitationId: 'el_1', idempotencyKey: 'key-1', ok: false, reason: 'invalid', issues });
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
    await settle();
    socket.deliver({ type: 'decision.result', elicitationId: 'el_1', idempotencyKey: 'key-1', ok: false, reason: 'expired', status: 'expired' });
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
    const decides = again.sent.filter((m) => m.type === 'decide');
    expect(decides).toEqual([{ type: 'decide', elicitationId: 'el_1', idempotencyKey: 'key-1', decision: 'approved', values: {}, included: [] }]);
    again.deliver({ type: 'decision.result', elicitationId: 'el_1', idempotencyKey: 'key-1', ok: true, status: 'approved' });
    await settle();
    expect(await db.outbox.count()).toBe(0);
    expect((await getRequest(db, 'el_1'))?.delivery).toBe('delivered');
  });

  it('tells the page the decision is queued when the hub does not answer in time, and resends it later', async () => {
    const c = controller();
    await connect(c);
    const reply = c.decide({ elicitationId: 'el_1', decision: 'rejected' });
    await settle();
    clock.advance(5000);
    expect(await reply).toEqual({ state: 'queued' });
    expect(await db.outbox.count()).toBe(1);
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
    socket.deliver({ type: 'request.created', request: { elicitationId: 'x' } } as never);
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

// The hub's dispatch in process: the real HubServer and engine on a temp state dir, raw peers on real sockets.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ApprovalEngine } from '../../server/approvals/approval-engine.js';
import { HubServer } from '../../server/hub/hub-server.js';
import type { CreateParams } from '../../shared/peer-calls.js';
import { isAnswer, type HubFrame } from '../../shared/wire-protocol.js';
import { StateDir } from '../../server/state-dir.js';
import { ScriptedExtension, freePort, pairedKey } from '../helpers/scripted-extension.js';
import { EXTENSION_ORIGIN } from '../../shared/extension-id.js';
import { until } from '../helpers/poll.js';
import { checkApprovalInput } from '../../shared/approval-input.js';

const HEARTBEAT_MS = 50;
const dir = mkdtempSync(join(tmpdir(), 'elicitly-hub-'));
const port = freePort();
const state = new StateDir(dir);
let hub: HubServer;
let engine: ApprovalEngine;

beforeAll(async () => {
  const bound = await HubServer.listen({ port, state, heartbeatMs: HEARTBEAT_MS });
  if (!bound) throw new Error(`port ${port} is taken`);
  hub = bound;
  engine = await ApprovalEngine.open({ dir, retentionMs: 86_400_000 });
  hub.attach(engine);
});
afterAll(async () => {
  hub.stopAccepting();
  await engine.close();
  await hub.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A relay peer that proves the install key, then sends raw frames as a buggy or hostile relay would. */
async function rawRelay(): Promise<ScriptedExtension> {
  return ScriptedExtension.connect(port, { role: 'relay', key: { key: state.relayKey() } });
}

describe('hub dispatch: every answer carries the id it answers', () => {
  it('a call with params that fail the method schema is answered with its id and the field', async () => {
    const relay = await rawRelay();
    relay.send({ id: 'c1', method: 'await', params: { id: 'el_x', waitMs: -5 } });
    // Protocol 9: the field is named by the params' own path (was `params.waitMs`), in the message and in `issues`.
    expect(await relay.answer('c1')).toEqual({
      id: 'c1',
      error: { code: 'invalid', message: expect.stringMatching(/^waitMs: /), issues: [expect.objectContaining({ path: 'waitMs' })] },
    });
    relay.close();
  });

  it('a call of a method the hub does not know is answered with its id, not a bare error', async () => {
    const relay = await rawRelay();
    relay.send({ id: 'c2', method: 'reviewer', params: {} });
    expect(await relay.answer('c2')).toEqual({ id: 'c2', error: { code: 'unknown_method', message: expect.stringContaining('reviewer') } });
    relay.close();
  });

  it('a valid call is run and answered; its result has the method’s shape', async () => {
    const relay = await rawRelay();
    relay.send({ id: 'c3', method: 'status', params: { id: 'el_missing' } });
    expect(await relay.answer('c3')).toMatchObject({ id: 'c3', error: { code: 'not_found' } });
    const info = await relay.call('info', {});
    expect(info).toEqual({ id: expect.any(String), result: { pid: process.pid, extensionsConnected: expect.any(Number), lastSeenAt: null, pending: expect.any(Number) } });
    relay.close();
  });
});

describe('a loop-free keep-alive', () => {
  it('a peer that answers every heartbeat it receives sees only the hub’s own timer, never a storm', async () => {
    const mirror = await ScriptedExtension.connect(port, { key: pairedKey(dir) });
    // A heartbeat that came during the handshake, before there was anyone to echo it, is not part of the count (on a
    // loaded machine the handshake can span a tick: the clean-clone CI on Node 22 once counted one too many).
    mirror.notices('heartbeat');
    let mirrored = 0;
    mirror.socket.on('message', (data) => {
      const message = JSON.parse(data.toString()) as HubFrame;
      if (!('method' in message) || message.method !== 'heartbeat') return;
      mirrored += 1;
      // Echoed as a notice, as a peer answering it would: the hub answers no notice.
      mirror.send({ method: 'heartbeat', params: message.params });
    });
    // The window is measured in the hub's own ticks, as a peer that never answers hears them: a storm would send
    // hundreds within one. It opens once the clock is connected (its handshake may take several ticks on a busy machine).
    const clock = await ScriptedExtension.connect(port, { key: pairedKey(dir) });
    const before = mirror.notices('heartbeat').length;
    const ticks = 2;
    for (let i = 0; i < ticks; i++) await clock.notice('heartbeat', () => true, 2000);
    // Answered on the mirror's socket after its echoes: the hub has read them, and sent whatever it answered to them.
    expect(await mirror.call('decide', { elicitationId: 'el_nobody', idempotencyKey: 'k-after-echoes', decision: 'rejected' })).toMatchObject({ result: { ok: false, reason: 'not_found' } });
    const heartbeats = mirror.notices('heartbeat').length;
    // Every heartbeat the mirror heard it echoed, and it heard nothing else from the hub in answer to them.
    expect(before + heartbeats).toBe(mirrored);
    expect(heartbeats).toBeGreaterThanOrEqual(1);
    // The hub's timer ticks for both sockets at once: the mirror hears what the clock heard in the window (the ticks it
    // waited for, and any since, while the decision was answered), and at most one more on each edge of it.
    const clockHeard = ticks + clock.notices('heartbeat').length;
    expect(heartbeats).toBeLessThanOrEqual(clockHeard + 2);
    // Nothing answered any echo: no answer at all is left (the decide's own was taken), not even an `id: null` error.
    expect(mirror.received.filter(isAnswer)).toEqual([]);
    clock.close();
    mirror.close();
    // Gone from the hub before the next test counts who is connected.
    await until('the hub to see both sockets closed', () => (hub.extensionsConnected() === 0 ? true : undefined), 5000);
  });
});

describe('a create touches no state file', () => {
  /** What a relay's create call carries for `id`. */
  function createParams(id: string): CreateParams {
    const checked = checkApprovalInput({ message: id, context: { id } });
    if (!checked.ok) throw new Error('fixture invalid');
    return { id, request: checked.request, renderedTemplate: null, timeoutMs: 60_000, requester: { client: 'test', pid: 1 } };
  }

  it('the paired count a create tells of is kept by the hub, not read per create; it follows pairings made elsewhere', async () => {
    const relay = await rawRelay();
    const other = new StateDir(dir);
    let probes = 0;
    /** Whether a create now says to pair (no extension or device paired, as the hub counts them). */
    const saysToPair = async (): Promise<boolean> => {
      const answer = await relay.call('create', createParams(`el_probe${++probes}`));
      if (!answer.result) throw new Error(`create failed: ${JSON.stringify(answer)}`);
      return 'next' in answer.result;
    };
    try {
      if (other.pairedExtensions().length === 0) other.addPairedExtension(EXTENSION_ORIGIN);
      await until('the hub to count the pairing', async () => ((await saysToPair()) ? undefined : true));
      // Every read of the state dir the hub could make for a create; the handshake's own reads are behind us.
      const reads = (['pairedExtensions', 'pairedDevices', 'relayKeys', 'relayKey', 'pairing', 'remote'] as const).map((method) => vi.spyOn(state, method));
      try {
        const created = await relay.call('create', createParams('el_nofile'));
        expect(created).toMatchObject({ result: { elicitationId: 'el_nofile', reviewer: { connected: false }, status: 'pending' } });
        expect(created.result !== undefined && 'next' in created.result).toBe(false);
        for (const spy of reads) expect(spy).not.toHaveBeenCalled();
      } finally {
        for (const spy of reads) spy.mockRestore();
      }
      // Another process forgets every pairing: the watcher tells the hub, and a create says to pair.
      other.removePairedExtensions(EXTENSION_ORIGIN);
      for (const device of other.pairedDevices()) other.removePairedDevice(device.keyId);
      await until('the hub to count no pairing', async () => ((await saysToPair()) ? true : undefined));
      // With nobody paired, a create looks at the key files (a stat) but reads them only when they changed.
      const keyReads = (['pairedExtensions', 'pairedDevices'] as const).map((method) => vi.spyOn(state, method));
      try {
        for (let i = 0; i < 3; i++) expect(await saysToPair()).toBe(true);
        for (const spy of keyReads) expect(spy).not.toHaveBeenCalled();
      } finally {
        for (const spy of keyReads) spy.mockRestore();
      }
      // A pairing made in a terminal counts at once, watcher or not: "nobody is paired" is checked against the files.
      other.addPairedExtension(EXTENSION_ORIGIN);
      expect(await saysToPair()).toBe(false);
    } finally {
      relay.close();
    }
  });
});

describe('calls over one socket: abort, ids, the app\'s decisions, requests bound to their connection', () => {
  function approval(id: string, fields: Partial<CreateParams> = {}): CreateParams {
    const checked = checkApprovalInput({ message: id, context: { id } });
    if (!checked.ok) throw new Error('fixture invalid');
    return { id, request: checked.request, renderedTemplate: null, timeoutMs: 60_000, requester: { client: 'test', pid: 1 }, ...fields };
  }

  it('an abort notice (was call.abort) answers the waiting call at once, with what it has', async () => {
    const relay = await rawRelay();
    try {
      expect(await relay.call('create', approval('el_abort'))).toMatchObject({ result: { status: 'pending' } });
      const began = Date.now();
      const id = relay.request('await', { id: 'el_abort', waitMs: 60_000 });
      // The await is parked once a later call on the same socket is answered: the hub reads frames in order.
      expect(await relay.call('status', { id: 'el_abort' })).toMatchObject({ result: { status: 'pending' } });
      relay.send({ method: 'abort', params: { id } });
      expect(await relay.answer(id, 2000)).toEqual({ id, result: { status: 'pending' } });
      expect(Date.now() - began).toBeLessThan(2000);
      // An abort of no running call is a notice like any other: nothing answers it.
      relay.send({ method: 'abort', params: { id: 'nothing-runs-under-this-id' } });
      expect(await relay.call('cancel', { id: 'el_abort' })).toMatchObject({ result: { status: 'canceled' } });
      expect(relay.received.filter(isAnswer)).toEqual([]);
    } finally {
      relay.close();
    }
  });

  it('a call with the id of one still running is refused with that id, and the running one is still answered once', async () => {
    const relay = await rawRelay();
    try {
      await relay.call('create', approval('el_twice'));
      relay.request('await', { id: 'el_twice', waitMs: 60_000 }, 'w1');
      relay.request('status', { id: 'el_twice' }, 'w1');
      expect(await relay.answer('w1')).toEqual({ id: 'w1', error: { code: 'invalid', message: expect.stringContaining('still running') } });
      relay.send({ method: 'abort', params: { id: 'w1' } });
      expect(await relay.answer('w1')).toEqual({ id: 'w1', result: { status: 'pending' } });
      await relay.call('cancel', { id: 'el_twice' });
      expect(relay.received.filter(isAnswer)).toEqual([]);
    } finally {
      relay.close();
    }
  });

  it('a local relay decides as the app (was appDecide): recorded decidedVia app, and refused not_in_app where only the extension may decide', async () => {
    const relay = await rawRelay();
    const ext = await ScriptedExtension.connect(port, { key: pairedKey(dir) });
    try {
      await relay.call('create', approval('el_app'));
      expect(await relay.call('decide', { elicitationId: 'el_app', idempotencyKey: 'k-app', decision: 'approved' })).toEqual({ id: expect.any(String), result: { ok: true, status: 'approved' } });
      expect(await ext.notice('request.removed', (p) => p.elicitationId === 'el_app')).toEqual({ elicitationId: 'el_app', status: 'approved', decidedVia: 'app' });
      expect(await relay.call('view', { id: 'el_app' })).toMatchObject({ result: { status: 'approved', outcome: { decidedVia: 'app' } } });

      await relay.call('create', approval('el_extonly', { surfaces: ['extension'] }));
      expect(await relay.call('decide', { elicitationId: 'el_extonly', idempotencyKey: 'k-app2', decision: 'approved' })).toMatchObject({ error: { code: 'not_in_app' } });
      expect(await relay.call('status', { id: 'el_extonly' })).toMatchObject({ result: { status: 'pending' } });
      expect(await ext.call('decide', { elicitationId: 'el_extonly', idempotencyKey: 'k-ext', decision: 'rejected' })).toMatchObject({ result: { ok: true, status: 'rejected' } });
    } finally {
      ext.close();
      relay.close();
    }
  });

  it('a request filed `bound` is withdrawn when the connection that filed it closes; a plain one, or one decided meanwhile, is kept', async () => {
    const hook = await rawRelay();
    const observer = await rawRelay();
    const ext = await ScriptedExtension.connect(port, { key: pairedKey(dir) });
    try {
      expect(await hook.call('create', approval('el_bound', { bound: true }))).toMatchObject({ result: { status: 'pending' } });
      expect(await hook.call('create', approval('el_bound_decided', { bound: true }))).toMatchObject({ result: { status: 'pending' } });
      expect(await hook.call('create', approval('el_unbound'))).toMatchObject({ result: { status: 'pending' } });
      expect(await ext.call('decide', { elicitationId: 'el_bound_decided', idempotencyKey: 'k-b', decision: 'approved' })).toMatchObject({ result: { ok: true } });
      hook.close();
      expect(await ext.notice('request.removed', (p) => p.elicitationId === 'el_bound')).toEqual({ elicitationId: 'el_bound', status: 'canceled' });
      expect(await observer.call('status', { id: 'el_bound' })).toMatchObject({ result: { status: 'canceled' } });
      expect(await observer.call('status', { id: 'el_bound_decided' })).toMatchObject({ result: { status: 'approved' } });
      expect(await observer.call('status', { id: 'el_unbound' })).toMatchObject({ result: { status: 'pending' } });
      await observer.call('cancel', { id: 'el_unbound' });
    } finally {
      ext.close();
      observer.close();
    }
  });
});

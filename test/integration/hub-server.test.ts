// The hub's dispatch in process: the real HubServer and engine on a temp state dir, raw peers on real sockets.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ApprovalEngine } from '../../server/approvals/approval-engine.js';
import { HubServer } from '../../server/hub/hub-server.js';
import type { HubMessage } from '../../shared/wire-protocol.js';
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
  it('a call with params that fail the method schema is answered with its callId and the field', async () => {
    const relay = await rawRelay();
    relay.send({ type: 'call', callId: 'c1', method: 'await', params: { id: 'el_x', waitMs: -5 } });
    expect(await relay.next((m) => m.type === 'call.result')).toMatchObject({
      callId: 'c1',
      ok: false,
      error: { code: 'invalid', message: expect.stringMatching(/^params\.waitMs: /) },
    });
    relay.close();
  });

  it('a call of a method the hub does not know is answered with its callId, not a bare error', async () => {
    const relay = await rawRelay();
    relay.send({ type: 'call', callId: 'c2', method: 'reviewer', params: {} });
    expect(await relay.next((m) => m.type === 'call.result')).toMatchObject({ callId: 'c2', ok: false, error: { code: 'invalid', message: expect.stringContaining('method') } });
    relay.close();
  });

  it('a valid call is run and answered; its result has the method’s shape', async () => {
    const relay = await rawRelay();
    relay.send({ type: 'call', callId: 'c3', method: 'status', params: { id: 'el_missing' } });
    expect(await relay.next((m) => m.type === 'call.result')).toMatchObject({ callId: 'c3', ok: false, error: { code: 'not_found' } });
    relay.close();
  });
});

describe('a loop-free keep-alive', () => {
  it('a peer that answers every heartbeat it receives sees only the hub’s own timer, never a storm', async () => {
    const mirror = await ScriptedExtension.connect(port, { key: pairedKey(dir) });
    let mirrored = 0;
    mirror.socket.on('message', (data) => {
      const message = JSON.parse(data.toString()) as HubMessage;
      if (message.type !== 'heartbeat') return;
      mirrored += 1;
      mirror.send({ type: 'heartbeat', t: message.t });
    });
    // The window is measured in the hub's own ticks, as a peer that never answers hears them: a storm would send
    // hundreds within one.
    const clock = await ScriptedExtension.connect(port, { key: pairedKey(dir) });
    const ticks = 2;
    for (let i = 0; i < ticks; i++) await clock.next((m) => m.type === 'heartbeat', 2000);
    // Answered on the mirror's socket after its echoes: the hub has read them, and sent whatever it answered to them.
    mirror.send({ type: 'decide', elicitationId: 'el_nobody', idempotencyKey: 'k-after-echoes', decision: 'rejected' });
    expect(await mirror.next((m) => m.type === 'decision.result')).toMatchObject({ ok: false, reason: 'not_found' });
    const heartbeats = mirror.received.filter((m) => m.type === 'heartbeat').length;
    expect(heartbeats).toBe(mirrored);
    expect(heartbeats).toBeGreaterThanOrEqual(1);
    // The mirror, connected first, may hear one tick the clock did not, and one more while its decision is answered.
    expect(heartbeats).toBeLessThanOrEqual(ticks + 2);
    expect(mirror.received.filter((m) => m.type === 'error')).toEqual([]);
    clock.close();
    mirror.close();
  });
});

describe('a create touches no state file', () => {
  /** What a relay's create frame carries for `id`. */
  function createCall(callId: string, id: string) {
    const checked = checkApprovalInput({ message: id, context: { id } });
    if (!checked.ok) throw new Error('fixture invalid');
    return { type: 'call' as const, callId, method: 'create' as const, params: { id, request: checked.request, renderedTemplate: null, timeoutMs: 60_000, requester: { client: 'test', pid: 1 } } };
  }
  const createdFor = (relay: ScriptedExtension, callId: string) => relay.next((m) => m.type === 'call.result' && m.callId === callId);

  it('the paired count a create tells of is kept by the hub, not read per create; it follows pairings made elsewhere', async () => {
    const relay = await rawRelay();
    const other = new StateDir(dir);
    let probes = 0;
    /** Whether a create now says to pair (no extension or device paired, as the hub counts them). */
    const saysToPair = async (): Promise<boolean> => {
      const callId = `c_probe${++probes}`;
      relay.send(createCall(callId, `el_probe${probes}`));
      const answer = await createdFor(relay, callId);
      if (answer.type !== 'call.result' || !answer.ok) throw new Error(`create failed: ${JSON.stringify(answer)}`);
      return 'next' in (answer.value as object);
    };
    try {
      if (other.pairedExtensions().length === 0) other.addPairedExtension(EXTENSION_ORIGIN);
      await until('the hub to count the pairing', async () => ((await saysToPair()) ? undefined : true));
      // Every read of the state dir the hub could make for a create; the handshake's own reads are behind us.
      const reads = (['pairedExtensions', 'pairedDevices', 'relayKeys', 'relayKey', 'pairing', 'remote'] as const).map((method) => vi.spyOn(state, method));
      try {
        relay.send(createCall('c_create', 'el_nofile'));
        const created = await createdFor(relay, 'c_create');
        expect(created).toMatchObject({ ok: true, value: { elicitationId: 'el_nofile', reviewer: { connected: false }, status: 'pending' } });
        expect(created.type === 'call.result' && created.ok && 'next' in (created.value as object)).toBe(false);
        for (const spy of reads) expect(spy).not.toHaveBeenCalled();
      } finally {
        for (const spy of reads) spy.mockRestore();
      }
      // Another process forgets every pairing: the watcher tells the hub, and a create says to pair.
      other.removePairedExtensions(EXTENSION_ORIGIN);
      for (const device of other.pairedDevices()) other.removePairedDevice(device.keyId);
      await until('the hub to count no pairing', async () => ((await saysToPair()) ? true : undefined));
      // A pairing made in a terminal counts at once, watcher or not: "nobody is paired" is checked against the files.
      other.addPairedExtension(EXTENSION_ORIGIN);
      expect(await saysToPair()).toBe(false);
    } finally {
      relay.close();
    }
  });
});

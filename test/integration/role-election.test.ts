// Role election in process: two "server processes" are two RoleElection objects on one port and one state dir, with
// real sockets, a real journal, and fake hubs squatting the port where a test needs a misbehaving one.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { ApprovalEngine } from '../../server/approvals/approval-engine.js';
import { RoleElection } from '../../server/hub/role-election.js';
import { StateDir } from '../../server/state-dir.js';
import { checkApprovalInput } from '../../shared/approval-input.js';
import { hubProof, newNonce } from '../../shared/hub-auth.js';
import { CLOSE_PROTOCOL_MISMATCH, PROTOCOL_VERSION } from '../../shared/wire-protocol.js';
import { FaultIo } from '../helpers/fault-io.js';
import { ScriptedExtension, freePort, pairedKey } from '../helpers/scripted-extension.js';

let dir: string;
let port: number;
let cleanup: (() => Promise<void> | void)[];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'elicitly-roles-'));
  port = freePort();
  cleanup = [];
});
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  rmSync(dir, { recursive: true, force: true });
});

function election(options: { io?: FaultIo; onOpen?: () => void; handshakeTimeoutMs?: number; findHubWithinMs?: number; callTimeoutMs?: number } = {}): RoleElection {
  const roles = new RoleElection({
    port,
    state: new StateDir(dir),
    openEngine: () => {
      options.onOpen?.();
      return ApprovalEngine.open({ dir, retentionMs: 7 * 86_400_000, io: options.io });
    },
    handshakeTimeoutMs: options.handshakeTimeoutMs,
    findHubWithinMs: options.findHubWithinMs,
    callTimeoutMs: options.callTimeoutMs,
  });
  cleanup.push(() => roles.close());
  return roles;
}

function createParams(id: string) {
  const checked = checkApprovalInput({ message: id, context: { id } });
  if (!checked.ok) throw new Error('fixture invalid');
  return { id, request: checked.request, renderedTemplate: null, timeoutMs: 3_600_000, requester: { client: 'test', pid: process.pid } };
}

/** Resolves once `roles` is the hub, polled every 5 ms within `withinMs`: an election has no event to wait on. */
async function becomesHub(roles: RoleElection, withinMs: number, what: string): Promise<void> {
  await expect.poll(() => roles.role(), { timeout: withinMs, interval: 5, message: what }).toBe('hub');
}

/** A process squatting the port that speaks WebSocket but misbehaves after the upgrade. */
async function squatter(behave: (socket: WebSocket) => void): Promise<void> {
  const http: Server = createServer();
  const wss = new WebSocketServer({ server: http, handleProtocols: (p) => [...p][0] ?? false });
  wss.on('connection', behave);
  // Port 0, then the test's elections use what the kernel gave: a port picked free earlier can have been taken since
  // (another file's socket, an outgoing connection's local port), and a failed listen would hang the test.
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(0, '127.0.0.1', () => resolve());
  });
  const address = http.address();
  if (address === null || typeof address === 'string') throw new Error('the squatter has no port');
  port = address.port;
  cleanup.push(async () => {
    for (const client of wss.clients) client.terminate();
    wss.close();
    await new Promise<void>((resolve) => http.close(() => resolve()));
  });
}

describe('one writer, by construction', () => {
  it('only the process that bound the port opens the store; a relay never does', async () => {
    const opened: string[] = [];
    const a = election({ onOpen: () => opened.push('a') });
    const b = election({ onOpen: () => opened.push('b') });
    expect((await a.call('create', createParams('el_a'))).ok).toBe(true);
    expect((await b.call('create', createParams('el_b'))).ok).toBe(true);
    expect(await b.call('status', { id: 'el_a' })).toEqual({ ok: true, value: { status: 'pending' } });
    expect([a.role(), b.role()]).toEqual(['hub', 'relay']);
    expect(opened).toEqual(['a']);
  });

  it('takeover opens the store after binding, and sees everything the old hub acknowledged', async () => {
    const opened: string[] = [];
    const a = election({ onOpen: () => opened.push('a') });
    const b = election({ onOpen: () => opened.push('b') });
    await a.call('create', createParams('el_1'));
    await b.call('create', createParams('el_2'));
    await a.close();
    await becomesHub(b, 3000, 'b takes over');
    expect(opened).toEqual(['a', 'b']);
    expect(await b.call('status', { id: 'el_1' })).toEqual({ ok: true, value: { status: 'pending' } });
    expect(await b.call('status', { id: 'el_2' })).toEqual({ ok: true, value: { status: 'pending' } });
  });

  it('shutdown drains the store before the sockets drop: no relay takes over while the old hub still writes', async () => {
    const io = new FaultIo();
    const a = election({ io });
    const b = election();
    await a.call('create', createParams('el_1'));
    await b.call('status', { id: 'el_1' });
    io.hold();
    const cancel = a.call('cancel', { id: 'el_1' });
    await io.blocked();
    const closing = a.close();
    // The write is still in its fsync: the port and the relay's socket are still held, so b cannot take over yet. A
    // call answered by a over that socket proves it was still open after close began: a closing engine takes no call,
    // and says so (only a can).
    expect(await b.call('status', { id: 'el_1' })).toMatchObject({ ok: false, error: { code: 'unavailable', message: expect.stringContaining('it is shutting down') } });
    expect(b.role()).toBe('relay');
    io.release();
    expect(await cancel).toEqual({ ok: true, value: { status: 'canceled' } });
    await closing;
    await becomesHub(b, 3000, 'b takes over once a closed');
    expect(await b.call('status', { id: 'el_1' })).toEqual({ ok: true, value: { status: 'canceled' } });
  });
});

describe('bounded everywhere', () => {
  it('a hub that closes the relay before welcome: calls settle with unavailable in bounded time', async () => {
    await squatter((socket) => socket.close(1011, 'nope'));
    const b = election({ findHubWithinMs: 1500 });
    const started = Date.now();
    const answer = await b.call('status', { id: 'el_x' });
    expect(answer).toMatchObject({ ok: false, error: { code: 'unavailable', message: expect.stringContaining('before its welcome') } });
    expect(Date.now() - started).toBeLessThan(1500 * 3 + 1000);
  });

  it('a hub that never welcomes: the handshake times out and calls settle with unavailable', async () => {
    await squatter(() => undefined);
    const b = election({ handshakeTimeoutMs: 300, findHubWithinMs: 800 });
    const started = Date.now();
    expect(await b.call('status', { id: 'el_x' })).toMatchObject({ ok: false, error: { code: 'unavailable', message: expect.stringContaining('no welcome within 300 ms') } });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('a hub that welcomes but never answers a call: the call settles with unavailable after its timeout', async () => {
    // It knows the install key (a hung hub, not an impostor): it completes the handshake, then ignores every call.
    const key = new StateDir(dir).relayKey();
    await squatter((socket) => {
      let nonce = '';
      socket.on('message', (data) => {
        const frame = JSON.parse(data.toString()) as { id?: string; method: string; params: { nonce?: string } };
        if (frame.method === 'hello') {
          nonce = frame.params.nonce ?? '';
          const hubNonce = newNonce();
          void hubProof(key, { port, role: 'relay' }, nonce, hubNonce).then((proof) => socket.send(JSON.stringify({ id: frame.id, result: { nonce: hubNonce, proof } })));
        }
        if (frame.method === 'auth') socket.send(JSON.stringify({ id: frame.id, result: { welcome: { protocol: PROTOCOL_VERSION, hubPid: 1, pending: [], rules: [] } } }));
      });
    });
    const b = election({ callTimeoutMs: 300 });
    const started = Date.now();
    expect(await b.call('status', { id: 'el_x' })).toMatchObject({ ok: false, error: { code: 'unavailable', message: 'the hub did not answer status within 300 ms' } });
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('something squatting the port that cannot prove the install key gets nothing but a hello, and the agent is told', async () => {
    const heard: string[] = [];
    await squatter((socket) =>
      socket.on('message', (data) => {
        heard.push(data.toString());
        // Pretends to be a hub: a challenge with a proof it cannot make, then a welcome for good measure.
        const { id } = JSON.parse(data.toString()) as { id?: string };
        socket.send(JSON.stringify({ id, result: { nonce: newNonce(), proof: 'ab'.repeat(32) } }));
        socket.send(JSON.stringify({ id: 'auth', result: { welcome: { protocol: PROTOCOL_VERSION, hubPid: 1, pending: [], rules: [] } } }));
      }),
    );
    const b = election();
    const answer = await b.call('create', createParams('el_secret_request'));
    expect(answer).toMatchObject({ ok: false, error: { code: 'unavailable', message: expect.stringContaining(`something else holds 127.0.0.1:${port}`) } });
    expect(heard.length).toBeGreaterThan(0);
    const key = new StateDir(dir).relayKey();
    for (const frame of heard) {
      expect(JSON.parse(frame)).toMatchObject({ method: 'hello', params: { role: 'relay' } });
      expect(frame).not.toContain(key);
      expect(frame).not.toContain('el_secret_request');
    }
  });

  it('a hub of another protocol version: the agent is told which, at once', async () => {
    await squatter((socket) => socket.once('message', () => socket.close(CLOSE_PROTOCOL_MISMATCH, `hub speaks protocol ${PROTOCOL_VERSION + 1}`)));
    const b = election();
    const started = Date.now();
    expect(await b.call('status', { id: 'el_x' })).toMatchObject({
      ok: false,
      error: { code: 'unavailable', message: expect.stringContaining(`another elicitly-companion version (hub speaks protocol ${PROTOCOL_VERSION + 1}; this one speaks protocol ${PROTOCOL_VERSION})`) },
    });
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('an aborted elicit_await stops in the hub too: the hub answers at once instead of waiting out the window', async () => {
    const a = election();
    const b = election();
    await a.call('create', createParams('el_wait'));
    await b.call('status', { id: 'el_wait' });
    expect(b.role()).toBe('relay');
    const controller = new AbortController();
    const started = Date.now();
    const waiting = b.call('await', { id: 'el_wait', waitMs: 60_000 }, controller.signal);
    // The relay's socket is one ordered stream and the hub parks the await without I/O: once a later call is
    // answered, the hub is waiting, so the abort below reaches a waiting hub rather than a call not yet sent.
    expect(await b.call('status', { id: 'el_wait' })).toEqual({ ok: true, value: { status: 'pending' } });
    controller.abort();
    // The hub's own answer (pending), not the relay giving up locally.
    expect(await waiting).toEqual({ ok: true, value: { status: 'pending' } });
    expect(Date.now() - started).toBeLessThan(2000);
  });
});

describe('a hub whose store fails steps down', () => {
  it('calls settle with unavailable in bounded time, a healthy process takes over, nothing acknowledged is lost', async () => {
    const io = new FaultIo();
    const a = election({ io });
    const b = election();
    expect((await a.call('create', createParams('el_before'))).ok).toBe(true);
    await b.call('status', { id: 'el_before' });
    expect([a.role(), b.role()]).toEqual(['hub', 'relay']);
    const ext = await ScriptedExtension.connect(port, { key: pairedKey(dir) });
    cleanup.push(() => ext.close());

    io.fail();
    const started = Date.now();
    const answer = await b.call('create', createParams('el_during'));
    expect(Date.now() - started).toBeLessThan(10_000);
    // Either the new hub took the retried create, or the agent is told to call again; never a silent success on a dead store.
    if (!answer.ok) expect(answer.error.code).toBe('unavailable');
    await becomesHub(b, 5000, 'the healthy process takes over');
    expect(await ext.closed).toMatchObject({ code: 1001 });

    expect((await b.call('create', createParams('el_after'))).ok).toBe(true);
    expect(await b.call('status', { id: 'el_before' })).toEqual({ ok: true, value: { status: 'pending' } });
    // The process that stepped down serves its agent through the new hub.
    expect(await a.call('status', { id: 'el_after' })).toEqual({ ok: true, value: { status: 'pending' } });
    expect(a.role()).toBe('relay');
  });
});

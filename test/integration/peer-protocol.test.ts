// Issue 32: one peer protocol with least privilege, against the built hub (`elicitly-companion hub`, its own process)
// with every kind of peer on real sockets: the role × method table walked pair by pair, and each finding of the issue
// as a test named after it.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect as netConnect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkApprovalInput } from '../../shared/approval-input.js';
import { EXTENSION_ORIGIN } from '../../shared/extension-id.js';
import { newNonce } from '../../shared/hub-auth.js';
import { PEER_METHODS, type PeerMethod, type Params } from '../../shared/peer-calls.js';
import { CLOSE_REMOTE_OFF, CLOSE_UNKNOWN_KEY, PROTOCOL_VERSION, SUBPROTOCOL } from '../../shared/wire-protocol.js';
import { StateDir } from '../../server/state-dir.js';
import { callerFor, type Grant } from '../../shared/peer-calls.js';
import { SERVER_ENTRY } from '../helpers/mcp-harness.js';
import type { ScriptedPeer } from '../helpers/scripted-peer.js';
import { ScriptedDevice, openDevice } from '../helpers/scripted-device.js';
import { ScriptedExtension, freePort, pairedKey } from '../helpers/scripted-extension.js';

const CERT = fileURLToPath(new URL('../fixtures/localhost-cert.pem', import.meta.url));
const KEY = fileURLToPath(new URL('../fixtures/localhost-key.pem', import.meta.url));
const ca = readFileSync(CERT);

const dir = mkdtempSync(join(tmpdir(), 'elicitly-peer-protocol-'));
const state = new StateDir(dir);
const port = freePort();
let httpsPort = freePort();
while (httpsPort === port) httpsPort = freePort();
const LOOPBACK = `http://127.0.0.1:${port}`;
const LOCALHOST = `http://localhost:${port}`;
const TLS_ORIGIN = `https://localhost:${httpsPort}`;
const WINDOW_MS = 3000;

let hub: ChildProcess;
const opened: { close: () => void }[] = [];

function approval(message: string, id = `el_${randomBytes(9).toString('base64url')}`): Params<'create'> {
  const checked = checkApprovalInput({ message, context: { message } });
  if (!checked.ok) throw new Error('the fixture does not validate');
  return { id, request: checked.request, renderedTemplate: null, timeoutMs: 600_000, requester: { client: 'test', pid: process.pid } };
}

function permission(command: string): Params<'create'> {
  return {
    ...approval(command),
    request: { kind: 'permission', message: 'Claude Code wants to run a command', host: 'claude-code', event: 'PermissionRequest', tool: 'Bash', input: { command }, command, cwd: '/tmp', sessionId: 's', editable: true, suggestions: [], timeoutSeconds: 600 },
    surfaces: ['extension'],
  };
}

async function relay(key = { key: state.relayKey() } as { keyId?: string; key: string }): Promise<ScriptedExtension> {
  const peer = await ScriptedExtension.connect(port, { role: 'relay', key });
  opened.push(peer);
  return peer;
}

async function extension(): Promise<ScriptedExtension> {
  const peer = await ScriptedExtension.connect(port, { key: pairedKey(dir) });
  opened.push(peer);
  return peer;
}

/** A phone's socket from `origin`, proving the key of a device paired on `pairedOn`. */
async function device(origin = LOOPBACK, pairedOn = origin): Promise<{ peer: ScriptedDevice; key: { keyId: string; key: string } }> {
  const paired = state.addPairedDevice('Test phone', pairedOn);
  const peer = openDevice(await ScriptedDevice.connect(`ws://127.0.0.1:${port}/phone/socket`, { origin }, opened));
  return { peer, key: { keyId: paired.keyId, key: paired.key } };
}

/** Files a request as a local agent would and returns its id. */
async function filed(message: string): Promise<string> {
  const local = await relay();
  const created = await local.call('create', approval(message));
  local.close();
  if (!created.result) throw new Error(`create refused: ${JSON.stringify(created.error)}`);
  return created.result.elicitationId;
}

function closedWithin(peer: ScriptedPeer, ms: number): Promise<{ code: number; reason: string }> {
  return Promise.race([peer.closed, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`still open after ${ms} ms`)), ms))]);
}

/**
 * A WebSocket upgrade written by hand on a raw TCP (or TLS) socket, which then says nothing at all and never answers a
 * close: a peer that holds its place for as long as the hub lets it. Resolves with the HTTP status line's code.
 */
function silentUpgrade(target: { tls: boolean; port: number; host: string; origin?: string }, track: Socket[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = target.tls ? tlsConnect({ host: '127.0.0.1', port: target.port, ca, servername: 'localhost' }) : netConnect({ host: '127.0.0.1', port: target.port });
    track.push(socket);
    socket.on('error', () => undefined);
    const timer = setTimeout(() => reject(new Error('no answer to the upgrade within 5 s')), 5000);
    socket.once(target.tls ? 'secureConnect' : 'connect', () => {
      socket.write(
        [
          'GET /phone/socket HTTP/1.1',
          `Host: ${target.host}`,
          'Upgrade: websocket',
          'Connection: Upgrade',
          `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}`,
          'Sec-WebSocket-Version: 13',
          `Sec-WebSocket-Protocol: ${SUBPROTOCOL}`,
          ...(target.origin ? [`Origin: ${target.origin}`] : []),
          '',
          '',
        ].join('\r\n'),
      );
    });
    socket.once('data', (data: Buffer) => {
      clearTimeout(timer);
      // Read, then left alone: no hello, no close frame back, nothing.
      resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(data.toString('latin1'))?.[1] ?? 0));
    });
  });
}

beforeAll(async () => {
  state.ensure();
  state.updateRemote((current) => ({ ...current, enabled: true, origins: [TLS_ORIGIN] }));
  hub = spawn(process.execPath, [SERVER_ENTRY, 'hub'], {
    env: { ...process.env, ELICITLY_STATE_DIR: dir, ELICITLY_PORT: String(port), ELICITLY_LOG_LEVEL: 'warn', ELICITLY_REMOTE_LISTEN: `127.0.0.1:${httpsPort}`, ELICITLY_REMOTE_CERT: CERT, ELICITLY_REMOTE_KEY: KEY },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  hub.stderr?.resume();
  const deadline = Date.now() + 15_000;
  for (;;) {
    const probe = await ScriptedExtension.connect(port, { key: pairedKey(dir) }).catch(() => null);
    if (probe) {
      probe.close();
      break;
    }
    if (Date.now() > deadline) throw new Error('the hub did not come up within 15 s');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
});

afterAll(async () => {
  for (const peer of opened) peer.close();
  if (hub.exitCode === null) {
    const exited = new Promise((resolve) => hub.once('exit', resolve));
    hub.kill('SIGTERM');
    await exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

/** Who calls, as the hub will know them from the key their socket proves. */
type Principal = 'unproven' | 'local' | 'remote' | 'remote --allow permission' | 'extension' | 'device';
const PRINCIPALS: readonly Principal[] = ['unproven', 'local', 'remote', 'remote --allow permission', 'extension', 'device'];
const CALLERS: Record<Principal, { callers: Parameters<typeof callerFor>[1]; grants: readonly Grant[] }> = {
  unproven: { callers: ['unproven'], grants: [] },
  local: { callers: ['local', 'app'], grants: [] },
  remote: { callers: ['remote'], grants: [] },
  'remote --allow permission': { callers: ['remote'], grants: ['permission'] },
  extension: { callers: ['extension'], grants: [] },
  device: { callers: ['device'], grants: [] },
};

describe('the role × method table', () => {
  /** Valid params for every method: a refusal can then only be the table's, never the params'. */
  function paramsFor(method: PeerMethod, role: 'relay' | 'extension' | 'device', target: string): unknown {
    const fixtures: { [M in PeerMethod]: Params<M> } = {
      hello: { protocol: PROTOCOL_VERSION, role, client: { name: 'walk', version: '1' }, nonce: newNonce() },
      auth: { proof: '0'.repeat(64) },
      // A host's permission prompt: the one kind a remote key files only with its grant.
      create: permission(`touch walk-${randomBytes(4).toString('hex')}`),
      status: { id: target },
      await: { id: target, waitMs: 1 },
      result: { id: target },
      cancel: { id: target },
      info: {},
      paired: {},
      view: { id: target },
      decide: { elicitationId: target, idempotencyKey: randomBytes(8).toString('hex'), decision: 'rejected' },
      rules: {},
      'rule.save': { rule: { effect: 'deny', match: { tool: 'Bash', commandPrefix: `walk-${randomBytes(4).toString('hex')}` }, expiresAt: null } },
      'rule.delete': { id: 'rule_0000000000000000' },
      'passkey.info': {},
      'passkey.nonce': {},
      'passkey.register': { nonce: 'n'.repeat(43), registration: { id: 'AAAA', rawId: 'AAAA', type: 'public-key', response: { clientDataJSON: 'AA', attestationObject: 'AA' }, clientExtensionResults: {} }, label: 'walk' },
      'passkey.remove': { id: 'AAAA' },
      'passkey.require': { require: [] },
      'push.info': {},
      'push.subscribe': { subscription: null },
    };
    return fixtures[method];
  }

  async function socketOf(principal: Principal): Promise<{ peer: ScriptedPeer; role: 'relay' | 'extension' | 'device' }> {
    switch (principal) {
      case 'unproven': {
        const peer = await ScriptedExtension.connect(port, { role: 'relay', hello: false });
        opened.push(peer);
        return { peer, role: 'relay' };
      }
      case 'local':
        return { peer: await relay(), role: 'relay' };
      case 'remote':
      case 'remote --allow permission': {
        const exported = state.addRelayKey(principal, CALLERS[principal].grants);
        return { peer: await relay({ keyId: exported.keyId, key: exported.key }), role: 'relay' };
      }
      case 'extension':
        return { peer: await extension(), role: 'extension' };
      case 'device': {
        const { peer, key } = await device();
        await peer.handshake(key, port);
        return { peer, role: 'device' };
      }
    }
  }

  for (const principal of PRINCIPALS) {
    it(`${principal}: every method it is not listed for is refused "forbidden", every other one is served`, async () => {
      // A request of its own for each method to act on, filed first: an unproven socket has only its 3 s window.
      const order = [...PEER_METHODS.filter((m) => m !== 'hello'), 'hello' as const];
      const targets = new Map<PeerMethod, string>();
      for (const method of order) targets.set(method, await filed(`${principal} walks ${method}`));
      const { peer, role } = await socketOf(principal);
      const outcome: Record<string, string> = {};
      const expected: Record<string, string> = {};
      // hello last: on an unproven socket it starts the handshake.
      for (const method of order) {
        const target = targets.get(method) ?? '';
        const params = paramsFor(method, role, target);
        const { callers, grants } = CALLERS[principal];
        const grantNeeded = method === 'create' && callers.includes('remote') && !grants.includes('permission');
        expected[method] = callerFor(method, callers) === null || grantNeeded ? 'forbidden' : 'served';
        const id = peer.request(method, params as Params<typeof method>);
        const answer = await peer.answer(id);
        outcome[method] = answer.error?.code === 'forbidden' ? 'forbidden' : 'served';
        if (answer.error?.code === 'forbidden') expect(answer.error.message, method).toContain(method);
      }
      peer.close();
      await peer.closed;
      expect(outcome).toEqual(expected);
    });
  }
});

describe('finding 1: an exported relay key files, awaits, reads and cancels its own requests, and nothing more', () => {
  it('finding 1: it never decides: `decide` (the app\'s way in too) is refused, on its own request and on another agent\'s', async () => {
    const exported = state.addRelayKey('devbox');
    const remote = await relay({ keyId: exported.keyId, key: exported.key });
    const own = await remote.call('create', { ...approval('Mine'), surfaces: ['extension', 'app'] });
    const other = await filed('Someone else\'s, viewable in a chat');
    for (const id of [own.result?.elicitationId ?? '', other]) {
      const decided = await remote.call('decide', { elicitationId: id, idempotencyKey: `k-${id}`, decision: 'approved', values: {} });
      expect(decided.error).toMatchObject({ code: 'forbidden' });
    }
    const local = await relay();
    expect((await local.call('status', { id: other })).result).toEqual({ status: 'pending' });
  });

  it('finding 1: it never sees another agent\'s request: view is refused, status / await / result / cancel answer not_found', async () => {
    const exported = state.addRelayKey('devbox');
    const remote = await relay({ keyId: exported.keyId, key: exported.key });
    const other = await filed('Not yours');
    expect((await remote.call('view', { id: other })).error).toMatchObject({ code: 'forbidden' });
    for (const method of ['status', 'result', 'cancel'] as const) expect((await remote.call(method, { id: other })).error, method).toMatchObject({ code: 'not_found' });
    expect((await remote.call('await', { id: other, waitMs: 1 })).error).toMatchObject({ code: 'not_found' });
    // Its own it reads and withdraws.
    const own = await remote.call('create', approval('Mine to withdraw'));
    const id = own.result?.elicitationId ?? '';
    expect((await remote.call('status', { id })).result).toEqual({ status: 'pending' });
    expect((await remote.call('cancel', { id })).result).toEqual({ status: 'canceled' });
    // Its info counts its own requests only.
    const pending = await remote.call('create', approval('Mine, pending'));
    expect(pending.result?.status).toBe('pending');
    expect((await remote.call('info', {})).result?.pending).toBe(1);
  });

  it('finding 1: it never lists the person\'s rules nor removes one, and files a host\'s permission prompt only with --allow permission', async () => {
    const plain = state.addRelayKey('devbox');
    const remote = await relay({ keyId: plain.keyId, key: plain.key });
    expect((await remote.call('rules', {})).error).toMatchObject({ code: 'forbidden' });
    expect((await remote.call('rule.delete', { id: 'rule_0000000000000000' })).error).toMatchObject({ code: 'forbidden' });
    const posing = await remote.call('create', permission('rm -rf /tmp/x'));
    expect(posing.error).toMatchObject({ code: 'forbidden', message: expect.stringContaining('--allow permission') });
    const granted = state.addRelayKey('devbox hooks', ['permission']);
    const hook = await relay({ keyId: granted.keyId, key: granted.key });
    expect((await hook.call('create', permission('touch allowed.txt'))).result).toMatchObject({ status: 'pending' });
  });

  it('the surface recorded is the caller\'s, never a field: extension, phone, and app for a local relay', async () => {
    const watcher = await extension();
    const { peer: phone, key } = await device();
    await phone.handshake(key, port);
    const local = await relay();
    const deciders = [
      ['extension', await extension()],
      ['phone', phone],
      ['app', local],
    ] as const;
    for (const [via, peer] of deciders) {
      const id = await filed(`decided via ${via}`);
      await watcher.notice('request.created', (p) => p.request.elicitationId === id);
      expect((await peer.call('decide', { elicitationId: id, idempotencyKey: `via-${via}`, decision: 'approved', values: {} })).result).toMatchObject({ ok: true });
      expect(await watcher.notice('request.removed', (p) => p.elicitationId === id)).toMatchObject({ status: 'approved', decidedVia: via });
    }
  });
});

describe('finding 2: the network cannot lock out the desk', () => {
  it('finding 2: 16 silent TLS upgrades fill only the network listener\'s room: loopback relays and extensions still connect at once', async () => {
    const silent: Socket[] = [];
    try {
      const statuses = await Promise.all(Array.from({ length: 16 }, () => silentUpgrade({ tls: true, port: httpsPort, host: `localhost:${httpsPort}`, origin: TLS_ORIGIN }, silent)));
      expect(statuses).toEqual(Array.from({ length: 16 }, () => 101));
      // Its own room is full: the 17th from the network waits.
      expect(await silentUpgrade({ tls: true, port: httpsPort, host: `localhost:${httpsPort}`, origin: TLS_ORIGIN }, silent)).toBe(503);
      // The desk is not: an agent's relay and the extension connect as ever.
      const local = await relay();
      expect((await local.call('info', {})).result).toMatchObject({ pid: hub.pid });
      await extension();
    } finally {
      for (const socket of silent) socket.destroy();
    }
  });

  it('finding 2: a place is freed the moment its window ends (the silent socket destroyed, not waited on for ~30 s)', async () => {
    const silent: Socket[] = [];
    try {
      const started = Date.now();
      const statuses = await Promise.all(Array.from({ length: 16 }, () => silentUpgrade({ tls: false, port, host: `127.0.0.1:${port}` }, silent)));
      expect(statuses).toEqual(Array.from({ length: 16 }, () => 101));
      expect(await silentUpgrade({ tls: false, port, host: `127.0.0.1:${port}` }, silent)).toBe(503);
      // Their window ends at 3 s; a new peer gets in within a moment of it, though none of them ever answered the close.
      let admitted: number | null = null;
      while (admitted === null && Date.now() - started < WINDOW_MS + 4000) {
        const peer = await ScriptedExtension.connect(port, { role: 'relay', key: { key: state.relayKey() } }).catch(() => null);
        if (peer) {
          opened.push(peer);
          admitted = Date.now() - started;
        } else await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(admitted, 'a peer admitted after the window').not.toBeNull();
      expect(admitted).toBeLessThan(WINDOW_MS + 2000);
      // And the silent ones were let go of: the hub destroyed their sockets (each waited on for at most 2 s more).
      const gone = await Promise.all(
        silent.slice(0, 16).map(
          (socket) =>
            new Promise<boolean>((resolve) => {
              if (socket.destroyed || socket.readableEnded) return resolve(true);
              const timer = setTimeout(() => resolve(false), 2000);
              socket.once('close', () => (clearTimeout(timer), resolve(true)));
            }),
        ),
      );
      expect(gone.every(Boolean)).toBe(true);
    } finally {
      for (const socket of silent) socket.destroy();
    }
  });

  it('finding 2: the network listener answers only its configured host names and admits only phones from configured origins', async () => {
    const silent: Socket[] = [];
    try {
      const tls = (host: string, origin?: string) => silentUpgrade({ tls: true, port: httpsPort, host, ...(origin ? { origin } : {}) }, silent);
      expect(await tls(`127.0.0.1:${port}`, TLS_ORIGIN)).toBe(403);
      expect(await tls(`127.0.0.1:${httpsPort}`, TLS_ORIGIN)).toBe(403);
      expect(await tls(`localhost:${httpsPort}`)).toBe(403); // no Origin: a relay
      expect(await tls(`localhost:${httpsPort}`, EXTENSION_ORIGIN)).toBe(403);
      expect(await tls(`localhost:${httpsPort}`, LOOPBACK)).toBe(403);
      expect(await tls(`localhost:${httpsPort}`, TLS_ORIGIN)).toBe(101);
    } finally {
      for (const socket of silent) socket.destroy();
    }
  });
});

describe('finding 3: `remote disable` takes effect on open sockets', () => {
  it('finding 3: remote disable closes an open device socket at once (4005, the key kept), and a decision it sends is not taken', async () => {
    const id = await filed('Decide from the phone?');
    const { peer: phone, key } = await device();
    await phone.handshake(key, port);
    state.updateRemote((current) => ({ ...current, enabled: false }));
    try {
      // Sent at once, before the hub can have heard of the change: the call is checked against remote.json itself.
      phone.request('decide', { elicitationId: id, idempotencyKey: 'after-disable', decision: 'approved', values: {} });
      expect(await closedWithin(phone, 3000)).toMatchObject({ code: CLOSE_REMOTE_OFF });
      const local = await relay();
      expect((await local.call('status', { id })).result).toEqual({ status: 'pending' });
      // The pairing is kept: enabled again, the same key opens a socket again.
      expect(state.pairedDevices().some((d) => d.keyId === key.keyId)).toBe(true);
    } finally {
      state.updateRemote((current) => ({ ...current, enabled: true }));
    }
    const again = openDevice(await ScriptedDevice.connect(`ws://127.0.0.1:${port}/phone/socket`, { origin: LOOPBACK }, opened));
    expect(await again.handshake(key, port)).toMatchObject({ protocol: PROTOCOL_VERSION });
  });

  it('finding 3: an open device socket idle while the page is turned off is closed too, without sending anything', async () => {
    const { peer: phone, key } = await device();
    await phone.handshake(key, port);
    state.updateRemote((current) => ({ ...current, enabled: false }));
    try {
      expect(await closedWithin(phone, 3000)).toMatchObject({ code: CLOSE_REMOTE_OFF });
    } finally {
      state.updateRemote((current) => ({ ...current, enabled: true }));
    }
  });
});

describe('finding 4: a device key opens sockets only from the origin it was paired on', () => {
  it('finding 4: a key paired on http://127.0.0.1:<port> proving itself from http://localhost:<port> (also allowed) is refused with 4003', async () => {
    const { peer, key } = await device(LOCALHOST, LOOPBACK);
    // Proved honestly for the origin it comes from: the key is right, the origin is not the one it was paired on.
    peer.request('hello', { protocol: PROTOCOL_VERSION, role: 'device', client: { name: 'x', version: '1' }, nonce: newNonce(), keyId: key.keyId });
    expect(await closedWithin(peer, 3000)).toMatchObject({ code: CLOSE_UNKNOWN_KEY });
    // No challenge came: the hub proved nothing to a key out of its place.
    expect(peer.received).toEqual([]);
    // From its own origin the same key opens a socket.
    const home = openDevice(await ScriptedDevice.connect(`ws://127.0.0.1:${port}/phone/socket`, { origin: LOOPBACK }, opened));
    expect(await home.handshake(key, port)).toMatchObject({ protocol: PROTOCOL_VERSION });
  });
});

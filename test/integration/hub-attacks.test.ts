// The second round of attacks on the hub (issue 17), each against the real server process: a squatter relaying the
// real hub's handshake, a key removed under an open socket, floods of keyless and idle connections, and state files
// that cannot be read. Each test is named after the finding it closes.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { connect as tcpConnect } from 'node:net';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { StateDir } from '../../server/state-dir.js';
import { EXTENSION_ORIGIN } from '../../shared/extension-id.js';
import { CLOSE_HELLO_TIMEOUT, CLOSE_INTERNAL_ERROR, CLOSE_UNKNOWN_KEY, HubFrameSchema, PAIRING_SUBPROTOCOL, SUBPROTOCOL, isAnswer } from '../../shared/wire-protocol.js';
import type { HubFrame } from '../../shared/wire-protocol.js';
import type { Harness } from '../helpers/mcp-harness.js';
import { SERVER_ENTRY, connect } from '../helpers/mcp-harness.js';
import { answerTo, callFrame, helloParams, hubFrames, resultIds } from '../helpers/peer-frames.js';
import { rawPeer } from '../helpers/raw-peer.js';
import { runCommand } from '../helpers/run-command.js';
import { ScriptedExtension, freePort, pairedKey } from '../helpers/scripted-extension.js';

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const undo of cleanup.splice(0).reverse()) await undo();
});

/** A server process that is the hub of its own state dir, on its own port; elected by its first approval call. */
async function hub(extraEnv: Record<string, string> = {}): Promise<{ agent: Harness; dir: string; port: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'elicitly-attacks-'));
  const port = freePort();
  const agent = await connect('v2-2025', { env: { ELICITLY_STATE_DIR: dir, ELICITLY_PORT: String(port), ...extraEnv } });
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }), () => agent.close());
  await agent.callTool('elicit_status', { elicitationId: 'el_warmup' });
  return { agent, dir, port };
}

async function approval(agent: Harness, message: string): Promise<string> {
  const created = await agent.callTool('elicit_approval', { message, context: { n: 1 } });
  return (created.structuredContent as { elicitationId: string }).elicitationId;
}

/**
 * What a hub frame is, as the squatter names it: the answer to the hello is the hub's `challenge`, a result to the auth
 * is its `welcome`; other answers by their id, notices by their method.
 */
function kindOf(frame: HubFrame): string {
  if (!isAnswer(frame)) return frame.method;
  if ('error' in frame) return `error ${String(frame.id)}`;
  if (frame.id === 'hello') return 'challenge';
  if (frame.id === 'auth') return 'welcome';
  return `result ${frame.id}`;
}

/**
 * A port squatter: it holds port A and relays every WebSocket frame, both ways, to the real hub on port B, as a
 * transparent man in the middle. It records what the real hub sent through it, and once anything authenticated
 * arrives it tries to use the socket for itself.
 */
class Squatter {
  /** What the real hub sent to the squatter's upstream sockets (`kindOf`). */
  readonly upstreamTypes: string[] = [];
  /** Answers to the calls the squatter injected. */
  readonly stolen: string[] = [];
  readonly port = freePort();
  private readonly server: WebSocketServer;

  constructor(hubPort: number) {
    this.server = new WebSocketServer({ host: '127.0.0.1', port: this.port, handleProtocols: (protocols) => [...protocols][0] ?? false });
    this.server.on('connection', (down, req) => {
      const origin = req.headers.origin;
      const protocols = (req.headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim()).filter(Boolean);
      const up = new WebSocket(`ws://127.0.0.1:${hubPort}`, protocols, origin === undefined ? {} : { origin });
      const queued: string[] = [];
      up.on('open', () => queued.splice(0).forEach((frame) => up.send(frame)));
      down.on('message', (data) => (up.readyState === up.OPEN ? up.send(data.toString()) : queued.push(data.toString())));
      up.on('message', (data) => {
        const text = data.toString();
        const frame = HubFrameSchema.parse(JSON.parse(text));
        const kind = kindOf(frame);
        this.upstreamTypes.push(kind);
        if (isAnswer(frame) && frame.id?.startsWith('stolen')) this.stolen.push(text);
        else if (down.readyState === down.OPEN) down.send(text);
        // In: use the socket as the peer it passed for.
        if (kind === 'welcome') up.send(JSON.stringify(callFrame('stolen-1', 'status', { id: 'el_x' })));
      });
      up.on('close', () => down.close());
      down.on('close', () => up.close());
      up.on('error', () => undefined);
      down.on('error', () => undefined);
    });
  }

  listening(): Promise<void> {
    return new Promise((resolve) => this.server.once('listening', () => resolve()));
  }

  close(): Promise<void> {
    for (const client of this.server.clients) client.terminate();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

async function squat(hubPort: number): Promise<Squatter> {
  const squatter = new Squatter(hubPort);
  await squatter.listening();
  cleanup.push(() => squatter.close());
  return squatter;
}

describe('finding 1: a port squatter cannot relay the real hub’s handshake', () => {
  it('a relay (another server of the same state dir) that dials the squatter’s port refuses the real hub’s proof', async () => {
    const { agent, dir, port } = await hub();
    const id = await approval(agent, 'pending secret');
    const squatter = await squat(port);
    // A second host's server with the same state dir but the squatter's port: it cannot bind, so it dials as a relay.
    const fooled = await connect('v2-2025', { env: { ELICITLY_STATE_DIR: dir, ELICITLY_PORT: String(squatter.port) } });
    cleanup.push(() => fooled.close());
    const answer = await fooled.callTool('elicit_status', { elicitationId: id });
    // The relay got no further than the hub's challenge: the proof is for port B, and it dialled A.
    expect(squatter.upstreamTypes).toContain('challenge');
    expect(squatter.upstreamTypes).not.toContain('welcome');
    expect(squatter.stolen).toEqual([]);
    expect(JSON.stringify(answer.structuredContent ?? answer.content)).not.toContain('"pending"');
    // Control: the same relay pointed at the real port is let in.
    const direct = await ScriptedExtension.connect(port, { role: 'relay', key: { key: new StateDir(dir).relayKey() } });
    direct.close();
  });

  it('`status` pointed at the squatter’s port says the hub is not ours, and the squatter gets in nowhere', async () => {
    const { dir, port } = await hub();
    const squatter = await squat(port);
    // Run asynchronously: the squatter lives in this process and must keep relaying meanwhile.
    const run = await runCommand(process.execPath, [SERVER_ENTRY, 'status', '--json'], { env: { ELICITLY_STATE_DIR: dir, ELICITLY_PORT: String(squatter.port) }, timeout: 15_000 });
    expect(JSON.parse(run.stdout)).toMatchObject({ state: 'not_our_hub' });
    expect(squatter.upstreamTypes).toContain('challenge');
    expect(run.code).toBe(3);
    expect(squatter.upstreamTypes).not.toContain('welcome');
    expect(squatter.stolen).toEqual([]);
  });

  it('the extension dialling the squatter’s port refuses the real hub’s proof for its own key', async () => {
    const { agent, dir, port } = await hub();
    const key = pairedKey(dir);
    const id = await approval(agent, 'pending secret');
    const squatter = await squat(port);
    const ext = await ScriptedExtension.connect(squatter.port, { key, hello: false });
    cleanup.push(() => ext.socket.terminate());
    await expect(ext.handshake()).rejects.toThrow('the hub did not prove the key');
    expect(squatter.upstreamTypes).not.toContain('welcome');
    expect(JSON.stringify(ext.received)).not.toContain(id);
    // Control: the same key on the real port is let in and sees the request.
    const real = await ScriptedExtension.connect(port, { key, hello: false });
    expect((await real.handshake()).pending.map((r) => r.elicitationId)).toContain(id);
    real.close();
  });
});

describe('finding 2: a removed key stops deciding at once', () => {
  it('`pair --remove` closes that extension’s open socket with 4003 at once', async () => {
    const { dir, port } = await hub();
    const ext = await ScriptedExtension.connect(port, { key: pairedKey(dir) });
    const removed = spawnSync(process.execPath, [SERVER_ENTRY, 'pair', '--remove', EXTENSION_ORIGIN], { env: { ...process.env, ELICITLY_STATE_DIR: dir }, encoding: 'utf8', timeout: 10_000 });
    expect(removed.status).toBe(0);
    const closed = await Promise.race([ext.closed, new Promise((resolve) => setTimeout(() => resolve('still open after 3 s'), 3000))]);
    expect(closed).toMatchObject({ code: CLOSE_UNKNOWN_KEY });
  });

  it('a decide sent right after the key was removed decides nothing, whatever the watcher has told', async () => {
    const { agent, dir, port } = await hub();
    const ext = await ScriptedExtension.connect(port, { key: pairedKey(dir) });
    const id = await approval(agent, 'remove me first');
    await ext.notice('request.created', (p) => p.request.elicitationId === id);
    // Removed in this process, and the decision sent in the same tick: no watcher event can have arrived yet.
    new StateDir(dir).removePairedExtensions(EXTENSION_ORIGIN);
    const decide = ext.request('decide', { elicitationId: id, idempotencyKey: 'after-removal', decision: 'approved' });
    expect((await ext.closed).code).toBe(CLOSE_UNKNOWN_KEY);
    // The socket closed instead of answering: no result (nor error) for the decide.
    expect(ext.received.filter(answerTo(decide))).toEqual([]);
    expect((await agent.callTool('elicit_status', { elicitationId: id })).structuredContent).toEqual({ status: 'pending' });
  });

  it('a key changed under an open socket (paired again from the same origin) closes it too', async () => {
    const { dir, port } = await hub();
    const ext = await ScriptedExtension.connect(port, { key: pairedKey(dir) });
    const state = new StateDir(dir);
    state.removePairedExtensions(EXTENSION_ORIGIN);
    state.addPairedExtension(EXTENSION_ORIGIN);
    expect((await ext.closed).code).toBe(CLOSE_UNKNOWN_KEY);
  });
});

describe('finding 4: keyless sockets cannot lock out peers with a key', () => {
  it('keyless sockets get a small room of their own and 3 s; a proven peer keeps its place and a new one gets in', async () => {
    const { agent, dir, port } = await hub();
    const ext = await ScriptedExtension.connect(port, { key: pairedKey(dir) });
    const held: { socket: WebSocket; openedAt: number; closed: Promise<{ code: number; at: number }> }[] = [];
    let refused: number | undefined;
    for (let i = 0; i < 70 && refused === undefined; i++) {
      const peer = await rawPeer(port, { track: [] });
      // When it closed, taken as it closes: what the test awaits meanwhile (an agent's call under CI's load) is not the hub's.
      if ('socket' in peer) held.push({ socket: peer.socket, openedAt: Date.now(), closed: peer.closed.then((c) => ({ code: c.code, at: Date.now() })) });
      else refused = peer.status;
    }
    cleanup.push(() => held.forEach((h) => h.socket.terminate()));
    expect(refused).toBe(503);
    expect(held.length).toBeLessThanOrEqual(16);
    // The proven extension is still served while the flood holds its room.
    const id = await approval(agent, 'during the flood');
    expect((await ext.notice('request.created')).request.elicitationId).toBe(id);
    // Every keyless socket is closed for its silence within the 3 s window (plus scheduling slack), not 10 s.
    for (const { closed, openedAt } of held) {
      const outcome = await Promise.race([closed, new Promise<{ code: number; at: number }>((resolve) => setTimeout(() => resolve({ code: -1, at: Date.now() }), 5000))]);
      expect(outcome.code).toBe(CLOSE_HELLO_TIMEOUT);
      expect(outcome.at - openedAt).toBeLessThan(4500);
    }
    // And then a new peer with a key gets in at once.
    const relay = await ScriptedExtension.connect(port, { role: 'relay', key: { key: new StateDir(dir).relayKey() } });
    relay.close();
    ext.close();
  });
});

/** A plain TCP connection to the hub's port; resolves how long it stayed open, or null if still open at `withinMs`. */
function tcpIdle(port: number, firstBytes: string, withinMs: number): Promise<number | null> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket: Socket = tcpConnect(port, '127.0.0.1', () => {
      if (firstBytes) socket.write(firstBytes);
    });
    socket.on('error', () => undefined);
    const timer = setTimeout(() => (socket.destroy(), resolve(null)), withinMs);
    socket.on('close', () => (clearTimeout(timer), resolve(Date.now() - started)));
  });
}

describe('finding 5: idle connections are closed and nothing in the upgrade path takes the hub down', () => {
  it('a connection that sends nothing, or never finishes its headers, is closed within the idle timeout', async () => {
    const { port } = await hub();
    const [silent, slow] = await Promise.all([tcpIdle(port, '', 9000), tcpIdle(port, `GET / HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\n`, 9000)]);
    expect(silent).not.toBeNull();
    expect(slow).not.toBeNull();
  });

  it('connections past the cap are closed at once, and the hub still takes a peer with a key when they go', async () => {
    const { dir, port } = await hub();
    const sockets: Socket[] = [];
    cleanup.push(() => sockets.forEach((s) => s.destroy()));
    // Counted until enough were closed, or for 1.5 s: the connections under the cap stay open, and are not waited out.
    const expected = 300 - 256;
    let closedEarly = 0;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 1500);
      for (let i = 0; i < 300; i++) {
        const socket = tcpConnect(port, '127.0.0.1');
        sockets.push(socket);
        socket.on('error', () => undefined);
        socket.on('close', () => {
          if (++closedEarly < expected) return;
          clearTimeout(timer);
          resolve();
        });
      }
    });
    expect(closedEarly).toBeGreaterThanOrEqual(expected);
    sockets.forEach((s) => s.destroy());
    const relay = await ScriptedExtension.connect(port, { role: 'relay', key: { key: new StateDir(dir).relayKey() } });
    relay.close();
  });

  it('a symlinked paired-extensions.json costs a pairing upgrade a 503, not the hub its process', async () => {
    const { agent, dir, port } = await hub();
    const elsewhere = join(dir, 'elsewhere.json');
    writeFileSync(elsewhere, JSON.stringify({ version: 1, extensions: [] }), { mode: 0o600 });
    try {
      unlinkSync(join(dir, 'paired-extensions.json'));
    } catch {
      // Not written yet: nothing was paired.
    }
    symlinkSync(elsewhere, join(dir, 'paired-extensions.json'));
    const origin = 'moz-extension://00000001-1111-2222-3333-444455556666';
    expect(await rawPeer(port, { origin, protocols: [SUBPROTOCOL, PAIRING_SUBPROTOCOL] })).toEqual({ status: 503 });
    // An extension from the pinned origin cannot be checked either: its hello is refused (1011, the hub cannot read its
    // keys), never answered with a challenge, and the hub stays up.
    const pinned = await rawPeer(port, { origin: EXTENSION_ORIGIN });
    if ('socket' in pinned) {
      pinned.send(callFrame('hello', 'hello', helloParams('extension', 'ab'.repeat(32), { keyId: 'k_0123456789abcdef' })));
      expect((await pinned.closed).code).toBe(CLOSE_INTERNAL_ERROR);
      expect(resultIds(hubFrames(pinned.frames))).toEqual([]);
    } else expect(pinned.status).toBe(503);
    // Still the hub, still answering.
    const id = await approval(agent, 'after the planted link');
    expect((await agent.callTool('elicit_status', { elicitationId: id })).structuredContent).toEqual({ status: 'pending' });
  });
});

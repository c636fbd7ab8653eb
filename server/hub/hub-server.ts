import type { FSWatcher } from 'node:fs';
import { readFileSync, watch } from 'node:fs';
import { createServer } from 'node:http';
import type { IncomingMessage, RequestListener, Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import { WebSocketServer } from 'ws';
import type { Answer, ApprovalMethod, ApprovalService } from '../../shared/approval-calls.js';
import { fail, parseCallParams } from '../../shared/approval-calls.js';
import type { HubMessage, PeerMessage } from '../../shared/wire-protocol.js';
import {
  CLOSE_GOING_AWAY,
  CLOSE_HELLO_TIMEOUT,
  CLOSE_PROTOCOL_MISMATCH,
  CLOSE_UNKNOWN_KEY,
  DEVICE_RECENT,
  HEARTBEAT_MS,
  HelloVersionSchema,
  MAX_FRAME_BYTES,
  PROTOCOL_VERSION,
  PeerMessageSchema,
  ReplyToSchema,
  SUBPROTOCOL,
  firstIssue,
  protocolMismatchReason,
} from '../../shared/wire-protocol.js';
import type { ApprovalEngine } from '../approvals/approval-engine.js';
import { log } from '../log.js';
import { phoneRequestHandler } from '../remote/phone-page.js';
import type { StateDir } from '../state-dir.js';
import { PAIRED_DEVICES_FILE, PAIRED_EXTENSIONS_FILE, RELAY_KEYS_FILE } from '../state-dir.js';
import { DROPPED, HubHandshake, type HandshakePeer, type HubStep } from './hub-handshake.js';
import { HubService } from './hub-service.js';
import { TokenBucket } from './rate-limit.js';
import type { PeerRole } from './upgrade-guard.js';
import { checkUpgrade } from './upgrade-guard.js';

interface HubOptions {
  port: number;
  /** The install key, the pairing code and the paired extensions live there; read on every handshake. */
  state: StateDir;
  heartbeatMs?: number;
  /** A peer must be through its hello and proof within this. Default 3 s (a real peer needs milliseconds). */
  helloTimeoutMs?: number;
  /** Peers that proved a key, at once; one more is closed with 4013. Default 64. */
  maxSockets?: number;
  /** Sockets that have not proved a key yet, at once; one more upgrade gets 503. Default 16. */
  maxUnproven?: number;
  /** An HTTP connection that sends no complete upgrade within this is closed. Default 5 s. */
  idleTimeoutMs?: number;
  /** Where the reviewer page's files are (`dist/server/phone/`); without it the page is answered 404. */
  phoneDir?: string;
  /** A second, HTTPS-only listener (`ELICITLY_REMOTE_LISTEN`) with the same page and sockets, for a phone on the network. */
  remoteListen?: RemoteListen;
}

/** `ELICITLY_REMOTE_LISTEN` with `ELICITLY_REMOTE_CERT` and `ELICITLY_REMOTE_KEY` (PEM file paths). */
export interface RemoteListen {
  host: string;
  port: number;
  certFile: string;
  keyFile: string;
}

/** TCP connections at once, upgraded sockets included: room for every peer, and no more descriptors than that. */
const MAX_CONNECTIONS = 256;

interface Peer extends HandshakePeer {
  socket: WebSocket;
  bucket: TokenBucket;
  /** A relay's calls still running, so a `call.abort` or a closing socket can stop them. */
  calls: Map<string, AbortController>;
}

const REFUSAL_LOG_EVERY_MS = 10_000;

/** Which peers each watched file holds the keys of: a change to it checks theirs again. */
const KEY_FILES: Readonly<Record<string, PeerRole>> = { [PAIRED_EXTENSIONS_FILE]: 'extension', [PAIRED_DEVICES_FILE]: 'device', [RELAY_KEYS_FILE]: 'relay' };

function send(socket: WebSocket, message: HubMessage): void {
  if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(message));
}

const STATUS_TEXT = { 403: 'Forbidden', 429: 'Too Many Requests', 503: 'Service Unavailable' } as const;

/** The one way an upgrade is refused: a bare HTTP answer before any socket exists, and the connection closed. */
function refuseUpgrade(socket: Duplex, status: keyof typeof STATUS_TEXT): void {
  socket.end(`HTTP/1.1 ${status} ${STATUS_TEXT[status]}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}

/** Checks a relay's params against the method's schema, then runs the hub's call. */
async function dispatchCall<M extends ApprovalMethod>(service: ApprovalService, method: M, raw: unknown, signal: AbortSignal): Promise<Answer<unknown>> {
  const params = parseCallParams(method, raw);
  if (!params.success) return fail('invalid', `params.${firstIssue(params.error)}`);
  return service.call(method, params.data, signal);
}

/**
 * The hub's socket server. `listen` only binds the port (the port is the hub lock); nothing is accepted until `attach`
 * hands it the engine, which the caller opens only after binding. `close` follows the order that keeps one writer:
 * stop accepting, let the caller drain and close the store, then drop sockets and release the port.
 */
export class HubServer {
  private readonly peers = new Set<Peer>();
  private engine: ApprovalEngine | undefined;
  private service: HubService | undefined;
  private readonly handshake: HubHandshake;
  private accepting = false;
  private unsubscribe: (() => void) | undefined;
  private readonly heartbeat: NodeJS.Timeout;
  private refusals = { loggedAt: 0, suppressed: 0 };
  /** When an authenticated extension last sent anything: the doctor's "last seen". */
  private lastSeenAt: number | null = null;
  /** Tells of `pair --remove` (another process) at once, so a forgotten extension's socket does not outlive its key. */
  private watcher: FSWatcher | undefined;
  /**
   * How many extensions and devices are paired (null: the file cannot be read), kept as their files change, so an
   * agent's create reads no file. Only while the watcher tells of changes; without it they are read when asked.
   */
  private readonly pairedCount = new Map<PeerRole, number | null>();
  private watching = false;

  private constructor(
    private readonly http: Server,
    /** The optional HTTPS listener: the same page and the same sockets, behind the same checks. */
    private readonly remote: Server | null,
    private readonly wss: WebSocketServer,
    private readonly options: HubOptions,
  ) {
    this.handshake = new HubHandshake({
      port: options.port,
      state: options.state,
      full: () => this.proven() >= (options.maxSockets ?? 64),
      onRefused: (status, reason) => this.logRefusal(status, reason),
    });
    for (const server of remote ? [http, remote] : [http]) {
      server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
        // Nothing in the upgrade path may throw out of this listener: an unreadable state file (a planted link, no
        // descriptor left) must cost that one upgrade a 503, never the hub its process.
        try {
          this.upgrade(req, socket, head);
        } catch (error) {
          log('error', 'an upgrade failed; answered 503', { error: String(error) });
          refuseUpgrade(socket, 503);
        }
      });
    }
    // Sent on a timer and never in answer to one: a peer that answers every heartbeat then sees a handful a minute.
    this.heartbeat = setInterval(() => {
      for (const peer of this.peers) if (peer.stage === 'ready') send(peer.socket, { type: 'heartbeat', t: Date.now() });
    }, options.heartbeatMs ?? HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => undefined);
    if (!this.accepting || !this.engine) {
      // Bound but not ready (opening the store) or shutting down: the peer retries and finds whoever is hub.
      refuseUpgrade(socket, 503);
      return;
    }
    const { port, state } = this.options;
    const verdict = checkUpgrade(req, {
      port,
      remote: () => state.remote(),
      pairedOrigins: () => state.pairedExtensions().map((e) => e.origin),
      pairingBackoffUntil: (origin) => this.handshake.pairingBackoffUntil(origin),
      unproven: () => [...this.peers].filter((p) => p.stage !== 'ready').length,
      maxUnproven: this.options.maxUnproven ?? 16,
      now: Date.now,
    });
    if (!verdict.ok) {
      this.logRefusal(verdict.status, verdict.reason);
      refuseUpgrade(socket, verdict.status);
      return;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => this.accept(ws, verdict));
  }

  /**
   * Binds 127.0.0.1:port; null when another process holds it (that process is the hub). Then the HTTPS listener, when
   * one is configured: a failure there is logged and the hub runs on without it.
   */
  static async listen(options: HubOptions): Promise<HubServer | null> {
    // Everything but the reviewer page (and the upgrades) is answered 426.
    const handler = phoneRequestHandler({ port: options.port, dir: options.phoneDir, remote: () => options.state.remote() });
    const http = bounded(createServer(handler), options);
    const bound = await new Promise<boolean>((resolve, reject) => {
      http.once('error', (error: NodeJS.ErrnoException) => (error.code === 'EADDRINUSE' ? resolve(false) : reject(error)));
      http.listen(options.port, '127.0.0.1', () => resolve(true));
    });
    if (!bound) return null;
    // The hub must not keep a host's server process alive on its own once stdin closes.
    http.unref();
    const remote = options.remoteListen ? await listenRemote(options.remoteListen, handler, options) : null;
    const wss = new WebSocketServer({
      noServer: true,
      maxPayload: MAX_FRAME_BYTES,
      handleProtocols: (protocols) => (protocols.has(SUBPROTOCOL) ? SUBPROTOCOL : false),
    });
    return new HubServer(http, remote, wss, options);
  }

  /** Starts accepting peers, serving them from `engine`; returns the service the hub offers, the engine's calls and its own. */
  attach(engine: ApprovalEngine): ApprovalService {
    this.engine = engine;
    // A phone with the page open sees every request as an extension does: both count as someone who can decide.
    const service = new HubService(engine, {
      connected: () => this.extensionsConnected() + this.devicesConnected(),
      lastSeenAt: () => this.lastSeenAt,
      paired: () => this.pairedReviewers(),
    });
    this.service = service;
    this.unsubscribe = engine.onEvent((event) => {
      for (const peer of this.peers) {
        if (peer.stage !== 'ready') continue;
        // A device never sees the rules: it cannot make or change one.
        if (peer.role === 'extension' || (peer.role === 'device' && event.type !== 'rules')) send(peer.socket, event);
      }
    });
    try {
      this.watcher = watch(this.options.state.path, { persistent: false }, (_event, file) => {
        const role = file === null ? null : KEY_FILES[file];
        if (file === null || role === 'extension') this.recheck('extension');
        if (file === null || role === 'device') this.recheck('device');
        if (file === null || role === 'relay') this.recheck('relay');
      });
      this.watcher.on('error', (error) => {
        this.watching = false;
        log('warn', 'stopped watching the state dir; a removed key is refused at its next decision or call', { error: error.message });
      });
      this.watching = true;
    } catch (error) {
      log('warn', 'cannot watch the state dir; a removed key is refused at its next decision or call', { error: String(error) });
    }
    // Counted once now; the watcher and this hub's own pairings keep the counts from then on.
    this.recheck('extension');
    this.recheck('device');
    this.accepting = true;
    log('info', 'hub listening', { port: this.options.port });
    return service;
  }

  /**
   * Extensions and devices paired, null when either file cannot be read: from the counts kept, read only without a
   * watcher — or when they say nobody, since that answer turns an agent's ask into "nobody can answer" and a pairing
   * another process just wrote (`pair` in a terminal) may not have reached the watcher yet.
   */
  private pairedReviewers(): number | null {
    const count = (role: PeerRole): number | null => (this.watching ? (this.pairedCount.get(role) ?? null) : (this.keysOf(role)?.length ?? null));
    const total = (): number | null => {
      const extensions = count('extension');
      const devices = count('device');
      return extensions === null || devices === null ? null : extensions + devices;
    };
    if (this.watching && total() === 0) {
      this.recheck('extension');
      this.recheck('device');
    }
    return total();
  }

  /**
   * The keys of the peers of one role (the paired extensions, the paired devices, the exported relay keys), read once
   * for every socket they concern; null when the file cannot be trusted, which is said in the log: that role is refused.
   */
  private keysOf(role: PeerRole): { keyId: string; key: string; origin?: string }[] | null {
    const { state } = this.options;
    try {
      return role === 'extension' ? state.pairedExtensions() : role === 'device' ? state.pairedDevices() : state.relayKeys();
    } catch (error) {
      log('error', `cannot read the keys of every ${role}; refusing those that proved one until it can`, { error: String(error) });
      return null;
    }
  }

  /**
   * Is this peer's proven key still there? A removed or changed key, or a file that cannot be read, says no. A relay
   * that proved the install key has nothing to lose here.
   */
  private stillPaired(peer: Peer, keys?: ReturnType<HubServer['keysOf']>): boolean {
    const { proven } = peer;
    if (!proven) return peer.role === 'relay';
    const current = keys === undefined ? this.keysOf(peer.role) : keys;
    return current !== null && current.some((e) => e.keyId === proven.keyId && e.key === proven.key && (peer.role !== 'extension' || e.origin === peer.origin));
  }

  /**
   * Reads the keys of one role again: keeps how many there are, and closes, at once, every socket of this role whose key
   * is gone (`pair --remove`, `key revoke`, a changed key).
   */
  private recheck(role: PeerRole): void {
    const keys = this.keysOf(role);
    this.pairedCount.set(role, keys === null ? null : keys.length);
    for (const peer of this.peers) if (peer.role === role && peer.stage === 'ready' && !this.stillPaired(peer, keys)) this.dropUnpaired(peer);
  }

  /** It hears nothing more from this hub (no event, no heartbeat) and is told to pair again (or export a new key). */
  private dropUnpaired(peer: Peer): void {
    log('info', `closed the socket of a ${peer.role} whose key was removed`, { origin: peer.origin, keyId: peer.proven?.keyId });
    peer.stage = 'busy';
    for (const controller of peer.calls.values()) controller.abort();
    peer.socket.close(CLOSE_UNKNOWN_KEY, DROPPED[peer.role]);
  }

  private proven(): number {
    return [...this.peers].filter((p) => p.stage === 'ready').length;
  }

  extensionsConnected(): number {
    return [...this.peers].filter((p) => p.role === 'extension' && p.stage === 'ready').length;
  }

  /** Browsers on the reviewer page (phones) connected now. */
  devicesConnected(): number {
    return [...this.peers].filter((p) => p.role === 'device' && p.stage === 'ready').length;
  }

  /** Agent processes, hooks and commands connected now: the foreground `hub` command idles out only with none. */
  relaysConnected(): number {
    return [...this.peers].filter((p) => p.role === 'relay' && p.stage === 'ready').length;
  }

  /** New sockets get 503 from now on; the peers already connected stay until `close`. */
  stopAccepting(): void {
    this.accepting = false;
  }

  async close(): Promise<void> {
    this.accepting = false;
    clearInterval(this.heartbeat);
    this.watcher?.close();
    this.unsubscribe?.();
    for (const peer of this.peers) {
      for (const controller of peer.calls.values()) controller.abort();
      peer.socket.close(CLOSE_GOING_AWAY, 'hub closing');
    }
    // A peer that does not finish the closing handshake promptly is cut off: the port must be released.
    const cutoff = setTimeout(() => {
      for (const peer of this.peers) peer.socket.terminate();
    }, 500);
    this.wss.close();
    await Promise.all([this.http, ...(this.remote ? [this.remote] : [])].map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
    clearTimeout(cutoff);
    this.http.closeAllConnections();
    this.remote?.closeAllConnections();
  }

  private accept(socket: WebSocket, verdict: { role: PeerRole; origin: string | null; pairingOnly: boolean; pairing: boolean }): void {
    const { role, origin, pairingOnly, pairing } = verdict;
    const peer: Peer = { socket, role, origin, pairingOnly, pairing, stage: 'hello', bucket: new TokenBucket(), calls: new Map() };
    this.peers.add(peer);
    const helloTimer = setTimeout(() => {
      if (peer.stage !== 'ready') socket.close(CLOSE_HELLO_TIMEOUT, 'no hello');
    }, this.options.helloTimeoutMs ?? 3000);
    socket.on('message', (data, isBinary) => this.receive(peer, isBinary ? null : data.toString()));
    socket.on('close', () => {
      clearTimeout(helloTimer);
      this.peers.delete(peer);
      for (const controller of peer.calls.values()) controller.abort();
    });
    socket.on('error', (error) => log('debug', 'peer socket error', { error: error.message }));
  }

  /** Refused upgrades are logged at most once per 10 s, with how many were not: a flood must not flood the log. */
  private logRefusal(status: number, reason: string): void {
    const now = Date.now();
    if (now - this.refusals.loggedAt < REFUSAL_LOG_EVERY_MS) {
      this.refusals.suppressed += 1;
      return;
    }
    log('warn', 'refused a hub connection', { status, reason, ...(this.refusals.suppressed > 0 ? { alsoRefusedSinceLastLine: this.refusals.suppressed } : {}) });
    this.refusals = { loggedAt: now, suppressed: 0 };
  }

  private receive(peer: Peer, text: string | null): void {
    const { socket } = peer;
    if (!peer.bucket.take()) {
      send(socket, { type: 'error', code: 'rate_limited', message: 'too many messages; slow down' });
      return;
    }
    if (text === null) {
      send(socket, { type: 'error', code: 'invalid_message', message: 'binary frames are not accepted' });
      return;
    }
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      send(socket, { type: 'error', code: 'invalid_message', message: 'not JSON' });
      return;
    }
    // The version is read before the rest of the hello, so a peer of any version learns why it is refused.
    const hello = HelloVersionSchema.safeParse(raw);
    if (hello.success && hello.data.protocol !== PROTOCOL_VERSION) {
      log('warn', 'closed a peer speaking another protocol', { theirs: hello.data.protocol, ours: PROTOCOL_VERSION, role: peer.role });
      socket.close(CLOSE_PROTOCOL_MISMATCH, protocolMismatchReason(PROTOCOL_VERSION));
      return;
    }
    const parsed = PeerMessageSchema.safeParse(raw);
    if (!parsed.success) {
      this.refuse(peer, raw, firstIssue(parsed.error));
      return;
    }
    const message = parsed.data;
    if (peer.stage !== 'ready' && message.type !== 'hello' && message.type !== 'auth') {
      send(socket, { type: 'error', code: 'not_hello', message: 'send hello and prove your key first' });
      return;
    }
    this.dispatch(peer, message).catch((error: unknown) => {
      log('error', 'a hub message failed', { type: message.type, error: String(error) });
      send(socket, { type: 'error', code: 'invalid_message', message: `the hub could not process this ${message.type}` });
    });
  }

  /** One step of the handshake (`hub-handshake.ts`) carried out on the socket. */
  private shake(peer: Peer, engine: ApprovalEngine, step: HubStep): void {
    if ('close' in step) return peer.socket.close(step.close, step.reason);
    if ('send' in step) return send(peer.socket, step.send);
    if (step.paired) send(peer.socket, step.paired);
    peer.stage = 'ready';
    if (peer.role !== 'relay') this.lastSeenAt = Date.now();
    // Every (re)connect gets every pending request: delivery survives dropped sockets and restarted workers.
    // The person's rules go to their extensions only: a relay lists them with the `rules` call when it must. A device
    // keeps no history of its own, so it gets the last ended requests too.
    const reviewer = peer.role !== 'relay';
    send(peer.socket, {
      type: 'welcome',
      protocol: PROTOCOL_VERSION,
      hubPid: process.pid,
      pending: reviewer ? engine.pendingViews() : [],
      rules: peer.role === 'extension' ? engine.ruleList() : [],
      ...(peer.role === 'device' ? { recent: engine.recentViews(DEVICE_RECENT) } : {}),
    });
    // A new key: counted at once, without waiting for the watcher.
    if (step.paired) this.recheck(peer.role);
  }

  /** A frame that failed its schema is answered with the id it carried, when it carried one the peer waits on. */
  private refuse(peer: Peer, raw: unknown, reason: string): void {
    const replyTo = ReplyToSchema.safeParse(raw);
    if (replyTo.success && replyTo.data.type === 'decide' && peer.role !== 'relay') {
      const { elicitationId, idempotencyKey } = replyTo.data;
      send(peer.socket, {
        type: 'decision.result',
        elicitationId,
        idempotencyKey,
        ok: false,
        reason: 'invalid',
        issues: [{ path: reason.split(':')[0] ?? '(message)', rule: 'invalid_message', message: reason }],
      });
    } else if (replyTo.success && (replyTo.data.type === 'rule.save' || replyTo.data.type === 'rule.delete') && peer.role === 'extension') {
      send(peer.socket, { type: 'rule.result', changeId: replyTo.data.changeId, ok: false, issues: [{ path: reason.split(':')[0] ?? '(message)', rule: 'invalid_message', message: reason }] });
    } else if (replyTo.success && replyTo.data.type === 'call' && peer.role === 'relay') {
      send(peer.socket, { type: 'call.result', callId: replyTo.data.callId, ok: false, error: { code: 'invalid', message: reason } });
    } else {
      send(peer.socket, { type: 'error', code: 'invalid_message', message: reason });
    }
  }

  /** A rule saved or deleted in the extension's Rules view, answered once it is on disk (every extension hears `rules`). */
  private async ruleChange(engine: ApprovalEngine, message: Extract<PeerMessage, { type: 'rule.save' | 'rule.delete' }>): Promise<HubMessage> {
    const { changeId } = message;
    const unavailable: HubMessage = { type: 'rule.result', changeId, ok: false, issues: [{ path: '(hub)', rule: 'unavailable', message: 'the hub could not record this change; try again in a moment' }] };
    try {
      if (message.type === 'rule.delete') {
        const removed = await engine.deleteRule(message.id);
        return removed === 'unavailable' ? unavailable : { type: 'rule.result', changeId, ok: true, id: message.id };
      }
      const saved = await engine.saveRule(message.rule, message.id === undefined ? {} : { id: message.id });
      if (saved.ok) return { type: 'rule.result', changeId, ok: true, id: saved.rule.id };
      return saved.reason === 'unavailable' ? unavailable : { type: 'rule.result', changeId, ok: false, issues: saved.issues };
    } catch (error) {
      log('error', 'a rule change failed', { type: message.type, error: String(error) });
      return unavailable;
    }
  }

  private async dispatch(peer: Peer, message: PeerMessage): Promise<void> {
    const { engine, service } = this;
    if (!engine || !service) return;
    switch (message.type) {
      case 'hello':
        this.shake(peer, engine, await this.handshake.hello(peer, message));
        return;
      case 'auth':
        this.shake(peer, engine, await this.handshake.auth(peer, message.proof));
        return;
      case 'heartbeat':
        return;
      case 'decide':
        if (peer.role === 'relay') break;
        // The key is checked again for every decision: one removed since the handshake decides nothing, whatever the
        // watcher has or has not told yet. The socket closes (4003) and the decision stays queued in the extension.
        if (!this.stillPaired(peer)) {
          this.dropUnpaired(peer);
          return;
        }
        send(peer.socket, await engine.decide(message, peer.role === 'device' ? 'phone' : 'extension').catch((error: unknown) => {
          log('error', 'a decision failed', { error: String(error) });
          return { type: 'decision.result' as const, elicitationId: message.elicitationId, idempotencyKey: message.idempotencyKey, ok: false, reason: 'unavailable' as const };
        }));
        return;
      case 'rule.save':
      case 'rule.delete': {
        // Rules are the person's: only a paired extension's socket makes or deletes one, never an agent's relay.
        if (peer.role !== 'extension') break;
        if (!this.stillPaired(peer)) {
          this.dropUnpaired(peer);
          return;
        }
        send(peer.socket, await this.ruleChange(engine, message));
        return;
      }
      case 'call': {
        if (peer.role !== 'relay') break;
        // An exported key revoked since the handshake makes no more calls, whatever the watcher has told yet.
        if (!this.stillPaired(peer)) {
          this.dropUnpaired(peer);
          return;
        }
        const controller = new AbortController();
        peer.calls.set(message.callId, controller);
        const answer = await dispatchCall(service, message.method, message.params, controller.signal).catch((error: unknown) => {
          log('error', 'a relayed call failed', { method: message.method, error: String(error) });
          return fail('unavailable', 'the hub could not process this call');
        });
        peer.calls.delete(message.callId);
        send(peer.socket, answer.ok ? { type: 'call.result', callId: message.callId, ok: true, value: answer.value } : { type: 'call.result', callId: message.callId, ok: false, error: answer.error });
        return;
      }
      case 'call.abort':
        if (peer.role !== 'relay') break;
        peer.calls.get(message.callId)?.abort();
        return;
    }
    send(peer.socket, { type: 'error', code: 'forbidden', message: `${message.type} is not for a ${peer.role}` });
  }
}

/**
 * Closes a connection that never completes an upgrade or a request, and holds a bounded number of them: idle
 * connections held open by anyone would otherwise use up the process's descriptors.
 */
function bounded<S extends Server>(server: S, options: HubOptions): S {
  const idleMs = options.idleTimeoutMs ?? 5000;
  server.setTimeout(idleMs);
  server.headersTimeout = idleMs;
  server.requestTimeout = idleMs;
  server.keepAliveTimeout = Math.min(idleMs, 5000);
  server.maxConnections = MAX_CONNECTIONS;
  return server;
}

/** The HTTPS listener of `ELICITLY_REMOTE_LISTEN`, or null (logged) when its certificate or its address fails. */
async function listenRemote(listen: RemoteListen, handler: RequestListener, options: HubOptions): Promise<Server | null> {
  const where = `${listen.host}:${listen.port}`;
  let server: Server;
  try {
    server = bounded(createHttpsServer({ cert: readFileSync(listen.certFile), key: readFileSync(listen.keyFile) }, handler), options);
  } catch (error) {
    log('error', 'ELICITLY_REMOTE_LISTEN: cannot use the certificate or its key; the hub runs without the HTTPS listener', { where, error: String(error) });
    return null;
  }
  // A TLS handshake that fails (a scanner, a client that does not trust the certificate) is that connection's business.
  server.on('tlsClientError', (error) => log('debug', 'a TLS handshake on the HTTPS listener failed', { error: error.message }));
  const bound = await new Promise<Error | null>((resolve) => {
    server.once('error', resolve);
    server.listen(listen.port, listen.host, () => resolve(null));
  });
  if (bound) {
    log('error', 'ELICITLY_REMOTE_LISTEN: cannot listen; the hub runs without the HTTPS listener', { where, error: bound.message });
    return null;
  }
  server.on('error', (error) => log('warn', 'the HTTPS listener failed', { where, error: error.message }));
  server.unref();
  log('info', 'HTTPS listener for the reviewer page', { where });
  return server;
}

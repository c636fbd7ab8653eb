import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { IncomingMessage, RequestListener, Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import { WebSocketServer } from 'ws';
import type { Answer, ApprovalService, Caller, Grant, HubNoticeName, Params, Result, Welcome } from '../../shared/peer-calls.js';
import { DEVICE_RECENT, HUB_NOTICES, fail } from '../../shared/peer-calls.js';
import type { AnswerFrame, CallFrame } from '../../shared/wire-protocol.js';
import {
  CLOSE_GOING_AWAY,
  CLOSE_HELLO_TIMEOUT,
  CLOSE_PROTOCOL_MISMATCH,
  CLOSE_REMOTE_OFF,
  CLOSE_UNKNOWN_KEY,
  HEARTBEAT_MS,
  MAX_FRAME_BYTES,
  PROTOCOL_VERSION,
  PeerFrameSchema,
  SUBPROTOCOL,
  errorFrame,
  firstIssue,
  helloProtocol,
  parsePeerNotice,
  protocolMismatchReason,
} from '../../shared/wire-protocol.js';
import type { ApprovalEngine, DecidingReviewer, EngineEvent } from '../approvals/approval-engine.js';
import { sameReviewer } from '../../shared/reviewers.js';
import { reviewerMayDecide } from '../../shared/routing.js';
import type { RequestView } from '../../shared/review-request.js';
import { log } from '../log.js';
import { allowedOrigins, type Listener } from '../remote-config.js';
import { phoneRequestHandler } from '../remote/phone-page.js';
import { DEVICES, EXTENSIONS, RELAY_KEYS, type Directory } from '../directory.js';
import type { StateDir } from '../state-dir.js';
import { REMOTE_FILE } from '../state-dir.js';
import { DROPPED, HubHandshake, type HandshakePeer, type HubStep } from './hub-handshake.js';
import { devicePush, serviceHandlers, type ServiceContext } from './hub-service.js';
import { ANSWERED, LOCAL, PeerDispatcher, UNPROVEN, callersOf, type Handlers, type Principal } from './peer-dispatcher.js';
import { TokenBucket } from './rate-limit.js';
import type { PeerRole } from './upgrade-guard.js';
import { checkUpgrade } from './upgrade-guard.js';

interface HubOptions {
  port: number;
  /**
   * The install key and the reviewer page's settings; on one person's hub also the directory (the keys every peer
   * proves), unless `attach` is handed another (a team's database).
   */
  state: StateDir;
  heartbeatMs?: number;
  /** A peer must be through its hello and proof within this. Default 3 s (a real peer needs milliseconds). */
  helloTimeoutMs?: number;
  /** Peers that proved a key, at once; one more is closed with 1013. Default 64. */
  maxSockets?: number;
  /** Sockets that have not proved a key yet, at once, per listener; one more upgrade gets 503. Default 16. */
  maxUnproven?: number;
  /** An HTTP connection that sends no complete upgrade within this is closed. Default 5 s. */
  idleTimeoutMs?: number;
  /** Where the reviewer page's files are (`dist/server/phone/`); without it the page is answered 404. */
  phoneDir?: string;
  /** A second, HTTPS-only listener (`ELICITLY_REMOTE_LISTEN`) with the same page, for a phone on the network. */
  remoteListen?: RemoteListen;
  /** Push services besides the browsers' own a device may subscribe with (`ELICITLY_PUSH_SERVICES`). */
  pushServices?: readonly string[];
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
  /** The connection under the socket: corked while a turn of the event loop sends (`out`). */
  wire: Duplex;
  corked: boolean;
  /**
   * A reviewer's groups as they were when it proved its key (a team's routing shows a routed request only to its
   * groups); null: a socket that is no named reviewer's. A change of groups applies at the next connection.
   */
  groups: readonly string[] | null;
  /** The listener it came in on: each has a room of its own for sockets still proving a key. */
  listener: Listener;
  bucket: TokenBucket;
  /** Who it proved to be: `unproven` until its `auth` is through. */
  principal: Principal;
  /** Its calls still running, by id, so an `abort` or a closing socket can stop them. */
  calls: Map<string, AbortController>;
  /** Requests it filed with `bound`: withdrawn when it closes. */
  bound: Set<string>;
  /** The hub closed it (or is closing it): it holds no place in any room and hears nothing more. */
  leaving: boolean;
}

/** What the hub's handlers are told of a call: from a socket, the socket too (the hub's own tools have none). */
interface SocketContext extends ServiceContext {
  socket?: {
    peer: Peer;
    /** Answers this call on the socket now (the handshake's welcome goes out in the same step that makes the peer ready). */
    reply(result: unknown): void;
  };
}

const REFUSAL_LOG_EVERY_MS = 10_000;

/** Which peers each directory document holds the keys of: a change to it checks theirs again. */
const KEY_DOCS: Readonly<Record<string, PeerRole>> = { [EXTENSIONS.name]: 'extension', [DEVICES.name]: 'device', [RELAY_KEYS.name]: 'relay' };
const KEY_DOC_OF: Readonly<Record<PeerRole, string>> = { extension: EXTENSIONS.name, device: DEVICES.name, relay: RELAY_KEYS.name };

function send(socket: WebSocket, frame: AnswerFrame | { method: HubNoticeName; params: unknown }): void {
  if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(frame));
}

const STATUS_TEXT = { 403: 'Forbidden', 429: 'Too Many Requests', 503: 'Service Unavailable' } as const;

/** The one way an upgrade is refused: a bare HTTP answer before any socket exists, and the connection closed. */
function refuseUpgrade(socket: Duplex, status: keyof typeof STATUS_TEXT): void {
  socket.end(`HTTP/1.1 ${status} ${STATUS_TEXT[status]}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}

/**
 * The hub's socket server. `listen` only binds the port (the port is the hub lock); nothing is accepted until `attach`
 * hands it the engine, which the caller opens only after binding. `close` follows the order that keeps one writer:
 * stop accepting, let the caller drain and close the store, then drop sockets and release the port.
 */
export class HubServer {
  private readonly peers = new Set<Peer>();
  private engine: ApprovalEngine | undefined;
  private dispatcher: PeerDispatcher<SocketContext> | undefined;
  private readonly handshake: HubHandshake;
  private accepting = false;
  private unsubscribe: (() => void) | undefined;
  private readonly heartbeat: NodeJS.Timeout;
  private refusals = { loggedAt: 0, suppressed: 0 };
  /** When an authenticated reviewer last sent anything: the doctor's "last seen". */
  private lastSeenAt: number | null = null;
  /** The keys every peer proves and the reviewers they belong to: set by `attach`. */
  private directory: Directory | undefined;
  /** Stop telling of `pair --remove`, `key revoke` and `remote disable` (other processes, other hubs). */
  private readonly unwatch: (() => void)[] = [];
  /**
   * How many extensions and devices are paired (null: the file cannot be read), kept as their files change, so an
   * agent's create reads no file. Only while the watcher tells of changes; without it they are read when asked.
   */
  private readonly pairedCount = new Map<PeerRole, number | null>();
  /** Each role's key document as it was when last read (`Directory.stamp`). */
  private readonly keyStamps = new Map<PeerRole, string>();
  private watching = false;

  private constructor(
    private readonly http: Server,
    /** The optional HTTPS listener: the same page, for devices only, behind the same checks and a room of its own. */
    private readonly remote: Server | null,
    private readonly wss: WebSocketServer,
    private readonly options: HubOptions,
  ) {
    this.handshake = new HubHandshake({
      port: options.port,
      installKey: () => options.state.relayKey(),
      directory: () => this.keys(),
      full: () => this.proven() >= (options.maxSockets ?? 64),
      onRefused: (status, reason) => this.logRefusal(status, reason),
    });
    const listeners: [Server, Listener][] = remote ? [[http, 'loopback'], [remote, 'network']] : [[http, 'loopback']];
    for (const [server, listener] of listeners) {
      server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
        // Nothing in the upgrade path may throw out of this listener: an unreadable state file (a planted link, no
        // descriptor left) must cost that one upgrade a 503, never the hub its process.
        try {
          this.upgrade(req, socket, head, listener);
        } catch (error) {
          log('error', 'an upgrade failed; answered 503', { error: String(error) });
          refuseUpgrade(socket, 503);
        }
      });
    }
    // Sent on a timer and never in answer to one: a peer that answers every heartbeat then sees a handful a minute.
    this.heartbeat = setInterval(() => this.notify({ method: 'heartbeat', params: { t: Date.now() } }), options.heartbeatMs ?? HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, listener: Listener): void {
    socket.on('error', () => undefined);
    if (!this.accepting || !this.engine) {
      // Bound but not ready (opening the store) or shutting down: the peer retries and finds whoever is hub.
      refuseUpgrade(socket, 503);
      return;
    }
    const { port, state } = this.options;
    const verdict = checkUpgrade(req, {
      port,
      listener,
      remote: () => state.remote(),
      pairedOrigins: () => this.keys().pairedExtensions().map((e) => e.origin),
      pairingBackoffUntil: (origin) => this.handshake.pairingBackoffUntil(origin),
      unproven: () => this.unproven(listener),
      maxUnproven: this.options.maxUnproven ?? 16,
      now: Date.now,
    });
    if (!verdict.ok) {
      this.logRefusal(verdict.status, verdict.reason);
      refuseUpgrade(socket, verdict.status);
      return;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => this.accept(ws, socket, listener, verdict));
  }

  /**
   * Binds 127.0.0.1:port; null when another process holds it (that process is the hub). Then the HTTPS listener, when
   * one is configured: a failure there is logged and the hub runs on without it.
   */
  static async listen(options: HubOptions): Promise<HubServer | null> {
    // Everything but the reviewer page (and the upgrades) is answered 426.
    const handler = (listener: Listener) => phoneRequestHandler({ port: options.port, dir: options.phoneDir, remote: () => options.state.remote(), listener });
    const http = bounded(createServer(handler('loopback')), options);
    const bound = await new Promise<boolean>((resolve, reject) => {
      http.once('error', (error: NodeJS.ErrnoException) => (error.code === 'EADDRINUSE' ? resolve(false) : reject(error)));
      http.listen(options.port, '127.0.0.1', () => resolve(true));
    });
    if (!bound) return null;
    // The hub must not keep a host's server process alive on its own once stdin closes.
    http.unref();
    const remote = options.remoteListen ? await listenRemote(options.remoteListen, handler('network'), options) : null;
    const wss = new WebSocketServer({
      noServer: true,
      maxPayload: MAX_FRAME_BYTES,
      handleProtocols: (protocols) => (protocols.has(SUBPROTOCOL) ? SUBPROTOCOL : false),
    });
    return new HubServer(http, remote, wss, options);
  }

  /**
   * Starts accepting peers, serving them from `engine`. Returns the calls of the hub's own tools, which go through the
   * same dispatcher as a local relay's, as the principal a local relay is.
   */
  attach(engine: ApprovalEngine, directory: Directory = this.options.state): ApprovalService {
    this.engine = engine;
    this.directory = directory;
    // A phone with the page open sees every request as an extension does: both count as someone who can decide.
    const service = serviceHandlers(engine, {
      connected: () => this.connected('extension') + this.connected('device'),
      lastSeenAt: () => this.lastSeenAt,
      paired: () => this.pairedReviewers(),
      devices: () => (this.watching ? (this.pairedCount.get('device') ?? null) : (this.keysOf('device')?.length ?? null)),
      reviewerOf: (keyId) => this.reviewerOf(keyId),
      team: () => directory.reviewers().length > 0,
    }, devicePush(directory, this.options.pushServices ?? []));
    const handlers: Handlers<SocketContext> = {
      ...service,
      hello: async (params, { socket }) => {
        if (!socket) return fail('forbidden', 'the handshake is a socket\'s');
        return this.step(socket.peer, await this.handshake.hello(socket.peer, params));
      },
      auth: async (params, { socket }) => {
        if (!socket) return fail('forbidden', 'the handshake is a socket\'s');
        const step = await this.handshake.auth(socket.peer, params.proof);
        if (!('answer' in step)) return this.step(socket.peer, step);
        this.welcome(socket.peer, socket.reply, step.answer.principal, step.answer.paired);
        return ANSWERED;
      },
    };
    const dispatcher = new PeerDispatcher(handlers);
    this.dispatcher = dispatcher;
    this.unsubscribe = engine.onEvent((event) => this.notify(event));
    this.watch(directory);
    // Counted once now (and the ledger told of any key changed while no hub ran); the watcher and this hub's own
    // pairings keep the counts from then on.
    this.recheck('extension');
    this.recheck('device');
    this.recheck('relay');
    this.accepting = true;
    log('info', 'hub listening', { port: this.options.port });
    // The hub's own tools: no socket, nothing to bind a request to.
    return {
      call: <M extends Parameters<ApprovalService['call']>[0]>(method: M, params: Params<M>, signal?: AbortSignal): Promise<Answer<Result<M>>> =>
        dispatcher.call(method, params, LOCAL, (caller) => ({ principal: LOCAL, caller, ...(signal ? { signal } : {}) })),
    };
  }

  /** A handshake step that did not welcome: a refusal answered on the socket, or the socket closed. */
  private step<T>(peer: Peer, step: HubStep<T>): Answer<T> | typeof ANSWERED {
    if ('answer' in step) return { ok: true, value: step.answer };
    if ('refuse' in step) return { ok: false, error: step.refuse };
    this.drop(peer, step.close, step.reason);
    return ANSWERED;
  }

  /**
   * The peer proved its key: in one synchronous step it becomes `principal`, is marked ready and gets the welcome (with
   * every pending request), so no event can fall between the list it is given and the first event it hears.
   */
  private welcome(peer: Peer, reply: (result: unknown) => void, principal: Principal, paired: NonNullable<Result<'auth'>['paired']> | undefined): void {
    const engine = this.engine;
    if (!engine) return;
    peer.principal = principal;
    peer.stage = 'ready';
    const reviewer = principal.role === 'extension' || principal.role === 'device';
    if (reviewer) this.lastSeenAt = Date.now();
    peer.groups = principal.role === 'extension' || principal.role === 'device' ? (this.reviewerOf(principal.keyId)?.groups ?? null) : null;
    const theirs = (view: RequestView) => reviewerMayDecide(engine.routeOf(view.elicitationId), peer.groups);
    // Every (re)connect gets every pending request: delivery survives dropped sockets and restarted workers. The
    // person's rules go to their extensions only; a device keeps no history of its own, so it gets the last ended ones.
    const welcome: Welcome = {
      protocol: PROTOCOL_VERSION,
      hubPid: process.pid,
      pending: reviewer ? engine.pendingViews().filter(theirs) : [],
      rules: principal.role === 'extension' ? engine.ruleList() : [],
      ...(principal.role === 'device' ? { recent: engine.recentViews(DEVICE_RECENT).filter(theirs) } : {}),
    };
    reply({ ...(paired ? { paired } : {}), welcome } satisfies Result<'auth'>);
    // A new key: counted at once, without waiting for the watcher.
    if (paired) this.recheck(peer.role);
  }

  /**
   * Sends a notice to every ready peer it is for (`HUB_NOTICES[…].to`); news of a request the team routed goes only to
   * the reviewers of its groups.
   */
  private notify(event: EngineEvent | { method: 'heartbeat'; params: { t: number } }): void {
    const to: readonly Caller[] = HUB_NOTICES[event.method].to;
    const text = JSON.stringify(event);
    const id = event.method === 'request.created' ? event.params.request.elicitationId : event.method === 'request.removed' || event.method === 'request.receipt' ? event.params.elicitationId : null;
    const route = id === null ? undefined : this.engine?.routeOf(id);
    for (const peer of this.peers) {
      if (peer.stage !== 'ready' || peer.leaving) continue;
      if (route !== undefined && !reviewerMayDecide(route, peer.groups)) continue;
      if (callersOf(peer.principal).some((caller) => to.includes(caller))) this.out(peer, text);
    }
  }

  /** The reviewer a paired key is for, with their groups (`reviewer add --group`), on a team's hub. */
  private reviewerOf(keyId: string): DecidingReviewer | undefined {
    const directory = this.keys();
    const name = directory.reviewerOf(keyId);
    if (name === undefined) return undefined;
    return { name, groups: directory.reviewers().find((r) => sameReviewer(r.name, name))?.groups ?? [] };
  }

  /**
   * Watches the directory, and the state dir for the phone page's settings (one watcher when the directory is the state
   * dir): a removed key, a revoked relay key or a disabled phone page closes those sockets at once.
   */
  private watch(directory: Directory): void {
    const changed = (name: string | null) => {
      const role = name === null ? null : KEY_DOCS[name];
      if (name === null || role === 'extension') this.recheck('extension');
      if (name === null || role === 'device' || name === REMOTE_FILE) this.recheck('device');
      if (name === null || role === 'relay') this.recheck('relay');
    };
    const sources: Pick<Directory, 'watch'>[] = directory === this.options.state ? [directory] : [directory, this.options.state];
    this.watching = true;
    for (const source of sources) {
      // A directory no longer watched: from then on the counts are read when asked, and every key is checked again.
      const stop = source.watch(changed, () => {
        if (source === directory) this.watching = false;
        changed(null);
      });
      if (stop) this.unwatch.push(stop);
      else if (source === directory) this.watching = false;
    }
  }

  /** The directory `attach` was given: nothing calls this before, since every socket is refused until then. */
  private keys(): Directory {
    if (!this.directory) throw new Error('the hub has no directory before attach');
    return this.directory;
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
      // A stat each, not a read: with nobody paired this is every create.
      for (const role of ['extension', 'device'] as const) if (this.keys().stamp(KEY_DOC_OF[role]) !== this.keyStamps.get(role)) this.recheck(role);
    }
    return total();
  }

  /**
   * The keys of the peers of one role (the paired extensions, the paired devices, the exported relay keys), read once
   * for every socket they concern; null when the file cannot be trusted, which is said in the log: that role is refused.
   */
  private keysOf(role: PeerRole): { keyId: string; key: string; origin?: string; name?: string; allow?: readonly Grant[] }[] | null {
    const directory = this.keys();
    try {
      return role === 'extension' ? directory.pairedExtensions() : role === 'device' ? directory.pairedDevices() : directory.relayKeys();
    } catch (error) {
      log('error', `cannot read the keys of every ${role}; refusing those that proved one until it can`, { error: String(error) });
      return null;
    }
  }

  /**
   * May this proven peer still call? Its key must still be there as it proved it (and, for an extension or a device,
   * from the origin it was paired on); a device's origin must still be one the enabled phone page is allowed at. A
   * remote key's grants are read again with it. The install key has nothing to lose here. Null: yes; else the close.
   */
  private refusal(peer: Peer, keys?: ReturnType<HubServer['keysOf']>): { close: number; reason: string } | null {
    const { principal, proven } = peer;
    if (principal.role === 'local' || principal.role === 'unproven') return null;
    const current = keys === undefined ? this.keysOf(peer.role) : keys;
    const entry = current?.find((e) => e.keyId === proven?.keyId && e.key === proven.key);
    const sameOrigin = principal.role === 'remote' || entry?.origin === peer.origin;
    if (!entry || !sameOrigin) return { close: CLOSE_UNKNOWN_KEY, reason: DROPPED[peer.role] };
    if (principal.role === 'remote') peer.principal = { ...principal, grants: entry.allow ?? [] };
    if (principal.role === 'device') {
      const { state, port } = this.options;
      if (!allowedOrigins(state.remote(), port, peer.listener).includes(principal.origin)) {
        return { close: CLOSE_REMOTE_OFF, reason: 'the phone page is turned off on this hub, or this origin is no longer allowed (elicitly-companion remote enable)' };
      }
    }
    return null;
  }

  /**
   * Reads the keys of one role again: keeps how many there are, and closes, at once, every socket of this role that may
   * no longer call (`pair --remove`, `key revoke`, a changed key, `remote disable` for devices).
   */
  private recheck(role: PeerRole): void {
    // Taken before the read: a write between the two is seen as a change at the next look.
    this.keyStamps.set(role, this.keys().stamp(KEY_DOC_OF[role]));
    const keys = this.keysOf(role);
    if (role !== 'relay') this.pairedCount.set(role, keys === null ? null : keys.length);
    // The ledger records every key that appeared or went: the hub reads them here whatever changed them.
    if (keys !== null) {
      void this.engine?.recordKeys(role, keys.map((k) => ({
        keyId: k.keyId,
        fingerprint: createHash('sha256').update(k.key).digest('hex'),
        ...(k.origin === undefined ? {} : { origin: k.origin }),
        ...(k.name === undefined ? {} : { name: k.name }),
        ...(k.allow === undefined ? {} : { grants: k.allow }),
      })));
    }
    for (const peer of this.peers) {
      if (peer.role !== role || peer.stage !== 'ready' || peer.leaving) continue;
      const refused = this.refusal(peer, keys);
      if (refused) this.dropRefused(peer, refused);
    }
  }

  /** It hears nothing more from this hub (no event, no heartbeat) and is told why. */
  private dropRefused(peer: Peer, refused: { close: number; reason: string }): void {
    log('info', `closed the socket of a ${peer.role} that may no longer call`, { origin: peer.origin, keyId: peer.proven?.keyId, code: refused.close });
    this.drop(peer, refused.close, refused.reason);
  }

  /**
   * The hub closes a socket: from this moment it holds no place in any room and hears nothing, its calls are stopped,
   * and it is destroyed right after its close frame is written, never left waiting for the peer to answer the close.
   */
  private drop(peer: Peer, code: number, reason: string): void {
    if (peer.leaving) return;
    peer.leaving = true;
    for (const controller of peer.calls.values()) controller.abort();
    peer.socket.close(code, reason);
    setImmediate(() => peer.socket.terminate());
  }

  private proven(): number {
    return [...this.peers].filter((p) => p.stage === 'ready' && !p.leaving).length;
  }

  /** Sockets still proving a key on this listener: its room. */
  private unproven(listener: Listener): number {
    return [...this.peers].filter((p) => p.listener === listener && p.stage !== 'ready' && !p.leaving).length;
  }

  private connected(role: Principal['role']): number {
    return [...this.peers].filter((p) => p.principal.role === role && p.stage === 'ready' && !p.leaving).length;
  }

  extensionsConnected(): number {
    return this.connected('extension');
  }

  /** Browsers on the reviewer page (phones) connected now. */
  devicesConnected(): number {
    return this.connected('device');
  }

  /** Agent processes, hooks and commands connected now: the foreground `hub` command idles out only with none. */
  relaysConnected(): number {
    return this.connected('local') + this.connected('remote');
  }

  /** New sockets get 503 from now on; the peers already connected stay until `close`. */
  stopAccepting(): void {
    this.accepting = false;
  }

  async close(): Promise<void> {
    this.accepting = false;
    clearInterval(this.heartbeat);
    for (const stop of this.unwatch.splice(0)) stop();
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

  private accept(socket: WebSocket, wire: Duplex, listener: Listener, verdict: { role: PeerRole; origin: string | null; pairingOnly: boolean; pairing: boolean }): void {
    const { role, origin, pairingOnly, pairing } = verdict;
    const peer: Peer = { socket, wire, corked: false, groups: null, listener, role, origin, pairingOnly, pairing, stage: 'hello', bucket: new TokenBucket(), principal: UNPROVEN, calls: new Map(), bound: new Set(), leaving: false };
    this.peers.add(peer);
    // The handshake's window: when it ends the socket's place in its room is freed at once (4008, then destroyed).
    const helloTimer = setTimeout(() => {
      if (peer.stage !== 'ready') this.drop(peer, CLOSE_HELLO_TIMEOUT, 'no hello');
    }, this.options.helloTimeoutMs ?? 3000);
    socket.on('message', (data, isBinary) => this.receive(peer, isBinary ? null : data.toString()));
    socket.on('close', () => {
      clearTimeout(helloTimer);
      this.peers.delete(peer);
      for (const controller of peer.calls.values()) controller.abort();
      // Its asker is gone (the hook's process ended, by whatever signal): what it filed to live with it goes too.
      if (peer.bound.size > 0) void this.engine?.withdrawBound(peer.bound).catch((error: unknown) => log('error', 'withdrawing the requests of a closed connection failed', { error: String(error) }));
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
    if (peer.leaving) return;
    // Past its budget a peer gets an answer only to a call it can tell by its id: nothing else costs the hub a frame.
    const allowed = peer.bucket.take();
    if (text === null) {
      if (allowed) send(socket, errorFrame(null, { code: 'invalid', message: 'binary frames are not accepted' }));
      return;
    }
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      if (allowed) send(socket, errorFrame(null, { code: 'invalid', message: 'not JSON' }));
      return;
    }
    // The version is read before the rest of the hello, so a peer of any version learns why it is refused.
    const theirs = helloProtocol(raw);
    if (theirs !== null && theirs !== PROTOCOL_VERSION) {
      log('warn', 'closed a peer speaking another protocol', { theirs, ours: PROTOCOL_VERSION, role: peer.role });
      this.drop(peer, CLOSE_PROTOCOL_MISMATCH, protocolMismatchReason(PROTOCOL_VERSION));
      return;
    }
    const parsed = PeerFrameSchema.safeParse(raw);
    if (!parsed.success) {
      // A frame that carried a usable id is answered with it, so the call waiting on it settles.
      const id = PeerFrameSchema.shape.id.safeParse(typeof raw === 'object' && raw !== null && 'id' in raw ? raw.id : undefined);
      if (allowed) send(socket, errorFrame(id.success ? (id.data ?? null) : null, { code: 'invalid', message: firstIssue(parsed.error) }));
      return;
    }
    const frame = parsed.data;
    if (!allowed) {
      if (frame.id !== undefined) send(socket, errorFrame(frame.id, { code: 'rate_limited', message: 'too many messages; slow down' }));
      return;
    }
    if (peer.stage === 'ready' && (peer.principal.role === 'extension' || peer.principal.role === 'device')) this.lastSeenAt = Date.now();
    if (frame.id === undefined) {
      this.notice(peer, frame);
      return;
    }
    this.call(peer, { id: frame.id, method: frame.method, params: frame.params }).catch((error: unknown) => {
      log('error', 'a hub call failed', { method: frame.method, error: String(error) });
      send(socket, errorFrame(frame.id ?? null, { code: 'unavailable', message: `the hub could not process this ${frame.method}` }));
    });
  }

  /** A notice is never answered: a heartbeat only keeps the socket alive; an abort stops one of this peer's calls. */
  private notice(peer: Peer, frame: { method: string; params: unknown }): void {
    const notice = parsePeerNotice(frame);
    if (!notice.ok) {
      log('debug', 'ignored a notice', { error: notice.error });
      return;
    }
    if (notice.message.method === 'abort') peer.calls.get(notice.message.params.id)?.abort();
    if (notice.message.method === 'request.shown' && (peer.principal.role === 'extension' || peer.principal.role === 'device')) {
      this.engine?.recordShown(notice.message.params.elicitationId, peer.principal.role === 'device' ? 'phone' : 'extension', notice.message.params.shownHash);
    }
  }

  private async call(peer: Peer, frame: CallFrame): Promise<void> {
    const { dispatcher } = this;
    if (!dispatcher) return;
    // The key is checked again for every call: one removed since the handshake does nothing, whatever the watcher has
    // or has not told yet. The socket closes, and an extension's decision stays queued in its outbox.
    const refused = peer.stage === 'ready' ? this.refusal(peer) : null;
    if (refused) {
      this.dropRefused(peer, refused);
      return;
    }
    if (peer.calls.has(frame.id)) {
      send(peer.socket, errorFrame(frame.id, { code: 'invalid', message: `id: ${JSON.stringify(frame.id)} is the id of a call still running` }));
      return;
    }
    const controller = new AbortController();
    peer.calls.set(frame.id, controller);
    const reply = (result: unknown) => this.out(peer, JSON.stringify({ id: frame.id, result }));
    const outcome = await dispatcher
      .dispatch(frame, peer.principal, (caller) => ({ principal: peer.principal, caller, signal: controller.signal, socket: { peer, reply }, bind: (id) => peer.bound.add(id) }))
      .catch((error: unknown) => {
        log('error', 'a call failed', { method: frame.method, error: String(error) });
        return fail('unavailable', `the hub could not process this ${frame.method}`);
      });
    peer.calls.delete(frame.id);
    if (outcome === ANSWERED || peer.leaving) return;
    this.out(peer, JSON.stringify(outcome.ok ? { id: frame.id, result: outcome.value } : { id: frame.id, error: outcome.error }));
  }

  /**
   * A frame to a peer. What one turn of the event loop sends to a socket leaves in one write: a batch of commits
   * answers and tells many requests at once, and on loopback each write is a system call that also runs the receiving
   * side's TCP stack (in a profile of a hub in the three-hub bench, a fifth of its busy time went to one-frame writes).
   */
  private out(peer: Peer, text: string): void {
    if (peer.socket.readyState !== peer.socket.OPEN) return;
    if (!peer.corked) {
      peer.corked = true;
      peer.wire.cork();
      process.nextTick(() => {
        peer.corked = false;
        peer.wire.uncork();
      });
    }
    peer.socket.send(text);
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

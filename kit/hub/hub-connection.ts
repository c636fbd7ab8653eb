import { backoffDelay } from '../core/backoff.js';
import { DEFAULT_HUB_PORT } from '../../shared/extension-id.js';
import { normalizePairingCode, type HubSecret, type ProofBinding } from '../../shared/hub-auth.js';
import { nextHandshake, startHandshake, type ClientHandshake, type HandshakeClaim, type HandshakeRefusal } from '../../shared/hub-handshake.js';
import type { HubNotice, PeerMethod, PeerNotice, Params, Result, Welcome } from '../../shared/peer-calls.js';
import { CallClient, type CallAnswer } from '../../shared/peer-client.js';
import {
  CLOSE_AUTH_FAILED, CLOSE_CODE_REPLACED, CLOSE_GOING_AWAY, CLOSE_NO_PAIRING, CLOSE_PROTOCOL_MISMATCH, CLOSE_UNKNOWN_KEY, HEARTBEAT_MS, HubFrameSchema,
  PAIRING_SUBPROTOCOL, PROTOCOL_VERSION, SUBPROTOCOL, hubProtocolFromReason, isAnswer, parseFrame, parseHubNotice,
} from '../../shared/wire-protocol.js';
// Types only: the phone page runs this connection too, and its bundle must not pull in the extension's database.
import type { PairingReason } from '../rows/rows.js';
import type { HubKey } from '../rows/settings-schema.js';

/** The part of the DOM WebSocket this module uses; tests hand in a fake. */
export interface SocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((event: unknown) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
  onclose: ((event: { code: number; reason: string }) => void) | null;
  onerror: ((event: unknown) => void) | null;
}
export type SocketFactory = (url: string, protocols: string[]) => SocketLike;

export interface Clock {
  now(): number;
  random(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** A paired key by its id: its text (the extension's settings), or a non-extractable key (the phone's IndexedDB). */
export interface HubCredential { keyId: string; key: HubSecret }

/** Where to connect and what to prove there: the key paired for that port, or a code the person entered (it wins). */
export interface HubTarget { port: number; key: HubCredential | null; pairingCode: string }

/** The hub's notices the connection does not handle itself (it passes over heartbeats). */
export type HubEvent = Exclude<HubNotice, { method: 'heartbeat' }>;
export type WelcomeMessage = Welcome;

/**
 * What the connection says about itself: the extension stores it as is (a ConnectionState); the phone page shows it the
 * same way, saying `pairing` while its code is tried and keeping the header as it is during a retry with its key.
 * A `reconnecting` without `retryAt` is a retry under way; with it, the next one is waiting.
 */
export type LinkState =
  | { state: 'connecting'; since: number }
  | { state: 'reconnecting'; retryAt?: number; detail?: string; since: number }
  | { state: 'connected'; detail: string; since: number }
  | { state: 'pairing_needed'; port: number; reason?: PairingReason; since: number }
  | { state: 'untrusted_hub'; port: number; retryAt: number; since: number }
  | { state: 'version_mismatch'; hubProtocol: number | null; extensionProtocol: number; retryAt: number; since: number };

/**
 * After a refused credential is dropped: `wait` asks to pair and looks again after the backoff (the extension, where a
 * code may be entered meanwhile), `stop` asks to pair and opens nothing until ensure() or restart() (the phone page,
 * whose only credential is its own), `retry` goes on after the backoff with a credential that is left.
 */
export type AfterRefusal = 'wait' | 'stop' | 'retry';

export interface HubConnectionOptions<T extends HubTarget = HubTarget> {
  socketFactory: SocketFactory;
  clock: Clock;
  role: 'extension' | 'device';
  /** Synchronous when it can be: a target at hand opens the socket within ensure(). */
  target: () => T | Promise<T>;
  url(target: T): string;
  /** What both sides' proofs are bound to. */
  binding(target: T): ProofBinding;
  /** What a pairing hello says besides the claim (a device: what to call it). */
  pairingHello?(target: T): { deviceName: string; pairingSerial?: number };
  client: { name: string; version: string };
  /** The hub paired this browser: keep the key for the target's port and forget the code. Done before the welcome. */
  onPaired(target: T, key: HubKey): void | Promise<void>;
  /** The credential the target carried is no good: drop it (retrying it would only count against the hub's caps). */
  onRefused(target: T, reason: PairingReason): AfterRefusal | Promise<AfterRefusal>;
  /** Frames are handed over one at a time: the next one waits until the returned promise settles. */
  onWelcome(welcome: WelcomeMessage): void | Promise<void>;
  onMessage(message: HubEvent): void | Promise<void>;
  onState(state: LinkState): void;
  /** The current socket is forgotten (closed, given up, replaced); `why` is for the log. */
  onDetached?(why: string): void;
  log?(message: string): void;
}

const OPEN = 1;
/** From creating a socket to its welcome: a hub that accepts the socket but never welcomes it is left for another try. */
export const WELCOME_TIMEOUT_MS = 10_000;

/** One socket: its handshake (`shared/hub-handshake.ts`) until the welcome, null from then on. */
interface Session<T extends HubTarget> {
  socket: SocketLike;
  target: T;
  pairing: boolean;
  handshake: ClientHandshake | null;
}

/**
 * What the header must keep saying while the backoff retries: the last hub spoke another protocol, or could not prove
 * it is ours. Cleared by a welcome, or by an attempt that finds nothing on the port.
 */
type News = { kind: 'mismatch'; hubProtocol: number | null } | { kind: 'untrusted'; port: number };

/**
 * One socket to the hub, kept up: the extension's, and the phone page's (`phone/device-connection.ts`). The hub is verified before anything but the hello leaves: it must prove the key this
 * browser was paired with (or, when pairing, the code the person entered) over both sides' fresh nonces; only then do
 * we prove it in turn, and only after its welcome are decisions sent. A hub that cannot prove it gets nothing more and
 * the header says "Untrusted hub". Then: a welcome within a bound, the extension's own heartbeat on a timer (messages,
 * not pings, keep an MV3 worker alive; a heartbeat is never answered, by either side, or two peers that both answer make
 * a storm), and on any close a reconnect after a jittered backoff (1 s doubling to 30 s). Frames are handled strictly in
 * order, one at a time, and only while their socket is the current one. Without a key or a code for the port no socket
 * is opened at all: the header asks to pair. `ensure()` is idempotent so the alarm and page wake-ups can call it freely.
 */
export class HubConnection<T extends HubTarget = HubTarget> {
  private socket: SocketLike | null = null;
  private welcomed = false;
  private attempt = 0;
  private timer: unknown = null;
  private welcomeTimer: unknown = null;
  private heartbeatTimer: unknown = null;
  private news: News | null = null;
  /** Why the last credential was dropped; told while there is nothing to connect with. */
  private refusal: PairingReason | null = null;
  /** Calls on the welcomed socket; answered by the hub, their timeout, or the socket going. */
  private readonly calls: CallClient<unknown>;

  constructor(private readonly options: HubConnectionOptions<T>) {
    this.calls = new CallClient({
      timers: options.clock,
      // Only to a hub that proved itself and welcomed us.
      send: (frame) => {
        if (!this.connected || !this.socket) return false;
        this.socket.send(JSON.stringify(frame));
        return true;
      },
    });
  }

  get connected(): boolean {
    return this.welcomed && this.socket?.readyState === OPEN;
  }

  /** A notice to a hub that welcomed us (never answered); false when there is none to tell. */
  notify(notice: Exclude<PeerNotice, { method: 'heartbeat' }>): boolean {
    if (!this.connected || !this.socket) return false;
    this.socket.send(JSON.stringify(notice));
    return true;
  }

  /** Connects now unless a socket is open or opening; a pending backoff is cut short. */
  ensure(): void {
    if (this.socket) return;
    this.cancelTimer();
    void this.open();
  }

  /** Settings changed (port, a pairing code): drop whatever there is and start over with a fresh backoff. */
  restart(why = 'reconnecting'): void {
    this.attempt = 0;
    const socket = this.socket;
    this.detach(why);
    socket?.close(1000, why);
    this.ensure();
  }

  /**
   * A call of the peer call map, only to a hub that proved itself and welcomed us: answered by the hub, or unanswered
   * (`not_connected` at once, `timeout` after `timeoutMs`, `closed` when the socket goes first).
   */
  call<M extends PeerMethod>(method: M, params: Params<M>, timeoutMs: number): Promise<CallAnswer<Result<M>>> {
    return this.calls.call(method, params, { timeoutMs });
  }

  private cancelTimer(): void {
    if (this.timer !== null) this.options.clock.clearTimeout(this.timer);
    this.timer = null;
  }

  /** Forgets the current socket and everything timed on it; its handlers stay, but check that it is still current. */
  private detach(why: string): void {
    const { clock } = this.options;
    this.socket = null;
    this.welcomed = false;
    if (this.welcomeTimer !== null) clock.clearTimeout(this.welcomeTimer);
    if (this.heartbeatTimer !== null) clock.clearTimeout(this.heartbeatTimer);
    this.welcomeTimer = null;
    this.heartbeatTimer = null;
    this.calls.closeAll();
    this.options.onDetached?.(why);
  }

  /** Holds the slot while something asynchronous decides what comes next, so ensure() cannot open a second socket. */
  private hold(): SocketLike {
    const placeholder: SocketLike = { readyState: 0, send() {}, close() {}, onopen: null, onmessage: null, onclose: null, onerror: null };
    this.socket = placeholder;
    return placeholder;
  }

  private open(): void {
    const placeholder = this.hold();
    settle(this.options.target, () => null, (target) => {
      if (this.socket === placeholder) this.connect(target);
    });
  }

  /** Null: the target could not be read, which is as good as nothing to connect with. */
  private connect(target: T | null): void {
    const { clock } = this.options;
    const credential = target && credentialOf(target);
    if (!target || !credential) {
      // Nothing to prove, so nothing to connect with: a hub could not tell us from a web page, and we could not tell it
      // from an impostor. The alarm and page wake-ups look again; a new code or key restarts the connection.
      this.socket = null;
      this.news = null;
      this.options.onState({ state: 'pairing_needed', port: target?.port ?? DEFAULT_HUB_PORT, ...(this.refusal ? { reason: this.refusal } : {}), since: clock.now() });
      return;
    }
    this.refusal = null;
    // While the last answer was a mismatch or an impostor, that stays the news: "reconnecting" would hide it.
    if (!this.news) this.options.onState({ state: this.attempt === 0 ? 'connecting' : 'reconnecting', since: clock.now() });
    const { secret, claim } = credential;
    const pairing = 'pairing' in claim;
    const protocols = pairing ? [SUBPROTOCOL, PAIRING_SUBPROTOCOL] : [SUBPROTOCOL];
    let socket: SocketLike;
    try {
      socket = this.options.socketFactory(this.options.url(target), protocols);
    } catch (error) {
      this.socket = null;
      this.scheduleReconnect(`could not open a socket: ${String(error)}`);
      return;
    }
    this.socket = socket;
    const start = startHandshake({
      role: this.options.role,
      client: this.options.client,
      secret,
      claim: pairing ? { ...claim, ...this.options.pairingHello?.(target) } : claim,
      binding: this.options.binding(target),
    });
    const session: Session<T> = { socket, target, pairing, handshake: start.state };
    let opened = false;
    // One frame at a time: each waits for the one before it, so a welcome is applied whole before anything after it,
    // and the handshake's proofs (asynchronous Web Crypto) are checked before the next frame is even looked at.
    let queue = Promise.resolve();
    this.welcomeTimer = clock.setTimeout(() => {
      this.welcomeTimer = null;
      if (this.socket === socket && !this.welcomed) this.giveUp(session, `no welcome from the hub within ${WELCOME_TIMEOUT_MS / 1000} s`);
    }, WELCOME_TIMEOUT_MS);
    socket.onopen = () => {
      opened = true;
      socket.send(JSON.stringify(start.send));
    };
    socket.onmessage = (event) => {
      queue = queue
        .then(() => (this.socket === socket ? this.receive(session, event.data) : undefined))
        .catch((error: unknown) => this.options.log?.(`handling a hub frame failed: ${String(error)}`));
    };
    socket.onerror = () => {};
    socket.onclose = (event) => {
      if (this.socket !== socket) return;
      this.detach('the connection to the hub closed');
      const refusal = refusalFor(event.code, session.pairing);
      if (refusal) {
        this.news = null;
        this.refuse(session, refusal);
        return;
      }
      if (event.code === CLOSE_PROTOCOL_MISMATCH) {
        this.news = { kind: 'mismatch', hubProtocol: hubProtocolFromReason(event.reason) };
      } else if (!opened) {
        // No socket at all: whatever answered on the port last time, nothing does now.
        this.news = null;
      }
      this.scheduleReconnect(event.code === CLOSE_GOING_AWAY
        ? 'the hub stepped down; another agent\'s server takes over'
        : 'the hub closed the connection or is not running');
    };
  }

  /** Closes a socket this side has no use for and tries again later, the same way as when the hub closes it. */
  private giveUp(session: Session<T>, detail: string): void {
    this.detach(detail);
    session.socket.close(1000, detail.slice(0, 120));
    this.scheduleReconnect(detail);
  }

  /**
   * Whatever answered could not prove the secret, or broke the handshake before proving it. It gets nothing more: the
   * socket is closed. With a key that is an impostor on the port; with a pairing code it is as likely a mistyped code
   * (the hub proves the code it made), so the code is dropped and the person asked to check it.
   */
  private untrusted(session: Session<T>, why: string): void {
    this.options.log?.(`the hub on port ${session.target.port} is not trusted: ${why}`);
    if (session.pairing) {
      this.detach(why);
      session.socket.close(1000, 'pairing code not proven');
      this.refuse(session, 'code_unproven');
      return;
    }
    this.news = { kind: 'untrusted', port: session.target.port };
    this.giveUp(session, why);
  }

  /** Drops the refused credential, says why, and goes on as the owner says (AfterRefusal). */
  private refuse(session: Session<T>, reason: PairingReason): void {
    const held = this.hold();
    const failed = (error: unknown): AfterRefusal => {
      this.options.log?.(`dropping a refused credential failed: ${String(error)}`);
      return 'wait';
    };
    settle(() => this.options.onRefused(session.target, reason), failed, (next) => {
      if (this.socket !== held) return;
      this.socket = null;
      this.refusal = reason;
      if (next === 'retry') return this.scheduleReconnect('the pairing code was not accepted');
      const { clock } = this.options;
      if (next === 'stop') this.news = null;
      this.options.onState({ state: 'pairing_needed', port: session.target.port, reason, since: clock.now() });
      if (next === 'wait') this.retryLater();
    });
  }

  private async receive(session: Session<T>, data: unknown): Promise<void> {
    if (session.handshake) return this.handshake(session, session.handshake, data);
    if (typeof data !== 'string') return;
    const parsed = parseFrame(HubFrameSchema, data);
    if (!parsed.ok) {
      this.options.log?.(`ignored an invalid hub frame: ${parsed.error}`);
      return;
    }
    const frame = parsed.message;
    if (isAnswer(frame)) {
      if (!this.calls.receive(frame)) this.options.log?.(`ignored an answer to no call of ours${'error' in frame ? `: ${frame.error.code} ${frame.error.message}` : ''}`);
      return;
    }
    const notice = parseHubNotice(frame);
    if (!notice.ok) {
      this.options.log?.(`ignored a hub notice: ${notice.error}`);
      return;
    }
    // The hub's heartbeat only keeps this worker alive; answering it is what made the storm.
    if (notice.message.method === 'heartbeat') return;
    await this.options.onMessage(notice.message);
  }

  /** A frame before the welcome: one step of the handshake, applied only while its socket is still the current one. */
  private async handshake(session: Session<T>, state: ClientHandshake, data: unknown): Promise<void> {
    const step = await nextHandshake(state, data);
    if (this.socket !== session.socket) return;
    if ('refusal' in step) return this.refused(session, step.refusal);
    if ('welcome' in step) {
      // The key is kept before anything of the welcome is applied: the welcome may be the last frame this socket sees.
      if (step.paired) await this.options.onPaired(session.target, step.paired);
      if (this.socket !== session.socket) return;
      return this.welcome(session, step.welcome);
    }
    if (step.note !== undefined) this.options.log?.(step.note);
    if (step.send) session.socket.send(JSON.stringify(step.send));
    session.handshake = step.state;
  }

  private refused(session: Session<T>, refusal: HandshakeRefusal): void {
    switch (refusal.kind) {
      case 'unproven':
      case 'wrong_proof':
        return this.untrusted(session, refusal.why);
      case 'mismatch':
        this.news = { kind: 'mismatch', hubProtocol: refusal.hubProtocol };
        return this.giveUp(session, refusal.why);
      case 'broken':
        return this.giveUp(session, refusal.why);
    }
  }

  private async welcome(session: Session<T>, message: WelcomeMessage): Promise<void> {
    const { clock } = this.options;
    session.handshake = null;
    this.welcomed = true;
    this.attempt = 0;
    this.news = null;
    this.startHeartbeat(session.socket);
    if (this.welcomeTimer !== null) clock.clearTimeout(this.welcomeTimer);
    this.welcomeTimer = null;
    this.options.onState({ state: 'connected', since: clock.now(), detail: `port ${session.target.port}` });
    await this.options.onWelcome(message);
  }

  private startHeartbeat(socket: SocketLike): void {
    const { clock } = this.options;
    if (this.heartbeatTimer !== null) clock.clearTimeout(this.heartbeatTimer);
    const beat = () => {
      this.heartbeatTimer = clock.setTimeout(() => {
        if (this.socket !== socket || !this.connected) return;
        socket.send(JSON.stringify({ method: 'heartbeat', params: { t: clock.now() } } satisfies PeerNotice));
        beat();
      }, HEARTBEAT_MS);
    };
    beat();
  }

  private scheduleReconnect(detail: string): void {
    const { clock } = this.options;
    const retryAt = this.retryLater();
    const since = clock.now();
    if (this.news?.kind === 'mismatch') {
      this.options.onState({ state: 'version_mismatch', hubProtocol: this.news.hubProtocol, extensionProtocol: PROTOCOL_VERSION, retryAt, since });
    } else if (this.news?.kind === 'untrusted') {
      this.options.onState({ state: 'untrusted_hub', port: this.news.port, retryAt, since });
    } else {
      this.options.onState({ state: 'reconnecting', retryAt, detail, since });
    }
  }

  /** Arms the next attempt after the backoff; returns when it runs. */
  private retryLater(): number {
    const { clock } = this.options;
    const delay = backoffDelay(this.attempt++, () => clock.random());
    this.cancelTimer();
    this.timer = clock.setTimeout(() => {
      this.timer = null;
      this.ensure();
    }, delay);
    return clock.now() + delay;
  }
}

/**
 * What this browser proves to the hub on `target`: a code the person entered (pairing) wins over a stored key, since
 * entering one means "pair now". Null when there is neither.
 */
function credentialOf(target: HubTarget): { secret: HubSecret; claim: HandshakeClaim } | null {
  const code = normalizePairingCode(target.pairingCode);
  if (code) return { secret: code, claim: { pairing: true } };
  return target.key ? { secret: target.key.key, claim: { keyId: target.key.keyId } } : null;
}

/** What a close code says about the credential this socket offered, if anything. */
function refusalFor(code: number, pairing: boolean): PairingReason | null {
  if (pairing) {
    if (code === CLOSE_AUTH_FAILED) return 'code_refused';
    if (code === CLOSE_NO_PAIRING) return 'no_code_active';
    if (code === CLOSE_CODE_REPLACED) return 'code_replaced';
    return null;
  }
  // Our proof with this key failed, or the hub does not know the key: either way the key is of no use any more.
  return code === CLOSE_AUTH_FAILED || code === CLOSE_UNKNOWN_KEY ? 'key_unknown' : null;
}

/**
 * Hands `next` what `source` gives, at once when it is already there: a synchronous source (the phone's key in
 * localStorage) keeps ensure() and a refusal synchronous; an asynchronous one (the extension's settings) is awaited.
 */
function settle<V>(source: () => V | Promise<V>, failed: (error: unknown) => V, next: (value: V) => void): void {
  let value: V | Promise<V>;
  try {
    value = source();
  } catch (error) {
    next(failed(error));
    return;
  }
  if (value instanceof Promise) void value.then(next, (error: unknown) => next(failed(error)));
  else next(value);
}

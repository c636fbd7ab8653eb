import { backoffDelay } from '../shared/backoff.js';
import { constantTimeEqual, hubProof, isKeyHex, newNonce, normalizePairingCode, openSealedKey, peerProof, type ProofBinding } from '../shared/hub-auth.js';
import {
  CLOSE_AUTH_FAILED, CLOSE_NO_PAIRING, CLOSE_PROTOCOL_MISMATCH, CLOSE_UNKNOWN_KEY, HEARTBEAT_MS, HubMessageSchema, MAX_FRAME_BYTES,
  PAIRING_SUBPROTOCOL, PROTOCOL_VERSION, SUBPROTOCOL, hubProtocolFromReason, parseFrame,
  type DecideMessage, type HubMessage, type PeerMessage, type RequestView,
} from '../shared/wire-protocol.js';
import type { HubKey } from '../extension/db/rows.js';
import type { DecideReply, Decision } from '../extension/messages.js';

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

/** Where this phone keeps the key it was paired with (`device-key.ts` over localStorage). */
export interface KeyStore {
  read(): HubKey | null;
  write(key: HubKey): void;
  clear(): void;
}

/**
 * Why this phone has no key to connect with. `removed`: the hub no longer knows the key it held (`pair --remove`, or the
 * hub's state was reset); the code ones come from a pairing attempt (`code_unproven`: whatever answered could not
 * prove it knows the code, so nothing but the hello went to it).
 */
export type NotPairedReason = 'removed' | 'code_refused' | 'code_unproven' | 'no_code_active';

export type DeviceState =
  | { state: 'connecting' | 'pairing' | 'connected'; since: number }
  | { state: 'reconnecting'; retryAt: number; detail: string; since: number }
  | { state: 'not_paired'; reason: NotPairedReason | null; since: number }
  /** Whatever answered could not prove it holds this phone's key: nothing but the hello was sent to it. */
  | { state: 'untrusted'; retryAt: number; since: number }
  /** `hubProtocol` null: the hub only said it refuses ours. */
  | { state: 'version_mismatch'; hubProtocol: number | null; retryAt: number; since: number };

/** What the hub tells a device after its welcome, besides answers to its own decisions. */
export type DeviceEvent = Extract<HubMessage, { type: 'request.created' | 'request.removed' }>;

export interface DeviceConnectionOptions {
  /** The hub's socket, at the page's own origin (`/phone/socket`). */
  url: string;
  /** The hub's own port (the page is served with it) and the page's origin: what every proof is bound to. */
  hubPort: number;
  origin: string;
  socketFactory: SocketFactory;
  clock: Clock;
  keys: KeyStore;
  client: { name: string; version: string };
  onState(state: DeviceState): void;
  onWelcome(pending: RequestView[], recent: RequestView[]): void;
  onEvent(event: DeviceEvent): void;
  /** A pairing attempt failed (the code is dropped either way). */
  onPairingRefused?(reason: NotPairedReason): void;
  log?(message: string): void;
  /** How long a decision waits for the hub's answer (default DECIDE_TIMEOUT_MS). */
  answerTimeoutMs?: number;
}

const OPEN = 1;
/** From creating a socket to its welcome: a hub that accepts the socket but never welcomes it is left for another try. */
export const WELCOME_TIMEOUT_MS = 10_000;
/** A decision's answer: after this the person is told it may not have been recorded, and may send it again. */
export const DECIDE_TIMEOUT_MS = 5000;

/** What both sides prove: the normalized pairing code (and what to call this phone), or the paired key. */
type Credential = { secret: string; pairing: { deviceName: string } } | { secret: string; pairing: null; keyId: string };

/** `hello`: our hello went out, the hub has proved nothing; `auth`: it proved, and so did we; `welcomed`: running. */
interface Session {
  socket: SocketLike;
  credential: Credential;
  nonce: string;
  hubNonce: string;
  phase: 'hello' | 'auth' | 'paired' | 'welcomed';
}

type News = { kind: 'mismatch'; hubProtocol: number | null } | { kind: 'untrusted' };

type Answer = Extract<HubMessage, { type: 'decision.result' }>;

/**
 * The phone page's one socket to the hub, the extension's handshake with the role `device`: the hub proves first (its
 * HMAC over both nonces with this phone's key, or with the pairing code from the QR), bound to the hub's port and this
 * page's origin; only once that proof checks out does anything but the hello leave. Then our proof, the sealed key when
 * pairing (kept before the welcome), the welcome within WELCOME_TIMEOUT_MS, our heartbeats (never answered), and a
 * jittered backoff after any close. The hub removing this phone (close 4003) drops the key: the page then says it is no
 * longer paired and does not knock again. Decisions go only over a welcomed socket and wait a bounded time for their
 * answer; the phone keeps no outbox (nothing is said to be saved that is not).
 */
export class DeviceConnection {
  private socket: SocketLike | null = null;
  private welcomed = false;
  private attempt = 0;
  private retryTimer: unknown = null;
  private welcomeTimer: unknown = null;
  private heartbeatTimer: unknown = null;
  private news: News | null = null;
  private refusal: NotPairedReason | null = null;
  private pairing: { code: string; deviceName: string } | null = null;
  private readonly waiting = new Map<string, (answer: Answer | null) => void>();
  /** A decision whose answer never came: sent again as it was, it carries the same key so the hub can tell. */
  private unanswered: { fingerprint: string; key: string } | null = null;

  constructor(private readonly options: DeviceConnectionOptions) {}

  get connected(): boolean {
    return this.welcomed && this.socket?.readyState === OPEN;
  }

  /** Connects now unless a socket is open or opening; a pending backoff is cut short (the page came back into view). */
  ensure(): void {
    if (this.socket) return;
    this.cancelRetry();
    this.open();
  }

  /** Pairs with the code from the QR: whatever socket there is goes, and the next one proves the code. */
  pair(code: string, deviceName: string): void {
    this.pairing = { code: normalizePairingCode(code), deviceName };
    this.attempt = 0;
    this.refusal = null;
    const socket = this.socket;
    this.detach('pairing anew');
    socket?.close(1000, 'pairing');
    this.ensure();
  }

  async decide(decision: Decision): Promise<DecideReply> {
    const fingerprint = JSON.stringify(decision);
    const idempotencyKey = this.unanswered?.fingerprint === fingerprint ? this.unanswered.key : crypto.randomUUID();
    const message: DecideMessage = { type: 'decide', idempotencyKey, ...decision };
    const frame = JSON.stringify(message);
    const bytes = new TextEncoder().encode(frame).length;
    if (bytes > MAX_FRAME_BYTES) {
      return { state: 'too_large', issues: [{ path: '(decision)', rule: 'too_large', message: `(decision): is ${bytes} bytes as JSON; a decision must fit in ${MAX_FRAME_BYTES} bytes` }] };
    }
    if (!this.connected || !this.socket) return { state: 'error', message: 'Not connected to the hub: your decision was not sent. Try again once the header says Connected.' };
    const { clock } = this.options;
    const answered = new Promise<Answer | null>((resolve) => {
      const timer = clock.setTimeout(() => {
        this.waiting.delete(idempotencyKey);
        resolve(null);
      }, this.options.answerTimeoutMs ?? DECIDE_TIMEOUT_MS);
      this.waiting.set(idempotencyKey, (answer) => {
        clock.clearTimeout(timer);
        resolve(answer);
      });
    });
    this.socket.send(frame);
    const answer = await answered;
    if (!answer) {
      this.unanswered = { fingerprint, key: idempotencyKey };
      return { state: 'error', message: 'The hub did not answer: your decision may or may not have been recorded. Submit again to retry it (the hub takes it once).' };
    }
    this.unanswered = null;
    if (answer.reason === 'unavailable') return { state: 'error', message: 'The hub could not record the decision: try again.' };
    return {
      state: 'answered',
      ok: answer.ok,
      ...(answer.status ? { status: answer.status } : {}),
      ...(answer.reason ? { reason: answer.reason } : {}),
      ...(answer.issues ? { issues: answer.issues } : {}),
    };
  }

  private credential(): Credential | null {
    if (this.pairing) return { secret: this.pairing.code, pairing: { deviceName: this.pairing.deviceName } };
    const key = this.options.keys.read();
    return key ? { secret: key.key, pairing: null, keyId: key.keyId } : null;
  }

  private binding(): ProofBinding {
    return { port: this.options.hubPort, role: 'device', origin: this.options.origin };
  }

  private open(): void {
    const { clock } = this.options;
    const credential = this.credential();
    if (!credential) {
      this.news = null;
      this.options.onState({ state: 'not_paired', reason: this.refusal, since: clock.now() });
      return;
    }
    // A retry leaves the header as the backoff set it ("reconnecting", or the mismatch or impostor it keeps saying).
    if (!this.news && (credential.pairing || this.attempt === 0)) this.options.onState({ state: credential.pairing ? 'pairing' : 'connecting', since: clock.now() });
    let socket: SocketLike;
    try {
      socket = this.options.socketFactory(this.options.url, credential.pairing ? [SUBPROTOCOL, PAIRING_SUBPROTOCOL] : [SUBPROTOCOL]);
    } catch (error) {
      this.scheduleReconnect(`could not open a socket: ${String(error)}`);
      return;
    }
    this.socket = socket;
    const session: Session = { socket, credential, nonce: newNonce(), hubNonce: '', phase: 'hello' };
    let opened = false;
    // One frame at a time, so a proof (asynchronous Web Crypto) is checked before the next frame is looked at.
    let queue = Promise.resolve();
    this.welcomeTimer = clock.setTimeout(() => {
      this.welcomeTimer = null;
      if (this.socket === socket && !this.welcomed) this.giveUp(session, `no welcome from the hub within ${WELCOME_TIMEOUT_MS / 1000} s`);
    }, WELCOME_TIMEOUT_MS);
    socket.onopen = () => {
      opened = true;
      const claim = credential.pairing ? { pairing: true as const, deviceName: credential.pairing.deviceName } : { keyId: credential.keyId };
      socket.send(JSON.stringify({ type: 'hello', protocol: PROTOCOL_VERSION, role: 'device', client: this.options.client, nonce: session.nonce, ...claim } satisfies PeerMessage));
    };
    socket.onmessage = (event) => {
      queue = queue
        .then(() => (this.socket === socket ? this.receive(session, event.data) : undefined))
        .catch((error: unknown) => this.options.log?.(`handling a hub frame failed: ${String(error)}`));
    };
    socket.onerror = () => {};
    socket.onclose = (event) => {
      if (this.socket !== socket) return;
      this.detach('the connection to the hub closed before it answered');
      if (credential.pairing) {
        const reason = event.code === CLOSE_AUTH_FAILED ? 'code_refused' : event.code === CLOSE_NO_PAIRING ? 'no_code_active' : null;
        if (reason) return this.pairingRefused(reason);
      } else if (event.code === CLOSE_UNKNOWN_KEY || event.code === CLOSE_AUTH_FAILED) {
        // The hub no longer knows this key, or our proof with it failed: either way it opens nothing any more.
        this.options.keys.clear();
        this.news = null;
        this.refusal = 'removed';
        this.options.onState({ state: 'not_paired', reason: 'removed', since: clock.now() });
        return;
      }
      if (event.code === CLOSE_PROTOCOL_MISMATCH) this.news = { kind: 'mismatch', hubProtocol: hubProtocolFromReason(event.reason) };
      else if (!opened) this.news = null;
      this.scheduleReconnect('the hub closed the connection or is not running');
    };
  }

  /** Forgets the current socket and everything timed on it; decisions waiting on it are told at once. */
  private detach(why: string): void {
    const { clock } = this.options;
    this.socket = null;
    this.welcomed = false;
    if (this.welcomeTimer !== null) clock.clearTimeout(this.welcomeTimer);
    if (this.heartbeatTimer !== null) clock.clearTimeout(this.heartbeatTimer);
    this.welcomeTimer = null;
    this.heartbeatTimer = null;
    if (this.waiting.size > 0) this.options.log?.(`${this.waiting.size} decision(s) unanswered: ${why}`);
    for (const resolve of [...this.waiting.values()]) resolve(null);
    this.waiting.clear();
  }

  private giveUp(session: Session, detail: string): void {
    this.detach(detail);
    session.socket.close(1000, detail.slice(0, 120));
    this.scheduleReconnect(detail);
  }

  /**
   * Whatever answered could not prove the secret, or broke the handshake first: it gets nothing more. With a pairing
   * code that is as likely a stale code as an impostor, so the code goes and the person is asked to scan a new one.
   */
  private untrusted(session: Session, why: string): void {
    this.options.log?.(`the hub is not trusted: ${why}`);
    if (session.credential.pairing) {
      this.detach(why);
      session.socket.close(1000, 'pairing code not proven');
      this.pairingRefused('code_unproven');
      return;
    }
    this.news = { kind: 'untrusted' };
    this.giveUp(session, why);
  }

  /** The code is spent either way; with a key from before, the phone goes on with it. */
  private pairingRefused(reason: NotPairedReason): void {
    this.pairing = null;
    this.options.onPairingRefused?.(reason);
    if (this.options.keys.read()) {
      this.scheduleReconnect('the pairing code was not accepted');
      return;
    }
    this.refusal = reason;
    this.news = null;
    this.options.onState({ state: 'not_paired', reason, since: this.options.clock.now() });
  }

  private async receive(session: Session, data: unknown): Promise<void> {
    const verified = session.phase !== 'hello';
    if (typeof data !== 'string') {
      if (!verified) this.untrusted(session, 'it sent a binary frame');
      return;
    }
    const parsed = parseFrame(HubMessageSchema, data);
    if (!parsed.ok) {
      if (!verified) return this.untrusted(session, `it sent an invalid frame (${parsed.error})`);
      this.options.log?.(`ignored an invalid hub frame: ${parsed.error}`);
      return;
    }
    const message = parsed.message;
    if (message.type === 'heartbeat') return;
    if (message.type === 'error') {
      this.options.log?.(`hub error ${message.code}: ${message.message}`);
      if (message.code === 'unsupported_protocol' && session.phase !== 'welcomed') {
        this.news = { kind: 'mismatch', hubProtocol: null };
        this.giveUp(session, 'the hub does not speak this protocol');
      }
      return;
    }
    if (session.phase === 'hello') {
      if (message.type !== 'challenge') return this.untrusted(session, `it sent ${message.type} before proving itself`);
      return this.challenge(session, message);
    }
    if (message.type === 'paired' && session.credential.pairing && session.phase === 'auth') return this.paired(session, message);
    if (message.type === 'welcome') {
      if (session.credential.pairing && session.phase === 'auth') return this.giveUp(session, 'the hub welcomed this phone without handing over a key');
      if (session.phase === 'welcomed') return;
      return this.welcome(session, message);
    }
    if (session.phase !== 'welcomed') {
      this.options.log?.(`ignored ${message.type} from the hub before its welcome`);
      return;
    }
    if (message.type === 'decision.result') {
      this.waiting.get(message.idempotencyKey)?.(message);
      this.waiting.delete(message.idempotencyKey);
      return;
    }
    if (message.type === 'request.created' || message.type === 'request.removed') this.options.onEvent(message);
  }

  private async challenge(session: Session, message: Extract<HubMessage, { type: 'challenge' }>): Promise<void> {
    const { secret } = session.credential;
    const expected = await hubProof(secret, this.binding(), session.nonce, message.nonce);
    if (this.socket !== session.socket) return;
    if (!constantTimeEqual(message.proof, expected)) return this.untrusted(session, 'its proof is wrong');
    const proof = await peerProof(secret, this.binding(), message.nonce, session.nonce);
    if (this.socket !== session.socket) return;
    session.hubNonce = message.nonce;
    session.phase = 'auth';
    session.socket.send(JSON.stringify({ type: 'auth', proof } satisfies PeerMessage));
  }

  private async paired(session: Session, message: Extract<HubMessage, { type: 'paired' }>): Promise<void> {
    const key = await openSealedKey(message.sealedKey, session.credential.secret, this.options.hubPort, session.hubNonce, session.nonce);
    if (this.socket !== session.socket) return;
    if (!key || !isKeyHex(key)) return this.giveUp(session, 'the hub handed over a key that does not open');
    this.options.keys.write({ keyId: message.keyId, key });
    // The code is spent: from now on this phone proves its own key.
    this.pairing = null;
    session.phase = 'paired';
  }

  private welcome(session: Session, message: Extract<HubMessage, { type: 'welcome' }>): void {
    const { clock } = this.options;
    if (message.protocol !== PROTOCOL_VERSION) {
      this.news = { kind: 'mismatch', hubProtocol: message.protocol };
      this.giveUp(session, `the hub speaks protocol ${message.protocol}`);
      return;
    }
    session.phase = 'welcomed';
    this.welcomed = true;
    this.attempt = 0;
    this.news = null;
    this.refusal = null;
    if (this.welcomeTimer !== null) clock.clearTimeout(this.welcomeTimer);
    this.welcomeTimer = null;
    this.startHeartbeat(session.socket);
    this.options.onState({ state: 'connected', since: clock.now() });
    this.options.onWelcome(message.pending, message.recent ?? []);
  }

  private startHeartbeat(socket: SocketLike): void {
    const { clock } = this.options;
    const beat = () => {
      this.heartbeatTimer = clock.setTimeout(() => {
        if (this.socket !== socket || !this.connected) return;
        socket.send(JSON.stringify({ type: 'heartbeat', t: clock.now() } satisfies PeerMessage));
        beat();
      }, HEARTBEAT_MS);
    };
    beat();
  }

  private cancelRetry(): void {
    if (this.retryTimer !== null) this.options.clock.clearTimeout(this.retryTimer);
    this.retryTimer = null;
  }

  private scheduleReconnect(detail: string): void {
    const { clock } = this.options;
    const delay = backoffDelay(this.attempt++, () => clock.random());
    this.cancelRetry();
    this.retryTimer = clock.setTimeout(() => {
      this.retryTimer = null;
      this.ensure();
    }, delay);
    const retryAt = clock.now() + delay;
    const since = clock.now();
    if (this.news?.kind === 'mismatch') this.options.onState({ state: 'version_mismatch', hubProtocol: this.news.hubProtocol, retryAt, since });
    else if (this.news?.kind === 'untrusted') this.options.onState({ state: 'untrusted', retryAt, since });
    else this.options.onState({ state: 'reconnecting', retryAt, detail, since });
  }
}

/** The browser's WebSocket behind the small interface above (its DOM event types are wider than what is read). */
export function openBrowserSocket(url: string, protocols: string[]): SocketLike {
  const ws = new WebSocket(url, protocols);
  const socket: SocketLike = {
    get readyState() {
      return ws.readyState;
    },
    send: (data) => ws.send(data),
    close: (code, reason) => ws.close(code, reason),
    onopen: null,
    onmessage: null,
    onclose: null,
    onerror: null,
  };
  ws.onopen = (event) => socket.onopen?.(event);
  ws.onmessage = (event) => socket.onmessage?.({ data: event.data });
  ws.onclose = (event) => socket.onclose?.({ code: event.code, reason: event.reason });
  ws.onerror = (event) => socket.onerror?.(event);
  return socket;
}

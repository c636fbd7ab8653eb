import { backoffDelay } from '../../shared/backoff.js';
import { DEFAULT_HUB_PORT } from '../../shared/extension-id.js';
import {
  CLOSE_GOING_AWAY, CLOSE_PROTOCOL_MISMATCH, HEARTBEAT_MS, HubMessageSchema, PAIRING_PREFIX, PROTOCOL_VERSION, SUBPROTOCOL, hubProtocolFromReason, parseFrame,
  type HubMessage, type PeerMessage, type RequestView,
} from '../../shared/wire-protocol.js';
import type { ConnectionState } from '../db/rows.js';

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

interface HubTarget { port: number; pairingCode: string }

/** Everything the hub sends that the connection does not handle itself. */
export type HubEvent = Exclude<HubMessage, { type: 'welcome' | 'heartbeat' }>;

interface HubConnectionOptions {
  socketFactory: SocketFactory;
  clock: Clock;
  target: () => Promise<HubTarget>;
  client: { name: string; version: string };
  /** Whether this browser's extension origin can only be trusted after pairing (Firefox's per-install origin). */
  originNeedsPairing: boolean;
  everConnected: boolean;
  /** Frames are handed over one at a time: the next one waits until the returned promise settles. */
  onWelcome(pending: RequestView[], pairedWith: string | null): Promise<void>;
  onMessage(message: HubEvent): Promise<void>;
  onState(state: ConnectionState): void;
  log?(message: string): void;
}

const OPEN = 1;
/** From creating a socket to its welcome: a hub that accepts the socket but never welcomes it is left for another try. */
export const WELCOME_TIMEOUT_MS = 10_000;

/** What the extension knows about the hub's protocol when it is not its own. */
interface Mismatch { hubProtocol: number | null }

/**
 * One socket to the hub, kept up: hello on open, a welcome within a bound, the extension's own heartbeat on a timer
 * (messages, not pings, keep an MV3 worker alive; a heartbeat is never answered, by either side, or two peers that
 * both answer make a storm), and on any close a reconnect after a jittered backoff (1 s doubling to 30 s). Frames are
 * handled strictly in order, one at a time, and only while their socket is the current one. `ensure()` is idempotent
 * so the alarm safety net and page wake-ups can call it freely.
 */
export class HubConnection {
  private socket: SocketLike | null = null;
  private welcomed = false;
  private attempt = 0;
  private timer: unknown = null;
  private welcomeTimer: unknown = null;
  private heartbeatTimer: unknown = null;
  private everWelcomed: boolean;
  /** Set while the last hub that answered spoke another protocol; cleared by a welcome or a hub that is gone. */
  private mismatch: Mismatch | null = null;

  constructor(private readonly options: HubConnectionOptions) {
    this.everWelcomed = options.everConnected;
  }

  get connected(): boolean {
    return this.welcomed && this.socket?.readyState === OPEN;
  }

  /** Connects now unless a socket is open or opening; a pending backoff is cut short. */
  ensure(): void {
    if (this.socket) return;
    this.cancelTimer();
    void this.open();
  }

  /** Settings changed: drop whatever there is and start over with a fresh backoff. */
  restart(): void {
    this.attempt = 0;
    const socket = this.socket;
    this.detach();
    socket?.close(1000, 'reconnecting');
    this.ensure();
  }

  send(message: PeerMessage): boolean {
    if (!this.connected || !this.socket) return false;
    this.socket.send(JSON.stringify(message));
    return true;
  }

  private cancelTimer(): void {
    if (this.timer !== null) this.options.clock.clearTimeout(this.timer);
    this.timer = null;
  }

  /** Forgets the current socket and everything timed on it; its handlers stay, but check that it is still current. */
  private detach(): void {
    const { clock } = this.options;
    this.socket = null;
    this.welcomed = false;
    if (this.welcomeTimer !== null) clock.clearTimeout(this.welcomeTimer);
    if (this.heartbeatTimer !== null) clock.clearTimeout(this.heartbeatTimer);
    this.welcomeTimer = null;
    this.heartbeatTimer = null;
  }

  private async open(): Promise<void> {
    const { clock } = this.options;
    // Claim the slot before the await so a second ensure() does not open a second socket.
    const placeholder: SocketLike = { readyState: 0, send() {}, close() {}, onopen: null, onmessage: null, onclose: null, onerror: null };
    this.socket = placeholder;
    let target: HubTarget;
    try {
      target = await this.options.target();
    } catch {
      target = { port: DEFAULT_HUB_PORT, pairingCode: '' };
    }
    if (this.socket !== placeholder) return;
    const protocols = [SUBPROTOCOL, ...(target.pairingCode ? [`${PAIRING_PREFIX}${target.pairingCode}`] : [])];
    // While the last answer was a mismatch, that stays the news: "reconnecting" would hide what the person must do.
    if (!this.mismatch) this.options.onState({ state: this.attempt === 0 ? 'connecting' : 'reconnecting', since: clock.now(), everConnected: this.everWelcomed });
    let socket: SocketLike;
    try {
      socket = this.options.socketFactory(`ws://127.0.0.1:${target.port}`, protocols);
    } catch (error) {
      this.socket = null;
      this.scheduleReconnect(target, `could not open a socket: ${String(error)}`);
      return;
    }
    this.socket = socket;
    let opened = false;
    // One frame at a time: each waits for the one before it, so a welcome is applied whole before anything after it.
    let queue = Promise.resolve();
    this.welcomeTimer = clock.setTimeout(() => {
      this.welcomeTimer = null;
      if (this.socket === socket && !this.welcomed) this.giveUp(socket, target, `no welcome from the hub within ${WELCOME_TIMEOUT_MS / 1000} s`);
    }, WELCOME_TIMEOUT_MS);
    socket.onopen = () => {
      opened = true;
      socket.send(JSON.stringify({ type: 'hello', protocol: PROTOCOL_VERSION, role: 'extension', client: this.options.client } satisfies PeerMessage));
    };
    socket.onmessage = (event) => {
      queue = queue
        .then(() => (this.socket === socket ? this.receive(socket, event.data, target) : undefined))
        .catch((error: unknown) => this.options.log?.(`handling a hub frame failed: ${String(error)}`));
    };
    socket.onerror = () => {};
    socket.onclose = (event) => {
      if (this.socket !== socket) return;
      this.detach();
      if (event.code === CLOSE_PROTOCOL_MISMATCH) {
        this.mismatch = { hubProtocol: hubProtocolFromReason(event.reason) };
      } else if (!opened) {
        // No socket at all: whatever the last hub spoke, none is there now.
        this.mismatch = null;
      }
      this.scheduleReconnect(target, event.code === CLOSE_GOING_AWAY
        ? 'the hub stepped down; another agent\'s server takes over'
        : 'the hub closed the connection or is not running');
    };
  }

  /** Closes a socket this side has no use for and tries again later, the same way as when the hub closes it. */
  private giveUp(socket: SocketLike, target: HubTarget, detail: string): void {
    this.detach();
    socket.close(1000, detail.slice(0, 120));
    this.scheduleReconnect(target, detail);
  }

  private async receive(socket: SocketLike, data: unknown, target: HubTarget): Promise<void> {
    if (typeof data !== 'string') return;
    const parsed = parseFrame(HubMessageSchema, data);
    if (!parsed.ok) {
      this.options.log?.(`ignored an invalid hub frame: ${parsed.error}`);
      return;
    }
    const message = parsed.message;
    // The hub's heartbeat only keeps this worker alive; answering it is what made the storm.
    if (message.type === 'heartbeat') return;
    if (message.type === 'welcome') {
      if (message.protocol !== PROTOCOL_VERSION) {
        this.mismatch = { hubProtocol: message.protocol };
        this.giveUp(socket, target, `the hub speaks protocol ${message.protocol}`);
        return;
      }
      this.welcomed = true;
      this.everWelcomed = true;
      this.attempt = 0;
      this.mismatch = null;
      this.startHeartbeat(socket);
      if (this.welcomeTimer !== null) this.options.clock.clearTimeout(this.welcomeTimer);
      this.welcomeTimer = null;
      this.options.onState({ state: 'connected', since: this.options.clock.now(), detail: `port ${target.port}`, everConnected: true });
      await this.options.onWelcome(message.pending, target.pairingCode || null);
      return;
    }
    if (message.type === 'error') {
      this.options.log?.(`hub error ${message.code}: ${message.message}`);
      // A hub of protocol 1 refused our hello this way and kept the socket open.
      if (message.code === 'unsupported_protocol' && !this.welcomed) {
        this.mismatch = { hubProtocol: null };
        this.giveUp(socket, target, 'the hub does not speak this protocol');
        return;
      }
    }
    await this.options.onMessage(message);
  }

  private startHeartbeat(socket: SocketLike): void {
    const { clock } = this.options;
    if (this.heartbeatTimer !== null) clock.clearTimeout(this.heartbeatTimer);
    const beat = () => {
      this.heartbeatTimer = clock.setTimeout(() => {
        if (this.socket !== socket || !this.connected) return;
        socket.send(JSON.stringify({ type: 'heartbeat', t: clock.now() } satisfies PeerMessage));
        beat();
      }, HEARTBEAT_MS);
    };
    beat();
  }

  private scheduleReconnect(target: HubTarget, detail: string): void {
    const { clock } = this.options;
    const delay = backoffDelay(this.attempt++, () => clock.random());
    const retryAt = clock.now() + delay;
    if (this.mismatch) {
      this.options.onState({
        state: 'version_mismatch',
        hubProtocol: this.mismatch.hubProtocol,
        extensionProtocol: PROTOCOL_VERSION,
        retryAt,
        since: clock.now(),
        everConnected: this.everWelcomed,
      });
    } else {
      const pairing = this.options.originNeedsPairing && !this.everWelcomed;
      this.options.onState({
        state: pairing ? 'pairing_needed' : 'reconnecting',
        retryAt,
        detail: pairing && target.pairingCode ? 'the pairing code was refused or has expired' : detail,
        since: clock.now(),
        everConnected: this.everWelcomed,
      });
    }
    this.cancelTimer();
    this.timer = clock.setTimeout(() => {
      this.timer = null;
      this.ensure();
    }, delay);
  }
}

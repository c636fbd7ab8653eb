import { backoffDelay } from '../../shared/backoff.js';
import { DEFAULT_HUB_PORT } from '../../shared/extension-id.js';
import {
  HubMessageSchema, PAIRING_PREFIX, PROTOCOL_VERSION, SUBPROTOCOL, parseFrame,
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
  onclose: ((event: { code: number }) => void) | null;
  onerror: ((event: unknown) => void) | null;
}
export type SocketFactory = (url: string, protocols: string[]) => SocketLike;

export interface Clock {
  now(): number;
  random(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface HubTarget { port: number; pairingCode: string }

export interface HubConnectionOptions {
  socketFactory: SocketFactory;
  clock: Clock;
  target: () => Promise<HubTarget>;
  client: { name: string; version: string };
  /** Whether this browser's extension origin can only be trusted after pairing (Firefox's per-install origin). */
  originNeedsPairing: boolean;
  everConnected: boolean;
  onWelcome(pending: RequestView[], pairedWith: string | null): Promise<void>;
  onMessage(message: Exclude<HubMessage, { type: 'welcome' | 'heartbeat' }>): void;
  onState(state: ConnectionState): void;
  log?(message: string): void;
}

const OPEN = 1;

/**
 * One socket to the hub, kept up: hello on open, heartbeats answered (messages, not pings, are what keep an MV3 worker
 * alive), and on any close a reconnect after a jittered backoff (1 s doubling to 30 s). `ensure()` is idempotent so
 * the alarm safety net and page wake-ups can call it freely.
 */
export class HubConnection {
  private socket: SocketLike | null = null;
  private welcomed = false;
  private attempt = 0;
  private timer: unknown = null;
  private everWelcomed: boolean;

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
    this.socket = null;
    this.welcomed = false;
    if (socket) {
      socket.onclose = null;
      socket.close(1000, 'reconnecting');
    }
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

  private async open(): Promise<void> {
    const { clock } = this.options;
    const placeholder = {} as SocketLike;
    // Claim the slot before the await so a second ensure() does not open a second socket.
    this.socket = placeholder;
    let target: HubTarget;
    try {
      target = await this.options.target();
    } catch {
      target = { port: DEFAULT_HUB_PORT, pairingCode: '' };
    }
    if (this.socket !== placeholder) return;
    const protocols = [SUBPROTOCOL, ...(target.pairingCode ? [`${PAIRING_PREFIX}${target.pairingCode}`] : [])];
    this.options.onState({ state: this.attempt === 0 ? 'connecting' : 'reconnecting', since: clock.now(), everConnected: this.everWelcomed });
    let socket: SocketLike;
    try {
      socket = this.options.socketFactory(`ws://127.0.0.1:${target.port}`, protocols);
    } catch (error) {
      this.socket = null;
      this.scheduleReconnect(target, `could not open a socket: ${String(error)}`);
      return;
    }
    this.socket = socket;
    socket.onopen = () => {
      socket.send(JSON.stringify({ type: 'hello', protocol: PROTOCOL_VERSION, role: 'extension', client: this.options.client } satisfies PeerMessage));
    };
    socket.onmessage = (event) => void this.receive(socket, event.data, target);
    socket.onerror = () => {};
    socket.onclose = () => {
      if (this.socket !== socket) return;
      this.socket = null;
      this.welcomed = false;
      this.scheduleReconnect(target, 'the hub closed the connection or is not running');
    };
  }

  private async receive(socket: SocketLike, data: unknown, target: HubTarget): Promise<void> {
    if (typeof data !== 'string') return;
    const parsed = parseFrame(HubMessageSchema, data);
    if (!parsed.ok) {
      this.options.log?.(`ignored an invalid hub frame: ${parsed.error}`);
      return;
    }
    const message = parsed.message;
    if (message.type === 'heartbeat') {
      socket.send(JSON.stringify({ type: 'heartbeat', t: message.t } satisfies PeerMessage));
      return;
    }
    if (message.type === 'welcome') {
      this.welcomed = true;
      this.everWelcomed = true;
      this.attempt = 0;
      this.options.onState({ state: 'connected', since: this.options.clock.now(), detail: `port ${target.port}`, everConnected: true });
      await this.options.onWelcome(message.pending, target.pairingCode || null);
      return;
    }
    if (message.type === 'error') this.options.log?.(`hub error ${message.code}: ${message.message}`);
    this.options.onMessage(message);
  }

  private scheduleReconnect(target: HubTarget, detail: string): void {
    const { clock } = this.options;
    const delay = backoffDelay(this.attempt++, () => clock.random());
    const pairing = this.options.originNeedsPairing && !this.everWelcomed;
    this.options.onState({
      state: pairing ? 'pairing_needed' : 'reconnecting',
      retryAt: clock.now() + delay,
      detail: pairing && target.pairingCode ? 'the pairing code was refused or has expired' : detail,
      since: clock.now(),
      everConnected: this.everWelcomed,
    });
    this.cancelTimer();
    this.timer = clock.setTimeout(() => {
      this.timer = null;
      this.ensure();
    }, delay);
  }
}

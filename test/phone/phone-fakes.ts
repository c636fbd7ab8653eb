import { checkProposalInput } from '../../shared/approval-input.js';
import { hubProof, newNonce, peerProof, sealKey, type ProofBinding } from '../../shared/hub-auth.js';
import type { HubMessage, PeerMessage, RequestView } from '../../shared/wire-protocol.js';
import type { HubKey } from '../../extension/db/rows.js';
import { DeviceConnection, type Clock, type DeviceConnectionOptions, type DeviceEvent, type DeviceState, type KeyStore, type NotPairedReason, type SocketLike } from '../../phone/device-connection.js';
import { northmarkProposal } from '../fixtures/northmark.js';

export const HUB_PORT = 17391;
/** The page as a tunnel serves it: the origin is not the hub's loopback address, and the port the phone dialled is 443. */
export const ORIGIN = 'https://laptop.tailnet.example';
export const BINDING: ProofBinding = { port: HUB_PORT, role: 'device', origin: ORIGIN };
export const TEST_KEY = '5e'.repeat(32);
export const TEST_KEY_ID = 'k_0123456789abcdef';
export const TEST_CODE = '0a1b2c3d4e5f';

/** A socket the test drives: it records what the page sent and delivers what the "hub" says. */
export class FakeSocket implements SocketLike {
  readyState = 0;
  readonly sent: PeerMessage[] = [];
  onopen: ((event: unknown) => void) | null = null;
  onmessage: ((event: { data: unknown }) => void) | null = null;
  onclose: ((event: { code: number; reason: string }) => void) | null = null;
  onerror: ((event: unknown) => void) | null = null;
  closed = false;

  constructor(readonly url: string, readonly protocols: string[]) {}

  send(data: string): void {
    this.sent.push(JSON.parse(data) as PeerMessage);
  }
  close(code?: number, reason?: string): void {
    if (this.closed) return;
    this.closed = true;
    this.readyState = 3;
    this.onclose?.({ code: code ?? 1005, reason: reason ?? '' });
  }
  open(): void {
    this.readyState = 1;
    this.onopen?.({});
  }
  deliver(message: HubMessage | string): void {
    this.onmessage?.({ data: typeof message === 'string' ? message : JSON.stringify(message) });
  }
  closeFromHub(code: number, reason = ''): void {
    this.readyState = 3;
    this.onclose?.({ code, reason });
  }
  types(): string[] {
    return this.sent.map((m) => m.type);
  }
}

/** Manual time: timers run only when the test advances the clock. */
export class ManualClock implements Clock {
  t = 1_000_000;
  private timers: { at: number; fn: () => void; id: number }[] = [];
  private nextId = 1;
  now(): number { return this.t; }
  random(): number { return 0.5; }
  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.nextId++;
    this.timers.push({ at: this.t + ms, fn, id });
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.timers = this.timers.filter((t) => t.id !== handle);
  }
  advance(ms: number): void {
    this.t += ms;
    const due = this.timers.filter((t) => t.at <= this.t);
    this.timers = this.timers.filter((t) => t.at > this.t);
    for (const t of due) t.fn();
  }
}

export class MemoryKeys implements KeyStore {
  constructor(public key: HubKey | null = null) {}
  read(): HubKey | null { return this.key; }
  write(key: HubKey): void { this.key = key; }
  clear(): void { this.key = null; }
}

/** Waits (bounded) until `ready()` holds: the proofs are Web Crypto, which settles on its own schedule. */
export async function until(ready: () => boolean, what: string, attempts = 500): Promise<void> {
  for (let i = 0; i < attempts; i++) {
    if (ready()) return;
    await new Promise((r) => setTimeout(r, 1));
  }
  throw new Error(`gave up waiting for ${what}`);
}

/** Lets promise chains the code started without awaiting run (bounded). */
export async function settle(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise((r) => setTimeout(r, 0));
}

type Sent<T extends PeerMessage['type']> = Extract<PeerMessage, { type: T }>;

export async function nextSent<T extends PeerMessage['type']>(socket: FakeSocket, type: T): Promise<Sent<T>> {
  const find = () => socket.sent.find((m): m is Sent<T> => m.type === type);
  await until(() => find() !== undefined, `the page to send ${type}`);
  return find()!;
}

/** The hub's side of the handshake: its proof of `secret` (or a forged one, or one bound elsewhere), then it checks ours. */
export async function proveHub(socket: FakeSocket, secret: string, options: { forge?: boolean; binding?: ProofBinding } = {}): Promise<{ hubNonce: string; peerNonce: string }> {
  const hello = await nextSent(socket, 'hello');
  const hubNonce = newNonce();
  const binding = options.binding ?? BINDING;
  socket.deliver({ type: 'challenge', nonce: hubNonce, proof: await hubProof(options.forge ? 'f0'.repeat(32) : secret, binding, hello.nonce, hubNonce) });
  if (options.forge || options.binding) return { hubNonce, peerNonce: hello.nonce };
  const auth = await nextSent(socket, 'auth');
  if (auth.proof !== await peerProof(secret, BINDING, hubNonce, hello.nonce)) throw new Error('the page proved another secret');
  return { hubNonce, peerNonce: hello.nonce };
}

export async function pairHub(socket: FakeSocket, code: string, key = TEST_KEY, keyId = TEST_KEY_ID): Promise<void> {
  const { hubNonce, peerNonce } = await proveHub(socket, code);
  socket.deliver({ type: 'paired', keyId, sealedKey: await sealKey(key, code, HUB_PORT, hubNonce, peerNonce) });
}

export function welcome(pending: RequestView[] = [], recent: RequestView[] = []): HubMessage {
  return { type: 'welcome', protocol: 8, hubPid: 1, pending, rules: [], recent };
}

export function proposalView(id: string, createdAt: number, overrides: Partial<RequestView> = {}): RequestView {
  const checked = checkProposalInput(northmarkProposal);
  if (!checked.ok) throw new Error('fixture invalid');
  return {
    elicitationId: id,
    kind: 'proposal',
    status: 'pending',
    message: checked.request.message,
    createdAt,
    expiresAt: createdAt + 3_600_000,
    requester: { client: 'claude-code', pid: 4242 },
    request: { ...checked.request },
    renderedTemplate: null,
    ...overrides,
  };
}

/** A connection on fakes, recording everything it tells the page. */
export function deviceHarness(key: HubKey | null = { keyId: TEST_KEY_ID, key: TEST_KEY }, overrides: Partial<DeviceConnectionOptions> = {}) {
  const clock = new ManualClock();
  const keys = new MemoryKeys(key);
  const sockets: FakeSocket[] = [];
  const states: DeviceState[] = [];
  const welcomes: { pending: RequestView[]; recent: RequestView[] }[] = [];
  const events: DeviceEvent[] = [];
  const refusals: NotPairedReason[] = [];
  const connection = new DeviceConnection({
    url: `${ORIGIN.replace(/^http/, 'ws')}/phone/socket`,
    hubPort: HUB_PORT,
    origin: ORIGIN,
    socketFactory: (url, protocols) => {
      const socket = new FakeSocket(url, protocols);
      sockets.push(socket);
      return socket;
    },
    clock,
    keys,
    client: { name: 'elicitly-phone', version: 'test' },
    onState: (s) => states.push(s),
    onWelcome: (pending, recent) => welcomes.push({ pending, recent }),
    onEvent: (e) => events.push(e),
    onPairingRefused: (r) => refusals.push(r),
    ...overrides,
  });
  const last = () => {
    const socket = sockets.at(-1);
    if (!socket) throw new Error('no socket was opened');
    return socket;
  };
  return { clock, keys, sockets, states, welcomes, events, refusals, connection, last, state: () => states.at(-1) };
}

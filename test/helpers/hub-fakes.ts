import type { DevicePush } from '../../server/hub/hub-service.js';
import { checkProposalInput } from '../../shared/approval-input.js';
import { hubProof, newNonce, peerProof, sealKey, type ProofBinding } from '../../shared/hub-auth.js';
import type { HubFrame, PeerFrame, RequestView } from '../../shared/wire-protocol.js';
import type { Welcome } from '../../shared/peer-calls.js';
import { PROTOCOL_VERSION } from '../../shared/wire-protocol.js';
import type { Clock, SocketLike } from '../../kit/hub/hub-connection.js';
import { northmarkProposal } from '../fixtures/northmark.js';

// The fakes of the hub socket's one client (kit/hub/hub-connection.ts), for the extension's tests and the phone
// page's alike.

/** A socket the test drives: it records what the client (the extension, the phone page) sent and delivers what the "hub" says. */
export class FakeSocket implements SocketLike {
  readyState = 0;
  readonly sent: PeerFrame[] = [];
  onopen: ((event: unknown) => void) | null = null;
  onmessage: ((event: { data: unknown }) => void) | null = null;
  onclose: ((event: { code: number; reason: string }) => void) | null = null;
  onerror: ((event: unknown) => void) | null = null;
  closed = false;
  /** How the client closed this socket, when it did. */
  closedWith: { code: number | undefined; reason: string | undefined } | null = null;

  constructor(readonly url: string, readonly protocols: string[]) {}

  /** Called with every frame the client sends, after it is recorded: a test can make the fake hub react. */
  onSent: ((message: PeerFrame) => void) | null = null;

  send(data: string): void {
    const message = JSON.parse(data) as PeerFrame;
    this.sent.push(message);
    this.onSent?.(message);
  }
  close(code?: number, reason?: string): void {
    if (this.closed) return;
    this.closed = true;
    this.closedWith = { code, reason };
    this.readyState = 3;
    this.onclose?.({ code: code ?? 1005, reason: reason ?? '' });
  }
  open(): void {
    this.readyState = 1;
    this.onopen?.({});
  }
  deliver(message: HubFrame | string): void {
    this.onmessage?.({ data: typeof message === 'string' ? message : JSON.stringify(message) });
  }
  drop(): void {
    this.readyState = 3;
    this.onclose?.({ code: 1006, reason: '' });
  }
  /** The hub closes the socket with a code and reason (e.g. a protocol mismatch). */
  closeFromHub(code: number, reason = ''): void {
    this.readyState = 3;
    this.onclose?.({ code, reason });
  }
  /** The methods of what the client sent, calls and notices alike, in order. */
  methods(): string[] {
    return this.sent.map((m) => m.method);
  }
  /** Answers the client's call `id` with a result, as the hub would. */
  answer(id: string | undefined, result: unknown): void {
    if (id === undefined) throw new Error('FakeSocket.answer: that frame was a notice, not a call');
    this.deliver({ id, result });
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
  pendingDelays(): number[] {
    return this.timers.map((t) => t.at - this.t);
  }
  advance(ms: number): void {
    this.t += ms;
    const due = this.timers.filter((t) => t.at <= this.t);
    this.timers = this.timers.filter((t) => t.at > this.t);
    for (const t of due) t.fn();
  }
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

/** Settles promise chains the code under test started without awaiting (bounded). */
export async function settle(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise((r) => setTimeout(r, 0));
}

/**
 * Waits (bounded) until `ready()` holds: the handshake's proofs are Web Crypto, which settles on its own schedule rather
 * than in a fixed number of turns of the event loop.
 */
export async function until(ready: () => boolean, what: string, attempts = 500): Promise<void> {
  for (let i = 0; i < attempts; i++) {
    if (ready()) return;
    await new Promise((r) => setTimeout(r, 1));
  }
  throw new Error(`gave up waiting for ${what}`);
}

/** A key and key id as a hub hands them out. */
export const TEST_KEY = '5e'.repeat(32);
export const TEST_KEY_ID = 'k_0123456789abcdef';
/** A pairing code as `elicitly-companion pair` prints it. */
export const TEST_CODE = '0a1b2c3d4e5f';

/** A call or notice the client sent, with its params typed by the test. */
export interface Sent<P = Record<string, unknown>> {
  id?: string;
  method: string;
  params: P;
}

/** The first frame with this method the client sends after the first `after` (bounded). */
export async function nextSent<P = Record<string, unknown>>(socket: FakeSocket, method: string, after = 0): Promise<Sent<P>> {
  const find = () => socket.sent.slice(after).find((m) => m.method === method);
  await until(() => find() !== undefined, `the client to send ${method}`);
  return find() as Sent<P>;
}

/** A welcome as the hub sends it, with what a test gives. */
export function welcomeOf(fields: Partial<Welcome> = {}): Welcome {
  return { protocol: PROTOCOL_VERSION, hubPid: 1, pending: [], rules: [], ...fields };
}

/**
 * What both clients of the hub socket send, as the fake hub checks it: `binding` is what the client binds its proofs
 * to. Answers the hello with the hub's proof and waits for the auth, whose id it returns for the test to answer (with
 * `welcomeHub`, or anything else).
 */
export async function proveHub(socket: FakeSocket, secret: string, binding: ProofBinding, options: { forge?: boolean; bindElsewhere?: ProofBinding } = {}): Promise<{ hubNonce: string; peerNonce: string; authId: string }> {
  const hello = await nextSent<{ nonce: string }>(socket, 'hello');
  const hubNonce = newNonce();
  const proof = await hubProof(options.forge ? 'f0'.repeat(32) : secret, options.bindElsewhere ?? binding, hello.params.nonce, hubNonce);
  socket.answer(hello.id, { nonce: hubNonce, proof });
  if (options.forge || options.bindElsewhere) return { hubNonce, peerNonce: hello.params.nonce, authId: '' };
  const auth = await nextSent<{ proof: string }>(socket, 'auth');
  if (auth.params.proof !== await peerProof(secret, binding, hubNonce, hello.params.nonce)) throw new Error('the client proved another secret');
  return { hubNonce, peerNonce: hello.params.nonce, authId: auth.id ?? '' };
}

/** The whole handshake as a hub with `secret` runs it, ending with this welcome. */
export async function welcomeHub(socket: FakeSocket, secret: string, binding: ProofBinding, welcome: Partial<Welcome> = {}): Promise<void> {
  const { authId } = await proveHub(socket, secret, binding);
  socket.answer(authId, { welcome: welcomeOf(welcome) });
}

/** A pairing as the hub does it: prove the code, then answer the auth with `key` sealed with it and the welcome. */
export async function pairHub(socket: FakeSocket, code: string, binding: ProofBinding, key = TEST_KEY, keyId = TEST_KEY_ID, welcome: Partial<Welcome> = {}): Promise<void> {
  const { hubNonce, peerNonce, authId } = await proveHub(socket, code, binding);
  socket.answer(authId, { paired: { keyId, sealedKey: await sealKey(key, code, binding.port, hubNonce, peerNonce) }, welcome: welcomeOf(welcome) });
}

/** A socket factory that keeps every socket it made, and the last one (a test fails if none was opened). */
export function fakeSockets(): { sockets: FakeSocket[]; factory: (url: string, protocols: string[]) => FakeSocket; last: () => FakeSocket } {
  const sockets: FakeSocket[] = [];
  return {
    sockets,
    factory: (url, protocols) => {
      const socket = new FakeSocket(url, protocols);
      sockets.push(socket);
      return socket;
    },
    last: () => {
      const socket = sockets.at(-1);
      if (!socket) throw new Error('no socket was opened');
      return socket;
    },
  };
}

/** For handlers under test that no device calls for push: any use of it is a test's mistake. */
export const NO_PUSH: DevicePush = {
  info: () => {
    throw new Error('push.info was not expected here');
  },
  subscribe: () => {
    throw new Error('push.subscribe was not expected here');
  },
};

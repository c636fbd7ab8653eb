import { constantTimeEqual, hubProof, newNonce, openSealedKey, peerProof, type AuthRole, type ProofBinding } from './hub-auth.js';
import { HubMessageSchema, PROTOCOL_VERSION, parseFrame, type HubMessage, type PeerMessage } from './wire-protocol.js';

/**
 * The peer's side of the handshake of `hub-auth.ts`, written once for every client of the hub: the extension and the
 * phone page (`extension/hub/hub-connection.ts`) and the relays (`server/hub/relay-client.ts`). It is a state machine
 * over frames and nothing else: the caller owns the socket, the timeouts and what a refusal means to it, sends what a
 * step says to send, and hands frames over one at a time, in order (a step is asynchronous only for Web Crypto).
 *
 *   challenge  hello sent; the hub has proved nothing, so anything but a challenge whose proof checks out is refused
 *   key        (pairing) our proof sent; the hub must hand over a key sealed with the code before its welcome
 *   welcome    our proof sent (and the key opened); waiting for the welcome
 *
 * Heartbeats and error frames are passed over in every phase. Once the hub has proved the secret it is ours, so what
 * else it sends out of place before its welcome is only noted; a hub that has not is told nothing more.
 */

export type HandshakePhase = 'challenge' | 'key' | 'welcome';

/** What the hello names besides the nonce: the key by its id (none: a local relay's install key), or a pairing. */
export type HandshakeClaim = { keyId?: string } | { pairing: true; deviceName?: string };

export interface HandshakeOptions {
  role: AuthRole;
  client: { name: string; version: string };
  /** What both sides prove: a paired or exported key, the install key, or the normalized pairing code. */
  secret: string;
  claim: HandshakeClaim;
  binding: ProofBinding;
  /** Our nonce; a fresh one when not given (a test fixes it). */
  nonce?: string;
}

export interface ClientHandshake {
  readonly phase: HandshakePhase;
  readonly options: Omit<HandshakeOptions, 'nonce'>;
  readonly nonce: string;
  /** The hub's nonce, once its challenge checked out. */
  readonly hubNonce: string;
}

export type WelcomeFrame = Extract<HubMessage, { type: 'welcome' }>;

/**
 * Why the handshake ends without a welcome. `unproven` and `wrong_proof`: whatever answered never proved the secret
 * (an impostor on the port, or, when pairing, as likely a mistyped code). `mismatch`: the hub speaks another protocol
 * (`hubProtocol` null: it did not say which). `broken`: the hub proved the secret, then broke the pairing.
 */
export type HandshakeRefusal =
  | { kind: 'unproven' | 'wrong_proof' | 'broken'; why: string }
  | { kind: 'mismatch'; hubProtocol: number | null; why: string };

/**
 * One step: the next state with what to send and, when pairing, the key the hub handed over (to keep before the
 * welcome); or the welcome; or a refusal. `note` is something out of place that was passed over, for the log.
 */
export type HandshakeStep =
  | { state: ClientHandshake; send?: PeerMessage; paired?: { keyId: string; key: string }; note?: string }
  | { welcome: WelcomeFrame }
  | { refusal: HandshakeRefusal };

/** The hello to send as the socket opens, and the state that waits for the hub's challenge. */
export function startHandshake(options: HandshakeOptions): { state: ClientHandshake; send: PeerMessage } {
  const { nonce = newNonce(), ...rest } = options;
  const send: PeerMessage = { type: 'hello', protocol: PROTOCOL_VERSION, role: rest.role, client: rest.client, nonce, ...rest.claim };
  return { state: { phase: 'challenge', options: rest, nonce, hubNonce: '' }, send };
}

/** The step a frame from the hub makes: `data` as the socket delivered it (a string, or anything else for binary). */
export async function nextHandshake(state: ClientHandshake, data: unknown): Promise<HandshakeStep> {
  const proven = state.phase !== 'challenge';
  const passOver = (note?: string): HandshakeStep => ({ state, ...(note === undefined ? {} : { note }) });
  if (typeof data !== 'string') return proven ? passOver('ignored a binary frame from the hub') : unproven('it sent a binary frame');
  const parsed = parseFrame(HubMessageSchema, data);
  if (!parsed.ok) return proven ? passOver(`ignored an invalid hub frame: ${parsed.error}`) : unproven(`it sent an invalid frame (${parsed.error})`);
  const message = parsed.message;
  // A hub of protocol 1 refused our hello this way and kept the socket open.
  if (message.type === 'error' && message.code === 'unsupported_protocol') {
    return { refusal: { kind: 'mismatch', hubProtocol: null, why: `the hub does not speak this protocol: ${message.message}` } };
  }
  // Neither says anything that could be taken for a proof or a welcome: a heartbeat only keeps a socket alive, and the
  // hello window bounds a hub that only ever answers with errors.
  if (message.type === 'heartbeat') return passOver();
  if (message.type === 'error') return passOver(`hub error ${message.code}: ${message.message}`);
  if (state.phase === 'challenge') return message.type === 'challenge' ? challenge(state, message) : unproven(`it sent ${message.type} before proving itself`);
  if (state.phase === 'key') {
    if (message.type === 'paired') return paired(state, message);
    if (message.type === 'welcome') return { refusal: { kind: 'broken', why: 'the hub welcomed this browser without handing over a key' } };
  } else if (message.type === 'welcome') {
    if (message.protocol !== PROTOCOL_VERSION) return { refusal: { kind: 'mismatch', hubProtocol: message.protocol, why: `the hub speaks protocol ${message.protocol}` } };
    return { welcome: message };
  }
  // The welcome lists everything pending, so nothing the hub says before it is lost by being passed over.
  return passOver(`ignored ${message.type} from the hub before its welcome`);
}

function unproven(why: string): HandshakeStep {
  return { refusal: { kind: 'unproven', why } };
}

async function challenge(state: ClientHandshake, message: Extract<HubMessage, { type: 'challenge' }>): Promise<HandshakeStep> {
  const { secret, binding, claim } = state.options;
  const expected = await hubProof(secret, binding, state.nonce, message.nonce);
  if (!constantTimeEqual(message.proof, expected)) return { refusal: { kind: 'wrong_proof', why: 'its proof is wrong' } };
  const proof = await peerProof(secret, binding, message.nonce, state.nonce);
  const phase: HandshakePhase = 'pairing' in claim ? 'key' : 'welcome';
  return { state: { ...state, phase, hubNonce: message.nonce }, send: { type: 'auth', proof } };
}

async function paired(state: ClientHandshake, message: Extract<HubMessage, { type: 'paired' }>): Promise<HandshakeStep> {
  const key = await openSealedKey(message.sealedKey, state.options.secret, state.options.binding.port, state.hubNonce, state.nonce);
  if (key === null) return { refusal: { kind: 'broken', why: 'the hub handed over a key that does not open' } };
  return { state: { ...state, phase: 'welcome' }, paired: { keyId: message.keyId, key } };
}

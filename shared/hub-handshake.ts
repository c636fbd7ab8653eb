import { constantTimeEqual, hubProof, newNonce, openSealedKey, peerProof, type AuthRole, type HubSecret, type ProofBinding } from './hub-auth.js';
import { parseResult, type Params, type Welcome } from './peer-calls.js';
import { HubFrameSchema, PROTOCOL_VERSION, firstIssue, isAnswer, isLegacyError, type CallFrame } from './wire-protocol.js';

/**
 * The peer's side of the handshake of `hub-auth.ts`, written once for every client of the hub: the extension and the
 * phone page (`kit/hub/hub-connection.ts`) and the relays (`server/hub/relay-client.ts`). It is a state machine
 * over frames and nothing else: the caller owns the socket, the timeouts and what a refusal means to it, sends what a
 * step says to send, and hands frames over one at a time, in order (a step is asynchronous only for Web Crypto). The
 * handshake is two calls of the peer call map, `hello` and `auth`:
 *
 *   challenge  `hello` sent; the hub has proved nothing, so anything but its answer with a proof that checks out is refused
 *   welcome    `auth` sent with our proof; its answer is the welcome (and, when pairing, the key sealed with the code)
 *
 * Heartbeats are passed over in every phase. Once the hub has proved the secret it is ours, so what else it sends out
 * of place before its welcome is only noted; a hub that has not is told nothing more.
 */

type HandshakePhase = 'challenge' | 'welcome';

/** What the hello names besides the nonce: the key by its id (none: a local relay's install key), or a pairing. */
export type HandshakeClaim = { keyId?: string } | { pairing: true; deviceName?: string };

export interface HandshakeOptions {
  role: AuthRole;
  client: { name: string; version: string };
  /** What both sides prove: a paired or exported key, the install key, or the normalized pairing code. */
  secret: HubSecret;
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

/** The two calls' ids: the only calls on a socket before its welcome. */
export const HELLO_ID = 'hello';
export const AUTH_ID = 'auth';

/**
 * Why the handshake ends without a welcome. `unproven` and `wrong_proof`: whatever answered never proved the secret
 * (an impostor on the port, or, when pairing, as likely a mistyped code). `mismatch`: the hub speaks another protocol
 * (`hubProtocol` null: it did not say which). `broken`: the hub refused a step, or proved the secret, then broke the
 * pairing.
 */
export type HandshakeRefusal =
  | { kind: 'unproven' | 'wrong_proof' | 'broken'; why: string }
  | { kind: 'mismatch'; hubProtocol: number | null; why: string };

/**
 * One step: the next state with what to send; or the welcome, with the key the hub handed over when pairing (to keep
 * before anything of the welcome is applied); or a refusal. `note` is something out of place that was passed over.
 */
export type HandshakeStep =
  | { state: ClientHandshake; send?: CallFrame; note?: string }
  | { welcome: Welcome; paired?: { keyId: string; key: string } }
  | { refusal: HandshakeRefusal };

/** The hello to send as the socket opens, and the state that waits for the hub's challenge. */
export function startHandshake(options: HandshakeOptions): { state: ClientHandshake; send: CallFrame } {
  const { nonce = newNonce(), ...rest } = options;
  const params = { protocol: PROTOCOL_VERSION, role: rest.role, client: rest.client, nonce, ...rest.claim };
  return { state: { phase: 'challenge', options: rest, nonce, hubNonce: '' }, send: { id: HELLO_ID, method: 'hello', params } };
}

/** The step a frame from the hub makes: `data` as the socket delivered it (a string, or anything else for binary). */
export async function nextHandshake(state: ClientHandshake, data: unknown): Promise<HandshakeStep> {
  const proven = state.phase !== 'challenge';
  const passOver = (note?: string): HandshakeStep => ({ state, ...(note === undefined ? {} : { note }) });
  if (typeof data !== 'string') return proven ? passOver('ignored a binary frame from the hub') : unproven('it sent a binary frame');
  let raw: unknown;
  try {
    raw = JSON.parse(data);
  } catch {
    return proven ? passOver('ignored a hub frame that is not JSON') : unproven('it sent a frame that is not JSON');
  }
  // Hubs of protocols 1 to 8 answer this protocol's hello with a frame of their own shape (`{ type: "error", … }`).
  if (isLegacyError(raw)) return { refusal: { kind: 'mismatch', hubProtocol: null, why: 'the hub speaks an older protocol' } };
  const parsed = HubFrameSchema.safeParse(raw);
  if (!parsed.success) return proven ? passOver(`ignored an invalid hub frame: ${firstIssue(parsed.error)}`) : unproven(`it sent an invalid frame (${firstIssue(parsed.error)})`);
  const frame = parsed.data;
  if (!isAnswer(frame)) {
    // A heartbeat says nothing that could be taken for a proof or a welcome; the hello window bounds a hub that only sends them.
    if (frame.method === 'heartbeat') return passOver();
    // The welcome lists everything pending, so nothing a proven hub notifies before it is lost by being passed over.
    return proven ? passOver(`ignored ${frame.method} from the hub before its welcome`) : unproven(`it sent ${frame.method} before proving itself`);
  }
  const expected = state.phase === 'challenge' ? HELLO_ID : AUTH_ID;
  if (frame.id !== expected) return proven ? passOver(`ignored an answer to ${String(frame.id)} before the welcome`) : unproven('it answered a call that was never made');
  if ('error' in frame) return { refusal: { kind: 'broken', why: `the hub refused ${expected}: ${frame.error.message}` } };
  return state.phase === 'challenge' ? challenge(state, frame.result) : welcome(state, frame.result);
}

function unproven(why: string): HandshakeStep {
  return { refusal: { kind: 'unproven', why } };
}

async function challenge(state: ClientHandshake, result: unknown): Promise<HandshakeStep> {
  const checked = parseResult('hello', result);
  if (!checked.success) return unproven(`its challenge is malformed (${firstIssue(checked.error)})`);
  const { secret, binding } = state.options;
  const { nonce, proof } = checked.data;
  const expected = await hubProof(secret, binding, state.nonce, nonce);
  if (!constantTimeEqual(proof, expected)) return { refusal: { kind: 'wrong_proof', why: 'its proof is wrong' } };
  const ours = await peerProof(secret, binding, nonce, state.nonce);
  return { state: { ...state, phase: 'welcome', hubNonce: nonce }, send: { id: AUTH_ID, method: 'auth', params: { proof: ours } satisfies Params<'auth'> } };
}

async function welcome(state: ClientHandshake, result: unknown): Promise<HandshakeStep> {
  const checked = parseResult('auth', result);
  if (!checked.success) return { refusal: { kind: 'broken', why: `the hub's welcome is malformed (${firstIssue(checked.error)})` } };
  const { paired, welcome: frame } = checked.data;
  if (frame.protocol !== PROTOCOL_VERSION) return { refusal: { kind: 'mismatch', hubProtocol: frame.protocol, why: `the hub speaks protocol ${frame.protocol}` } };
  if (!('pairing' in state.options.claim)) return { welcome: frame };
  if (!paired) return { refusal: { kind: 'broken', why: 'the hub welcomed this browser without handing over a key' } };
  const code = state.options.secret;
  if (typeof code !== 'string') return { refusal: { kind: 'broken', why: 'a pairing is proved with a code' } };
  const key = await openSealedKey(paired.sealedKey, code, state.options.binding.port, state.hubNonce, state.nonce);
  if (key === null) return { refusal: { kind: 'broken', why: 'the hub handed over a key that does not open' } };
  return { welcome: frame, paired: { keyId: paired.keyId, key } };
}

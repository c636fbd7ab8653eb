// The handshake of hub-auth.ts, each side written once: the peers' state machine (shared/hub-handshake.ts, used by the
// extension, the phone page and the relays) as a table of phase × frame, the hub's side (server/hub/hub-handshake.ts)
// on an in-memory state dir, and both run against each other. Protocol 9: the handshake is two calls, `hello` (answered
// with the hub's nonce and proof) and `auth` (answered with the welcome, and a pairing peer's sealed key).
import { describe, expect, it } from 'vitest';
import { DROPPED, HubHandshake, type HandshakeKeys, type HandshakePeer, type HubStep, type Proven } from '../../server/hub/hub-handshake.js';
import { hubProof, newNonce, openSealedKey, peerProof, sealKey, type ProofBinding } from '../../shared/hub-auth.js';
import { AUTH_ID, HELLO_ID, nextHandshake, startHandshake, type ClientHandshake, type HandshakeOptions, type HandshakeStep } from '../../shared/hub-handshake.js';
import { parseParams, type HelloParams, type Result, type Welcome } from '../../shared/peer-calls.js';
import {
  CLOSE_AUTH_FAILED, CLOSE_HUB_FULL, CLOSE_INTERNAL_ERROR, CLOSE_NO_PAIRING, CLOSE_UNKNOWN_KEY, PROTOCOL_VERSION, type HubFrame,
} from '../../shared/wire-protocol.js';

const PORT = 17391;
const KEY = '5e'.repeat(32);
const KEY_ID = 'k_0123456789abcdef';
const CODE = '0a1b2c3d4e5f';
const NEW_KEY = '7c'.repeat(32);
const NEW_KEY_ID = 'k_fedcba9876543210';
const ORIGIN = 'chrome-extension://abcdefghijklmnopabcdefghijklmnop';
const binding: ProofBinding = { port: PORT, role: 'extension' };
const client = { name: 'test', version: '1' };

const keyed: HandshakeOptions = { role: 'extension', client, secret: KEY, claim: { keyId: KEY_ID }, binding };
const pairing: HandshakeOptions = { role: 'extension', client, secret: CODE, claim: { pairing: true }, binding };

const frame = (message: HubFrame) => JSON.stringify(message);
const welcome = (protocol = PROTOCOL_VERSION): Welcome => ({ protocol, hubPid: 1, pending: [], rules: [] });
/** The hub's answer to `auth`: the welcome, and when pairing the key sealed with the code. */
const authAnswer = (result: Result<'auth'>): string => frame({ id: AUTH_ID, result });
/** The key a pairing hub hands over, sealed with the code for this state's nonces. */
async function sealedFor(state: ClientHandshake): Promise<NonNullable<Result<'auth'>['paired']>> {
  return { keyId: NEW_KEY_ID, sealedKey: await sealKey(NEW_KEY, CODE, PORT, state.hubNonce, state.nonce) };
}
/** What a hub of protocols 1 to 8 answered with: its own error frame, in a shape this protocol does not have. */
const legacyError = (code: string, message: string) => JSON.stringify({ type: 'error', code, message });

/** A challenge (the answer to `hello`) from a hub that knows `secret` (or pretends to), for the state's own nonce unless told otherwise. */
async function challenge(state: ClientHandshake, how: { secret?: string; peerNonce?: string; binding?: ProofBinding; hubNonce?: string } = {}): Promise<string> {
  const hubNonce = how.hubNonce ?? newNonce();
  const proof = await hubProof(how.secret ?? state.options.secret, how.binding ?? binding, how.peerNonce ?? state.nonce, hubNonce);
  return frame({ id: HELLO_ID, result: { nonce: hubNonce, proof } });
}

/** The state at `phase`, reached the way a real hub leads there. */
async function at(phase: ClientHandshake['phase'], options: HandshakeOptions): Promise<ClientHandshake> {
  const { state } = startHandshake(options);
  if (phase === 'challenge') return state;
  return advance(await nextHandshake(state, await challenge(state)));
}

function advance(step: HandshakeStep): ClientHandshake {
  if (!('state' in step)) throw new Error(`expected the handshake to go on, got ${JSON.stringify(step)}`);
  return step.state;
}

/** One step in a word: what a caller does with it. */
function outcome(before: ClientHandshake, step: HandshakeStep): string {
  if ('refusal' in step) return step.refusal.kind === 'mismatch' ? `mismatch ${String(step.refusal.hubProtocol)}` : step.refusal.kind;
  if ('welcome' in step) return step.paired ? 'welcomed, keeps the key' : 'welcomed';
  const parts = [step.state.phase === before.phase ? 'stays' : `→ ${step.state.phase}`];
  if (step.send) parts.push(`sends ${step.send.method}`);
  if (step.note !== undefined) parts.push('noted');
  return parts.join(', ');
}

type Frame = (state: ClientHandshake) => unknown;
const frames: Record<string, Frame> = {
  binary: () => new Uint8Array([123, 125]),
  'not JSON': () => 'nope',
  'a frame of no known shape': () => JSON.stringify({ id: 'x1', method: 'decide', params: {} }),
  'a malformed challenge': () => frame({ id: HELLO_ID, result: { nonce: 'xyz', proof: '00' } }),
  heartbeat: () => frame({ method: 'heartbeat', params: { t: 1 } }),
  "an old hub's error (protocol ≤ 8)": () => legacyError('unsupported_protocol', 'protocol 8 only'),
  "an old hub's other error": () => legacyError('rate_limited', 'slow down'),
  'hello refused': () => frame({ id: HELLO_ID, error: { code: 'rate_limited', message: 'slow down' } }),
  'auth refused': () => frame({ id: AUTH_ID, error: { code: 'invalid', message: 'auth comes after hello and its challenge' } }),
  'an error for no call': () => frame({ id: null, error: { code: 'invalid', message: 'not JSON' } }),
  'an answer to a call never made': () => frame({ id: 'c1', result: { ok: true } }),
  'a right challenge': (s) => challenge(s),
  'a challenge proved with another key': (s) => challenge(s, { secret: 'f0'.repeat(32) }),
  'a challenge for an earlier nonce (a replay)': (s) => challenge(s, { peerNonce: newNonce() }),
  'a challenge bound to another port': (s) => challenge(s, { binding: { port: PORT + 1, role: 'extension' } }),
  'a challenge bound to another role': (s) => challenge(s, { binding: { port: PORT, role: 'relay' } }),
  'our own nonce and proof reflected': async (s) => frame({ id: HELLO_ID, result: { nonce: s.nonce, proof: await peerProof(s.options.secret, binding, s.nonce, s.nonce) } }),
  welcome: () => authAnswer({ welcome: welcome() }),
  'a welcome with the key': async (s) => authAnswer({ paired: await sealedFor(s), welcome: welcome() }),
  'a welcome with a key that is not hex': () => frame({ id: AUTH_ID, result: { paired: { keyId: NEW_KEY_ID, sealedKey: 'zz'.repeat(32) }, welcome: welcome() } }),
  'a malformed welcome': () => frame({ id: AUTH_ID, result: { welcome: { protocol: PROTOCOL_VERSION } } }),
  'a welcome of another protocol': () => authAnswer({ welcome: welcome(PROTOCOL_VERSION + 1) }),
  'a request event': () => frame({ method: 'request.removed', params: { elicitationId: 'el_1', status: 'approved' } }),
};

const refusedBeforeProof: [string, string][] = [
  ['binary', 'unproven'],
  ['not JSON', 'unproven'],
  ['a frame of no known shape', 'unproven'],
  ['a malformed challenge', 'unproven'],
  ['heartbeat', 'stays'],
  ["an old hub's error (protocol ≤ 8)", 'mismatch null'],
  ["an old hub's other error", 'mismatch null'],
  ['hello refused', 'broken'],
  ['auth refused', 'unproven'],
  ['an error for no call', 'unproven'],
  ['an answer to a call never made', 'unproven'],
  ['a challenge proved with another key', 'wrong_proof'],
  ['a challenge for an earlier nonce (a replay)', 'wrong_proof'],
  ['a challenge bound to another port', 'wrong_proof'],
  ['a challenge bound to another role', 'wrong_proof'],
  ['our own nonce and proof reflected', 'wrong_proof'],
  ['a welcome with the key', 'unproven'],
  ['welcome', 'unproven'],
  ['a request event', 'unproven'],
];

/** What the peer proves: its key (a paired extension), or the pairing code. */
type Proving = 'a key' | 'a code';
const proving: Record<Proving, HandshakeOptions> = { 'a key': keyed, 'a code': pairing };

const table: [phase: ClientHandshake['phase'], proving: Proving, frame: string, expected: string][] = [
  ...refusedBeforeProof.map(([name, expected]): [ClientHandshake['phase'], Proving, string, string] => ['challenge', 'a key', name, expected]),
  ['challenge', 'a key', 'a right challenge', '→ welcome, sends auth'],
  ['challenge', 'a code', 'a right challenge', '→ welcome, sends auth'],
  ['challenge', 'a code', 'a challenge proved with another key', 'wrong_proof'],
  // Pairing: the hub proved the code; its welcome must carry the key, sealed with the code.
  ['welcome', 'a code', 'a welcome with the key', 'welcomed, keeps the key'],
  ['welcome', 'a code', 'welcome', 'broken'],
  ['welcome', 'a code', 'a welcome with a key that is not hex', 'broken'],
  ['welcome', 'a code', 'a right challenge', 'stays, noted'],
  ['welcome', 'a code', 'a request event', 'stays, noted'],
  ['welcome', 'a code', 'binary', 'stays, noted'],
  ['welcome', 'a code', 'not JSON', 'stays, noted'],
  ['welcome', 'a code', 'heartbeat', 'stays'],
  ['welcome', 'a code', 'auth refused', 'broken'],
  ['welcome', 'a code', "an old hub's error (protocol ≤ 8)", 'mismatch null'],
  // Proven with its key: only the answer to auth ends it.
  ['welcome', 'a key', 'welcome', 'welcomed'],
  ['welcome', 'a key', 'a welcome of another protocol', `mismatch ${PROTOCOL_VERSION + 1}`],
  ['welcome', 'a key', 'a malformed welcome', 'broken'],
  ['welcome', 'a key', 'auth refused', 'broken'],
  // A key handed over to a peer that did not come to pair is not taken: it is welcomed with the key it proved.
  ['welcome', 'a key', 'a welcome with the key', 'welcomed'],
  ['welcome', 'a key', 'a right challenge', 'stays, noted'],
  ['welcome', 'a key', 'hello refused', 'stays, noted'],
  ['welcome', 'a key', 'an error for no call', 'stays, noted'],
  ['welcome', 'a key', 'an answer to a call never made', 'stays, noted'],
  ['welcome', 'a key', 'a frame of no known shape', 'stays, noted'],
  ['welcome', 'a key', 'a request event', 'stays, noted'],
  ['welcome', 'a key', 'binary', 'stays, noted'],
  ['welcome', 'a key', 'a malformed challenge', 'stays, noted'],
  ['welcome', 'a key', 'heartbeat', 'stays'],
  ['welcome', 'a key', "an old hub's error (protocol ≤ 8)", 'mismatch null'],
  ['welcome', 'a key', "an old hub's other error", 'mismatch null'],
];

describe('the peers\' side: every phase × frame', () => {
  it.each(table)('awaiting %s, proving %s: %s → %s', async (phase, secret, name, expected) => {
    const state = await at(phase, proving[secret]);
    const make = frames[name];
    if (!make) throw new Error(`no frame ${name}`);
    expect(outcome(state, await nextHandshake(state, await make(state)))).toBe(expected);
  });

  it('the hello call names the key, nothing (the install key), or the pairing with what a device is called; the nonce is fresh', () => {
    const nonce = 'ab'.repeat(32);
    expect(startHandshake({ ...keyed, nonce }).send).toEqual({ id: HELLO_ID, method: 'hello', params: { protocol: PROTOCOL_VERSION, role: 'extension', client, nonce, keyId: KEY_ID } });
    expect(startHandshake({ ...keyed, role: 'relay', claim: {}, nonce }).send).toEqual({ id: HELLO_ID, method: 'hello', params: { protocol: PROTOCOL_VERSION, role: 'relay', client, nonce } });
    expect(startHandshake({ ...pairing, role: 'device', claim: { pairing: true, deviceName: 'Pixel' }, nonce }).send).toEqual({
      id: HELLO_ID, method: 'hello', params: { protocol: PROTOCOL_VERSION, role: 'device', client, nonce, pairing: true, deviceName: 'Pixel' },
    });
    // What the hub checks it against: every hello this makes is one the call map takes.
    for (const options of [keyed, pairing, { ...pairing, role: 'device' as const, claim: { pairing: true as const, deviceName: 'Pixel' } }]) {
      expect(parseParams('hello', startHandshake(options).send.params).success).toBe(true);
    }
    expect(startHandshake(keyed).state.nonce).not.toBe(startHandshake(keyed).state.nonce);
  });

  it('answers a right challenge with an auth call carrying its own proof over both nonces, and opens the sealed key with the code', async () => {
    const start = await at('challenge', pairing);
    const hubNonce = newNonce();
    const step = await nextHandshake(start, await challenge(start, { hubNonce }));
    expect(step).toMatchObject({ state: { phase: 'welcome', hubNonce }, send: { id: AUTH_ID, method: 'auth', params: { proof: await peerProof(CODE, binding, hubNonce, start.nonce) } } });
    const proven = advance(step);
    expect(await nextHandshake(proven, await frames['a welcome with the key']?.(proven))).toEqual({ welcome: welcome(), paired: { keyId: NEW_KEY_ID, key: NEW_KEY } });
  });

  it('says why, for the log and the person', async () => {
    const start = await at('challenge', keyed);
    expect(await nextHandshake(start, frame({ method: 'request.created', params: {} }))).toEqual({ refusal: { kind: 'unproven', why: 'it sent request.created before proving itself' } });
    expect(await nextHandshake(start, authAnswer({ welcome: welcome() }))).toEqual({ refusal: { kind: 'unproven', why: 'it answered a call that was never made' } });
    expect(await nextHandshake(start, await challenge(start, { secret: 'f0'.repeat(32) }))).toEqual({ refusal: { kind: 'wrong_proof', why: 'its proof is wrong' } });
    const proven = await at('welcome', keyed);
    expect(await nextHandshake(proven, authAnswer({ welcome: welcome(PROTOCOL_VERSION + 1) }))).toEqual({
      refusal: { kind: 'mismatch', hubProtocol: PROTOCOL_VERSION + 1, why: `the hub speaks protocol ${PROTOCOL_VERSION + 1}` },
    });
    expect(await nextHandshake(proven, frame({ method: 'request.removed', params: { elicitationId: 'el_1', status: 'approved' } }))).toMatchObject({ note: 'ignored request.removed from the hub before its welcome' });
    const keyless = await at('welcome', pairing);
    expect(await nextHandshake(keyless, authAnswer({ welcome: welcome() }))).toEqual({ refusal: { kind: 'broken', why: 'the hub welcomed this browser without handing over a key' } });
  });

  it("an old hub's (protocol ≤ 8) `{type:\"error\"}` answer to the hello is a mismatch refusal, its version unknown", async () => {
    const start = await at('challenge', keyed);
    expect(await nextHandshake(start, legacyError('unsupported_protocol', 'this hub speaks protocol 8'))).toEqual({
      refusal: { kind: 'mismatch', hubProtocol: null, why: 'the hub speaks an older protocol' },
    });
  });

  it('a hub answering the hello call with an error ({id:"hello", error}) is a broken refusal naming the error', async () => {
    const start = await at('challenge', keyed);
    expect(await nextHandshake(start, frame({ id: HELLO_ID, error: { code: 'forbidden', message: 'your connection makes you a extension, not a relay' } }))).toEqual({
      refusal: { kind: 'broken', why: 'the hub refused hello: your connection makes you a extension, not a relay' },
    });
  });

  it("a proven hub's answer to auth without `paired`, while pairing, is a broken refusal (no key to keep)", async () => {
    const proven = await at('welcome', pairing);
    const step = await nextHandshake(proven, authAnswer({ welcome: welcome() }));
    expect(step).toEqual({ refusal: { kind: 'broken', why: 'the hub welcomed this browser without handing over a key' } });
    expect(step).not.toHaveProperty('paired');
  });

  it('a heartbeat notice before the challenge is passed over without a note; the challenge after it is still taken', async () => {
    const start = await at('challenge', keyed);
    const step = await nextHandshake(start, frame({ method: 'heartbeat', params: { t: 1 } }));
    expect(step).toEqual({ state: start });
    expect(outcome(start, await nextHandshake(advance(step), await challenge(start)))).toBe('→ welcome, sends auth');
  });

  it('any other notice before the proof is an unproven refusal: rules.changed, request.created, request.removed, an unknown one', async () => {
    const start = await at('challenge', keyed);
    for (const method of ['rules.changed', 'request.created', 'request.removed', 'hub.whatever']) {
      expect(await nextHandshake(start, frame({ method, params: {} }))).toEqual({ refusal: { kind: 'unproven', why: `it sent ${method} before proving itself` } });
    }
  });
});

/** An in-memory state dir: one paired extension, one paired device, one exported relay key, and a pairing code. */
function memoryKeys(options: { code?: string; unreadable?: boolean; serial?: number } = {}) {
  let code = options.code;
  const serial = options.serial ?? 1;
  const log: string[] = [];
  const unreadable = () => {
    if (options.unreadable) throw new Error('EACCES');
  };
  const state = {
    relayKeys: () => [{ keyId: KEY_ID, name: 'laptop', key: 'bb'.repeat(32), createdAt: 0, allow: ['permission' as const] }],
    pairing: () => (code === undefined ? undefined : { code, expiresAt: Number.MAX_SAFE_INTEGER, failures: 0, serial }),
    pairingSerial: () => serial,
    clearPairing: () => {
      log.push('clearPairing');
      const spent = code !== undefined;
      code = undefined;
      return spent;
    },
    recordPairingFailure: () => (log.push('recordPairingFailure'), 9),
    pairedExtensions: () => (unreadable(), [{ keyId: KEY_ID, origin: ORIGIN, key: KEY, pairedAt: 0 }]),
    addPairedExtension: (origin: string) => (log.push(`addPairedExtension ${origin}`), { keyId: NEW_KEY_ID, origin, key: NEW_KEY, pairedAt: 1 }),
    pairedDevices: () => [{ keyId: KEY_ID, name: 'Pixel', key: 'cc'.repeat(32), pairedAt: 0, origin: ORIGIN }],
    addPairedDevice: (name: string, origin: string) => (log.push(`addPairedDevice ${name} ${origin}`), { keyId: NEW_KEY_ID, name, key: NEW_KEY, pairedAt: 1, origin }),
    catchUp: async () => {
      log.push('catchUp');
    },
  } satisfies HandshakeKeys;
  const installKey = () => (unreadable(), 'aa'.repeat(32));
  return { state, installKey, log, spend: () => (code = undefined) };
}

function hub(keys = memoryKeys(), full = false) {
  const refused: string[] = [];
  const handshake = new HubHandshake({ port: PORT, installKey: keys.installKey, directory: () => keys.state, full: () => full, onRefused: (status, reason) => refused.push(`${status} ${reason}`) });
  return { handshake, refused, keys };
}

function peer(role: HandshakePeer['role'], how: { origin?: string | null; pairing?: boolean; pairingOnly?: boolean } = {}): HandshakePeer {
  return { role, origin: how.origin === undefined ? (role === 'relay' ? null : ORIGIN) : how.origin, pairing: how.pairing ?? false, pairingOnly: how.pairingOnly ?? false, stage: 'hello' };
}

function hello(role: HandshakePeer['role'], claim: { keyId?: string; pairing?: true; deviceName?: string } = {}): HelloParams {
  return { protocol: PROTOCOL_VERSION, role, client, nonce: newNonce(), ...claim };
}

const closed = (code: number, reason?: string) => ({ close: code, reason: reason ?? expect.any(String) });

describe('the hub\'s side: hello', () => {
  it.each<[string, () => HandshakePeer, HelloParams, HubStep<Result<'hello'>> | ReturnType<typeof closed> | 'challenge']>([
    ['a relay with the install key', () => peer('relay'), hello('relay'), 'challenge'],
    ['a relay with its exported key', () => peer('relay'), hello('relay', { keyId: KEY_ID }), 'challenge'],
    ['a relay with a key never exported', () => peer('relay'), hello('relay', { keyId: NEW_KEY_ID }), closed(CLOSE_UNKNOWN_KEY, DROPPED.relay)],
    ['an extension with its key', () => peer('extension'), hello('extension', { keyId: KEY_ID }), 'challenge'],
    ['an extension with a key of another origin', () => peer('extension', { origin: 'chrome-extension://other' }), hello('extension', { keyId: KEY_ID }), closed(CLOSE_UNKNOWN_KEY)],
    ['an extension that came only to pair', () => peer('extension', { pairingOnly: true }), hello('extension', { keyId: KEY_ID }), closed(CLOSE_UNKNOWN_KEY)],
    ['an extension naming no key', () => peer('extension'), hello('extension'), closed(CLOSE_UNKNOWN_KEY)],
    ['a device with its key', () => peer('device'), hello('device', { keyId: KEY_ID }), 'challenge'],
    ['a device with its key, from an origin other than the one it paired on', () => peer('device', { origin: 'https://elsewhere.example' }), hello('device', { keyId: KEY_ID }), closed(CLOSE_UNKNOWN_KEY, DROPPED.device)],
    ['a device with an unknown key', () => peer('device'), hello('device', { keyId: NEW_KEY_ID }), closed(CLOSE_UNKNOWN_KEY, DROPPED.device)],
    ['a pairing hello on a socket that did not ask to pair', () => peer('extension'), hello('extension', { pairing: true }), closed(CLOSE_AUTH_FAILED)],
    ['a pairing hello with a code active', () => peer('extension', { pairing: true }), hello('extension', { pairing: true }), 'challenge'],
    ['a role other than the upgrade\'s: refused forbidden', () => peer('extension'), hello('relay'), { refuse: { code: 'forbidden', message: 'your connection makes you a extension, not a relay' } }],
  ])('%s', async (_name, makePeer, message, expected) => {
    const { handshake } = hub(memoryKeys({ code: CODE }));
    const who = makePeer();
    const step = await handshake.hello(who, message);
    if (expected !== 'challenge') {
      expect(step).toEqual(expected);
      return;
    }
    expect(who.stage).toBe('challenged');
    if (!('answer' in step)) throw new Error(`expected a challenge, got ${JSON.stringify(step)}`);
    expect(step.answer.proof).toBe(await hubProof(who.auth?.key ?? '', who.role === 'device' ? { port: PORT, role: 'device', origin: ORIGIN } : { port: PORT, role: who.role }, message.nonce, step.answer.nonce));
  });

  it('a pairing hello with no code active is closed 4004; a second hello is refused invalid and the socket kept', async () => {
    const { handshake } = hub();
    expect(await handshake.hello(peer('extension', { pairing: true }), hello('extension', { pairing: true }))).toEqual(closed(CLOSE_NO_PAIRING, 'no pairing code is active: run elicitly-companion pair'));
    const twice = peer('relay');
    await handshake.hello(twice, hello('relay'));
    expect(await handshake.hello(twice, hello('relay'))).toEqual({ refuse: { code: 'invalid', message: 'hello was already sent on this socket' } });
  });

  it('an unreadable state file closes that socket (1011), the hub stays up', async () => {
    const { handshake } = hub(memoryKeys({ unreadable: true }));
    expect(await handshake.hello(peer('relay'), hello('relay'))).toEqual(closed(CLOSE_INTERNAL_ERROR, 'the hub cannot read its keys; see its log'));
  });
});

/** A peer through its hello, with the proof it would send for `secret`. */
async function challenged(handshake: HubHandshake, who: HandshakePeer, message: HelloParams, secret: string) {
  const step = await handshake.hello(who, message);
  if (!('answer' in step)) throw new Error(`expected a challenge, got ${JSON.stringify(step)}`);
  const at: ProofBinding = who.role === 'device' ? { port: PORT, role: 'device', origin: who.origin ?? '' } : { port: PORT, role: who.role };
  return { hubNonce: step.answer.nonce, proof: await peerProof(secret, at, step.answer.nonce, message.nonce) };
}

/** The principal a step welcomed, or a failure naming what it was instead. */
function welcomedAs(step: HubStep<Proven>): Proven {
  if (!('answer' in step)) throw new Error(`expected a welcome, got ${JSON.stringify(step)}`);
  return step.answer;
}

describe('the hub\'s side: auth', () => {
  it('before a hello and its challenge, and twice: refused invalid, the socket kept', async () => {
    const { handshake } = hub();
    expect(await handshake.auth(peer('relay'), 'ab'.repeat(32))).toEqual({ refuse: { code: 'invalid', message: 'auth comes after hello and its challenge' } });
    const who = peer('extension');
    const { proof } = await challenged(handshake, who, hello('extension', { keyId: KEY_ID }), KEY);
    expect(welcomedAs(await handshake.auth(who, proof))).toEqual({ principal: { role: 'extension', keyId: KEY_ID, origin: ORIGIN } });
    expect(await handshake.auth(who, proof)).toMatchObject({ refuse: { code: 'invalid' } });
  });

  it('a right proof: welcomed as the principal its key makes it, with the proven key kept (none for the install key)', async () => {
    const { handshake } = hub();
    const extension = peer('extension');
    const { proof } = await challenged(handshake, extension, hello('extension', { keyId: KEY_ID }), KEY);
    expect(welcomedAs(await handshake.auth(extension, proof))).toEqual({ principal: { role: 'extension', keyId: KEY_ID, origin: ORIGIN } });
    expect(extension.proven).toEqual({ keyId: KEY_ID, key: KEY });
    const relay = peer('relay');
    const install = await challenged(handshake, relay, hello('relay'), 'aa'.repeat(32));
    expect(welcomedAs(await handshake.auth(relay, install.proof))).toEqual({ principal: { role: 'local' } });
    expect(relay.proven).toBeUndefined();
    const exported = peer('relay');
    const remote = await challenged(handshake, exported, hello('relay', { keyId: KEY_ID }), 'bb'.repeat(32));
    expect(welcomedAs(await handshake.auth(exported, remote.proof))).toEqual({ principal: { role: 'remote', keyId: KEY_ID, grants: ['permission'] } });
    expect(exported.proven).toEqual({ keyId: KEY_ID, key: 'bb'.repeat(32) });
    const device = peer('device');
    const phone = await challenged(handshake, device, hello('device', { keyId: KEY_ID }), 'cc'.repeat(32));
    expect(welcomedAs(await handshake.auth(device, phone.proof))).toEqual({ principal: { role: 'device', keyId: KEY_ID, origin: ORIGIN } });
  });

  it('a wrong proof: closed 4001 and logged; a wrong pairing code also counts against the code and makes its origin wait', async () => {
    const { handshake, refused, keys } = hub(memoryKeys({ code: CODE }));
    const keyedPeer = peer('extension');
    await challenged(handshake, keyedPeer, hello('extension', { keyId: KEY_ID }), KEY);
    expect(await handshake.auth(keyedPeer, 'ab'.repeat(32))).toEqual(closed(CLOSE_AUTH_FAILED, 'authentication failed'));
    expect(refused).toEqual(['4001 a extension failed to prove its key']);
    expect(handshake.pairingBackoffUntil(ORIGIN)).toBe(0);
    const guesser = peer('extension', { pairing: true });
    await challenged(handshake, guesser, hello('extension', { pairing: true }), CODE);
    expect(await handshake.auth(guesser, 'ab'.repeat(32))).toEqual(closed(CLOSE_AUTH_FAILED));
    expect(keys.log).toEqual(['recordPairingFailure']);
    expect(handshake.pairingBackoffUntil(ORIGIN)).toBeGreaterThan(Date.now());
  });

  it('a full hub: closed 1013 after the proof checks out', async () => {
    const { handshake } = hub(memoryKeys(), true);
    const who = peer('extension');
    const { proof } = await challenged(handshake, who, hello('extension', { keyId: KEY_ID }), KEY);
    expect(await handshake.auth(who, proof)).toEqual(closed(CLOSE_HUB_FULL));
  });

  it('a code spent while the peer was challenged opens nothing: closed 4004, no guess counted', async () => {
    const keys = memoryKeys({ code: CODE });
    const { handshake } = hub(keys);
    const who = peer('extension', { pairing: true });
    const { proof } = await challenged(handshake, who, hello('extension', { pairing: true }), CODE);
    keys.spend();
    expect(await handshake.auth(who, proof)).toEqual(closed(CLOSE_NO_PAIRING, 'the pairing code is no longer active: run elicitly-companion pair'));
    expect(keys.log).toEqual([]);
  });

  it('a code another hub spent between this check and its own spend (a team\'s database) opens nothing: closed 4004, no key made', async () => {
    const keys = memoryKeys({ code: CODE });
    // The directory still showed the code at the check; the spend, over the database's row, finds it spent.
    const state = { ...keys.state, clearPairing: () => (keys.log.push('clearPairing'), false) };
    const handshake = new HubHandshake({ port: PORT, installKey: keys.installKey, directory: () => state, full: () => false, onRefused: () => undefined });
    const who = peer('extension', { pairing: true });
    const { proof } = await challenged(handshake, who, hello('extension', { pairing: true }), CODE);
    expect(await handshake.auth(who, proof)).toEqual(closed(CLOSE_NO_PAIRING, 'the pairing code was used meanwhile: run elicitly-companion pair'));
    expect(keys.log).toEqual(['clearPairing']);
    expect(who.proven).toBeUndefined();
  });

  it('a pairing the directory cannot record (its database down) is closed 1011, and nothing is handed over', async () => {
    const keys = memoryKeys({ code: CODE });
    const state = { ...keys.state, addPairedExtension: () => Promise.reject(new Error('the database did not commit within 5000 ms')) };
    const handshake = new HubHandshake({ port: PORT, installKey: keys.installKey, directory: () => state, full: () => false, onRefused: () => undefined });
    const who = peer('extension', { pairing: true });
    const { proof } = await challenged(handshake, who, hello('extension', { pairing: true }), CODE);
    expect(await handshake.auth(who, proof)).toEqual(closed(CLOSE_INTERNAL_ERROR, 'the hub could not record the pairing; see its log'));
    expect(who.proven).toBeUndefined();
  });

  it('a right code: spent, the device named and paired to its origin, its fresh key handed over sealed with the code', async () => {
    const keys = memoryKeys({ code: CODE });
    const { handshake } = hub(keys);
    const who = peer('device', { pairing: true });
    const message = hello('device', { pairing: true, deviceName: 'Pixel 9' });
    const { proof, hubNonce } = await challenged(handshake, who, message, CODE);
    const { principal, paired } = welcomedAs(await handshake.auth(who, proof));
    expect(keys.log).toEqual(['clearPairing', `addPairedDevice Pixel 9 ${ORIGIN}`]);
    expect(who.proven).toEqual({ keyId: NEW_KEY_ID, key: NEW_KEY });
    expect(principal).toEqual({ role: 'device', keyId: NEW_KEY_ID, origin: ORIGIN });
    if (!paired) throw new Error('expected the key to be handed over');
    expect(paired.keyId).toBe(NEW_KEY_ID);
    expect(await openSealedKey(paired.sealedKey, CODE, PORT, hubNonce, message.nonce)).toBe(NEW_KEY);
  });
});

describe('both sides against each other', () => {
  it.each<[string, HandshakePeer, HandshakeOptions]>([
    ['a relay with the install key', peer('relay'), { role: 'relay', client, secret: 'aa'.repeat(32), claim: {}, binding: { port: PORT, role: 'relay' } }],
    ['an extension with its key', peer('extension'), keyed],
    ['a device pairing', peer('device', { pairing: true }), { role: 'device', client, secret: CODE, claim: { pairing: true, deviceName: 'Pixel' }, binding: { port: PORT, role: 'device', origin: ORIGIN } }],
  ])('%s: hello call, its answer, auth call, its answer with the welcome (and the key)', async (_name, who, options) => {
    const { handshake } = hub(memoryKeys({ code: CODE }));
    const start = startHandshake(options);
    const hello = parseParams('hello', start.send.params);
    if (!hello.success) throw new Error(`the hub cannot read this hello: ${hello.error.message}`);
    const challengeStep = await handshake.hello(who, hello.data);
    if (!('answer' in challengeStep)) throw new Error(`refused: ${JSON.stringify(challengeStep)}`);
    const proved = await nextHandshake(start.state, frame({ id: start.send.id, result: challengeStep.answer }));
    if (!('state' in proved) || proved.send?.method !== 'auth') throw new Error(`no auth: ${JSON.stringify(proved)}`);
    const auth = parseParams('auth', proved.send.params);
    if (!auth.success) throw new Error(`the hub cannot read this auth: ${auth.error.message}`);
    const { paired } = welcomedAs(await handshake.auth(who, auth.data.proof));
    // The answer the hub server makes of a welcomed step (hub-server.ts `welcome`).
    const step = await nextHandshake(proved.state, frame({ id: proved.send.id, result: { ...(paired ? { paired } : {}), welcome: welcome() } }));
    if ('pairing' in options.claim) expect(step).toEqual({ welcome: welcome(), paired: { keyId: NEW_KEY_ID, key: NEW_KEY } });
    else expect(step).toEqual({ welcome: welcome() });
  });
});

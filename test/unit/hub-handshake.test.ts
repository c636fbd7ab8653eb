// The handshake of hub-auth.ts, each side written once: the peers' state machine (shared/hub-handshake.ts, used by the
// extension, the phone page and the relays) as a table of phase × frame, the hub's side (server/hub/hub-handshake.ts)
// on an in-memory state dir, and both run against each other.
import { describe, expect, it } from 'vitest';
import { DROPPED, HubHandshake, type HandshakeKeys, type HandshakePeer, type HubStep } from '../../server/hub/hub-handshake.js';
import { hubProof, newNonce, openSealedKey, peerProof, sealKey, type ProofBinding } from '../../shared/hub-auth.js';
import { nextHandshake, startHandshake, type ClientHandshake, type HandshakeOptions, type HandshakeStep } from '../../shared/hub-handshake.js';
import {
  CLOSE_AUTH_FAILED, CLOSE_HUB_FULL, CLOSE_INTERNAL_ERROR, CLOSE_NO_PAIRING, CLOSE_UNKNOWN_KEY, PROTOCOL_VERSION, type HubMessage, type PeerMessage,
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

const frame = (message: HubMessage) => JSON.stringify(message);
const welcome = (protocol = PROTOCOL_VERSION): HubMessage => ({ type: 'welcome', protocol, hubPid: 1, pending: [], rules: [] });

/** A challenge from a hub that knows `secret` (or pretends to), for the state's own nonce unless told otherwise. */
async function challenge(state: ClientHandshake, how: { secret?: string; peerNonce?: string; binding?: ProofBinding; hubNonce?: string } = {}): Promise<string> {
  const hubNonce = how.hubNonce ?? newNonce();
  const proof = await hubProof(how.secret ?? state.options.secret, how.binding ?? binding, how.peerNonce ?? state.nonce, hubNonce);
  return frame({ type: 'challenge', nonce: hubNonce, proof });
}

/** The state at `phase`, reached the way a real hub leads there. */
async function at(phase: ClientHandshake['phase'], options: HandshakeOptions): Promise<ClientHandshake> {
  let { state } = startHandshake(options);
  if (phase === 'challenge') return state;
  state = advance(await nextHandshake(state, await challenge(state)));
  if (phase === 'key' || !('pairing' in options.claim)) return state;
  return advance(await nextHandshake(state, frame({ type: 'paired', keyId: NEW_KEY_ID, sealedKey: await sealKey(NEW_KEY, CODE, PORT, state.hubNonce, state.nonce) })));
}

function advance(step: HandshakeStep): ClientHandshake {
  if (!('state' in step)) throw new Error(`expected the handshake to go on, got ${JSON.stringify(step)}`);
  return step.state;
}

/** One step in a word: what a caller does with it. */
function outcome(before: ClientHandshake, step: HandshakeStep): string {
  if ('refusal' in step) return step.refusal.kind === 'mismatch' ? `mismatch ${String(step.refusal.hubProtocol)}` : step.refusal.kind;
  if ('welcome' in step) return 'welcomed';
  const parts = [step.state.phase === before.phase ? 'stays' : `→ ${step.state.phase}`];
  if (step.send) parts.push(`sends ${step.send.type}`);
  if (step.paired) parts.push('keeps the key');
  if (step.note !== undefined) parts.push('noted');
  return parts.join(', ');
}

type Frame = (state: ClientHandshake) => unknown;
const frames: Record<string, Frame> = {
  binary: () => new Uint8Array([123, 125]),
  'not JSON': () => 'nope',
  'a malformed challenge': () => JSON.stringify({ type: 'challenge', nonce: 'xyz', proof: '00' }),
  heartbeat: () => frame({ type: 'heartbeat', t: 1 }),
  'an error': () => frame({ type: 'error', code: 'rate_limited', message: 'slow down' }),
  'unsupported_protocol': () => frame({ type: 'error', code: 'unsupported_protocol', message: 'protocol 1 only' }),
  'a right challenge': (s) => challenge(s),
  'a challenge proved with another key': (s) => challenge(s, { secret: 'f0'.repeat(32) }),
  'a challenge for an earlier nonce (a replay)': (s) => challenge(s, { peerNonce: newNonce() }),
  'a challenge bound to another port': (s) => challenge(s, { binding: { port: PORT + 1, role: 'extension' } }),
  'a challenge bound to another role': (s) => challenge(s, { binding: { port: PORT, role: 'relay' } }),
  'our own nonce and proof reflected': async (s) => frame({ type: 'challenge', nonce: s.nonce, proof: await peerProof(s.options.secret, binding, s.nonce, s.nonce) }),
  paired: async (s) => frame({ type: 'paired', keyId: NEW_KEY_ID, sealedKey: await sealKey(NEW_KEY, CODE, PORT, s.hubNonce, s.nonce) }),
  welcome: () => frame(welcome()),
  'a welcome of protocol 9': () => frame(welcome(9)),
  'a request event': () => frame({ type: 'request.removed', elicitationId: 'el_1', status: 'approved' }),
};

const refusedBeforeProof: [string, string][] = [
  ['binary', 'unproven'],
  ['not JSON', 'unproven'],
  ['a malformed challenge', 'unproven'],
  ['heartbeat', 'stays'],
  ['an error', 'stays, noted'],
  ['unsupported_protocol', 'mismatch null'],
  ['a challenge proved with another key', 'wrong_proof'],
  ['a challenge for an earlier nonce (a replay)', 'wrong_proof'],
  ['a challenge bound to another port', 'wrong_proof'],
  ['a challenge bound to another role', 'wrong_proof'],
  ['our own nonce and proof reflected', 'wrong_proof'],
  ['paired', 'unproven'],
  ['welcome', 'unproven'],
  ['a request event', 'unproven'],
];

/** What the peer proves: its key (a paired extension), or the pairing code. */
type Proving = 'a key' | 'a code';
const proving: Record<Proving, HandshakeOptions> = { 'a key': keyed, 'a code': pairing };

const table: [phase: ClientHandshake['phase'], proving: Proving, frame: string, expected: string][] = [
  ...refusedBeforeProof.map(([name, expected]): [ClientHandshake['phase'], Proving, string, string] => ['challenge', 'a key', name, expected]),
  ['challenge', 'a key', 'a right challenge', '→ welcome, sends auth'],
  ['challenge', 'a code', 'a right challenge', '→ key, sends auth'],
  ['challenge', 'a code', 'a challenge proved with another key', 'wrong_proof'],
  // Pairing: the hub proved the code; the key must come before the welcome.
  ['key', 'a code', 'paired', '→ welcome, keeps the key'],
  ['key', 'a code', 'welcome', 'broken'],
  ['key', 'a code', 'a right challenge', 'stays, noted'],
  ['key', 'a code', 'a request event', 'stays, noted'],
  ['key', 'a code', 'binary', 'stays, noted'],
  ['key', 'a code', 'not JSON', 'stays, noted'],
  ['key', 'a code', 'heartbeat', 'stays'],
  ['key', 'a code', 'an error', 'stays, noted'],
  ['key', 'a code', 'unsupported_protocol', 'mismatch null'],
  // Proven (and the key kept): only the welcome ends it.
  ['welcome', 'a key', 'welcome', 'welcomed'],
  ['welcome', 'a code', 'welcome', 'welcomed'],
  ['welcome', 'a key', 'a welcome of protocol 9', 'mismatch 9'],
  ['welcome', 'a key', 'paired', 'stays, noted'],
  ['welcome', 'a code', 'paired', 'stays, noted'],
  ['welcome', 'a key', 'a right challenge', 'stays, noted'],
  ['welcome', 'a key', 'a request event', 'stays, noted'],
  ['welcome', 'a key', 'binary', 'stays, noted'],
  ['welcome', 'a key', 'a malformed challenge', 'stays, noted'],
  ['welcome', 'a key', 'heartbeat', 'stays'],
  ['welcome', 'a key', 'an error', 'stays, noted'],
  ['welcome', 'a key', 'unsupported_protocol', 'mismatch null'],
];

describe('the peers\' side: every phase × frame', () => {
  it.each(table)('awaiting %s, proving %s: %s → %s', async (phase, secret, name, expected) => {
    const state = await at(phase, proving[secret]);
    const make = frames[name];
    if (!make) throw new Error(`no frame ${name}`);
    expect(outcome(state, await nextHandshake(state, await make(state)))).toBe(expected);
  });

  it('the hello names the key, nothing (the install key), or the pairing with what a device is called; the nonce is fresh', () => {
    const nonce = 'ab'.repeat(32);
    expect(startHandshake({ ...keyed, nonce }).send).toEqual({ type: 'hello', protocol: PROTOCOL_VERSION, role: 'extension', client, nonce, keyId: KEY_ID });
    expect(startHandshake({ ...keyed, role: 'relay', claim: {}, nonce }).send).toEqual({ type: 'hello', protocol: PROTOCOL_VERSION, role: 'relay', client, nonce });
    expect(startHandshake({ ...pairing, role: 'device', claim: { pairing: true, deviceName: 'Pixel' }, nonce }).send).toEqual({
      type: 'hello', protocol: PROTOCOL_VERSION, role: 'device', client, nonce, pairing: true, deviceName: 'Pixel',
    });
    expect(startHandshake(keyed).state.nonce).not.toBe(startHandshake(keyed).state.nonce);
  });

  it('answers a right challenge with its own proof over both nonces, and opens the sealed key with the code', async () => {
    const start = await at('challenge', pairing);
    const hubNonce = newNonce();
    const step = await nextHandshake(start, await challenge(start, { hubNonce }));
    expect(step).toMatchObject({ state: { phase: 'key', hubNonce }, send: { type: 'auth', proof: await peerProof(CODE, binding, hubNonce, start.nonce) } });
    const key = advance(step);
    expect(await nextHandshake(key, await frames.paired?.(key))).toMatchObject({ state: { phase: 'welcome' }, paired: { keyId: NEW_KEY_ID, key: NEW_KEY } });
  });

  it('says why, for the log and the person', async () => {
    const start = await at('challenge', keyed);
    expect(await nextHandshake(start, frame(welcome()))).toEqual({ refusal: { kind: 'unproven', why: 'it sent welcome before proving itself' } });
    expect(await nextHandshake(start, await challenge(start, { secret: 'f0'.repeat(32) }))).toEqual({ refusal: { kind: 'wrong_proof', why: 'its proof is wrong' } });
    const proven = await at('welcome', keyed);
    expect(await nextHandshake(proven, frame(welcome(9)))).toEqual({ refusal: { kind: 'mismatch', hubProtocol: 9, why: 'the hub speaks protocol 9' } });
    expect(await nextHandshake(proven, frame({ type: 'request.removed', elicitationId: 'el_1', status: 'approved' }))).toMatchObject({ note: 'ignored request.removed from the hub before its welcome' });
    const keyless = await at('key', pairing);
    expect(await nextHandshake(keyless, frame(welcome()))).toEqual({ refusal: { kind: 'broken', why: 'the hub welcomed this browser without handing over a key' } });
  });
});

/** An in-memory state dir: one paired extension, one paired device, one exported relay key, and a pairing code. */
function memoryKeys(options: { code?: string; unreadable?: boolean } = {}) {
  let code = options.code;
  const log: string[] = [];
  const unreadable = () => {
    if (options.unreadable) throw new Error('EACCES');
  };
  const state = {
    relayKey: () => (unreadable(), 'aa'.repeat(32)),
    relayKeys: () => [{ keyId: KEY_ID, name: 'laptop', key: 'bb'.repeat(32), createdAt: 0 }],
    pairing: () => (code === undefined ? undefined : { code, expiresAt: Number.MAX_SAFE_INTEGER, failures: 0 }),
    clearPairing: () => {
      log.push('clearPairing');
      code = undefined;
    },
    recordPairingFailure: () => (log.push('recordPairingFailure'), 9),
    pairedExtensions: () => (unreadable(), [{ keyId: KEY_ID, origin: ORIGIN, key: KEY, pairedAt: 0 }]),
    addPairedExtension: (origin: string) => (log.push(`addPairedExtension ${origin}`), { keyId: NEW_KEY_ID, origin, key: NEW_KEY, pairedAt: 1 }),
    pairedDevices: () => [{ keyId: KEY_ID, name: 'Pixel', key: 'cc'.repeat(32), pairedAt: 0 }],
    addPairedDevice: (name: string) => (log.push(`addPairedDevice ${name}`), { keyId: NEW_KEY_ID, name, key: NEW_KEY, pairedAt: 1 }),
  } satisfies HandshakeKeys;
  return { state, log, spend: () => (code = undefined) };
}

function hub(keys = memoryKeys(), full = false) {
  const refused: string[] = [];
  const handshake = new HubHandshake({ port: PORT, state: keys.state, full: () => full, onRefused: (status, reason) => refused.push(`${status} ${reason}`) });
  return { handshake, refused, keys };
}

function peer(role: HandshakePeer['role'], how: { origin?: string | null; pairing?: boolean; pairingOnly?: boolean } = {}): HandshakePeer {
  return { role, origin: how.origin === undefined ? (role === 'relay' ? null : ORIGIN) : how.origin, pairing: how.pairing ?? false, pairingOnly: how.pairingOnly ?? false, stage: 'hello' };
}

function hello(role: HandshakePeer['role'], claim: { keyId?: string; pairing?: true; deviceName?: string } = {}): Extract<PeerMessage, { type: 'hello' }> {
  return { type: 'hello', protocol: PROTOCOL_VERSION, role, client, nonce: newNonce(), ...claim };
}

const closed = (code: number, reason?: string) => ({ close: code, reason: reason ?? expect.any(String) });

describe('the hub\'s side: hello', () => {
  it.each<[string, () => HandshakePeer, Extract<PeerMessage, { type: 'hello' }>, HubStep | 'challenge', HubMessage | ReturnType<typeof closed> | null]>([
    ['a relay with the install key', () => peer('relay'), hello('relay'), 'challenge', null],
    ['a relay with its exported key', () => peer('relay'), hello('relay', { keyId: KEY_ID }), 'challenge', null],
    ['a relay with a key never exported', () => peer('relay'), hello('relay', { keyId: NEW_KEY_ID }), closed(CLOSE_UNKNOWN_KEY, DROPPED.relay), null],
    ['an extension with its key', () => peer('extension'), hello('extension', { keyId: KEY_ID }), 'challenge', null],
    ['an extension with a key of another origin', () => peer('extension', { origin: 'chrome-extension://other' }), hello('extension', { keyId: KEY_ID }), closed(CLOSE_UNKNOWN_KEY), null],
    ['an extension that came only to pair', () => peer('extension', { pairingOnly: true }), hello('extension', { keyId: KEY_ID }), closed(CLOSE_UNKNOWN_KEY), null],
    ['an extension naming no key', () => peer('extension'), hello('extension'), closed(CLOSE_UNKNOWN_KEY), null],
    ['a device with its key', () => peer('device'), hello('device', { keyId: KEY_ID }), 'challenge', null],
    ['a device with an unknown key', () => peer('device'), hello('device', { keyId: NEW_KEY_ID }), closed(CLOSE_UNKNOWN_KEY, DROPPED.device), null],
    ['a pairing hello on a socket that did not ask to pair', () => peer('extension'), hello('extension', { pairing: true }), closed(CLOSE_AUTH_FAILED), null],
    ['a pairing hello with a code active', () => peer('extension', { pairing: true }), hello('extension', { pairing: true }), 'challenge', null],
    ['a role other than the upgrade\'s', () => peer('extension'), hello('relay'), { send: { type: 'error', code: 'forbidden', message: 'your connection makes you a extension, not a relay' } }, null],
  ])('%s', async (_name, makePeer, message, expected) => {
    const { handshake } = hub(memoryKeys({ code: CODE }));
    const who = makePeer();
    const step = await handshake.hello(who, message);
    if (expected !== 'challenge') {
      expect(step).toEqual(expected);
      return;
    }
    expect(who.stage).toBe('challenged');
    if (!('send' in step) || step.send.type !== 'challenge') throw new Error(`expected a challenge, got ${JSON.stringify(step)}`);
    expect(step.send.proof).toBe(await hubProof(who.auth?.key ?? '', who.role === 'device' ? { port: PORT, role: 'device', origin: ORIGIN } : { port: PORT, role: who.role }, message.nonce, step.send.nonce));
  });

  it('a pairing hello with no code active is closed 4004; a second hello is refused and the socket kept', async () => {
    const { handshake } = hub();
    expect(await handshake.hello(peer('extension', { pairing: true }), hello('extension', { pairing: true }))).toEqual(closed(CLOSE_NO_PAIRING, 'no pairing code is active: run elicitly-companion pair'));
    const twice = peer('relay');
    await handshake.hello(twice, hello('relay'));
    expect(await handshake.hello(twice, hello('relay'))).toEqual({ send: { type: 'error', code: 'not_hello', message: 'hello was already sent on this socket' } });
  });

  it('an unreadable state file closes that socket (1011), the hub stays up', async () => {
    const { handshake } = hub(memoryKeys({ unreadable: true }));
    expect(await handshake.hello(peer('relay'), hello('relay'))).toEqual(closed(CLOSE_INTERNAL_ERROR, 'the hub cannot read its keys; see its log'));
  });
});

/** A peer through its hello, with the proof it would send for `secret`. */
async function challenged(handshake: HubHandshake, who: HandshakePeer, message: Extract<PeerMessage, { type: 'hello' }>, secret: string) {
  const step = await handshake.hello(who, message);
  if (!('send' in step) || step.send.type !== 'challenge') throw new Error(`expected a challenge, got ${JSON.stringify(step)}`);
  const at: ProofBinding = who.role === 'device' ? { port: PORT, role: 'device', origin: who.origin ?? '' } : { port: PORT, role: who.role };
  return { hubNonce: step.send.nonce, proof: await peerProof(secret, at, step.send.nonce, message.nonce) };
}

describe('the hub\'s side: auth', () => {
  it('before a hello and its challenge, and twice: refused, the socket kept', async () => {
    const { handshake } = hub();
    expect(await handshake.auth(peer('relay'), 'ab'.repeat(32))).toEqual({ send: { type: 'error', code: 'not_hello', message: 'auth comes after hello and its challenge' } });
    const who = peer('extension');
    const { proof } = await challenged(handshake, who, hello('extension', { keyId: KEY_ID }), KEY);
    expect(await handshake.auth(who, proof)).toEqual({ welcome: true });
    expect(await handshake.auth(who, proof)).toMatchObject({ send: { code: 'not_hello' } });
  });

  it('a right proof: welcomed, with the proven key kept (none for the install key)', async () => {
    const { handshake } = hub();
    const extension = peer('extension');
    const { proof } = await challenged(handshake, extension, hello('extension', { keyId: KEY_ID }), KEY);
    expect(await handshake.auth(extension, proof)).toEqual({ welcome: true });
    expect(extension.proven).toEqual({ keyId: KEY_ID, key: KEY });
    const relay = peer('relay');
    const install = await challenged(handshake, relay, hello('relay'), 'aa'.repeat(32));
    expect(await handshake.auth(relay, install.proof)).toEqual({ welcome: true });
    expect(relay.proven).toBeUndefined();
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

  it('a right code: spent, the device named and paired, its fresh key handed over sealed with the code', async () => {
    const keys = memoryKeys({ code: CODE });
    const { handshake } = hub(keys);
    const who = peer('device', { pairing: true });
    const message = hello('device', { pairing: true, deviceName: 'Pixel 9' });
    const { proof, hubNonce } = await challenged(handshake, who, message, CODE);
    const step = await handshake.auth(who, proof);
    expect(keys.log).toEqual(['clearPairing', 'addPairedDevice Pixel 9']);
    expect(who.proven).toEqual({ keyId: NEW_KEY_ID, key: NEW_KEY });
    if (!('welcome' in step) || step.paired?.type !== 'paired') throw new Error(`expected a pairing, got ${JSON.stringify(step)}`);
    expect(await openSealedKey(step.paired.sealedKey, CODE, PORT, hubNonce, message.nonce)).toBe(NEW_KEY);
  });
});

describe('both sides against each other', () => {
  it.each<[string, HandshakePeer, HandshakeOptions]>([
    ['a relay with the install key', peer('relay'), { role: 'relay', client, secret: 'aa'.repeat(32), claim: {}, binding: { port: PORT, role: 'relay' } }],
    ['an extension with its key', peer('extension'), keyed],
    ['a device pairing', peer('device', { pairing: true }), { role: 'device', client, secret: CODE, claim: { pairing: true, deviceName: 'Pixel' }, binding: { port: PORT, role: 'device', origin: ORIGIN } }],
  ])('%s: hello, challenge, auth, (paired,) welcome', async (_name, who, options) => {
    const { handshake } = hub(memoryKeys({ code: CODE }));
    const start = startHandshake(options);
    const hello = start.send;
    if (hello.type !== 'hello') throw new Error('not a hello');
    const challengeStep = await handshake.hello(who, hello);
    if (!('send' in challengeStep)) throw new Error(`refused: ${JSON.stringify(challengeStep)}`);
    const proved = await nextHandshake(start.state, frame(challengeStep.send));
    if (!('state' in proved) || proved.send?.type !== 'auth') throw new Error(`no auth: ${JSON.stringify(proved)}`);
    const welcomed = await handshake.auth(who, proved.send.proof);
    if (!('welcome' in welcomed)) throw new Error(`refused: ${JSON.stringify(welcomed)}`);
    let state = proved.state;
    if (welcomed.paired) {
      const step = await nextHandshake(state, frame(welcomed.paired));
      expect(step).toMatchObject({ paired: { keyId: NEW_KEY_ID, key: NEW_KEY } });
      state = advance(step);
    }
    expect(await nextHandshake(state, frame(welcome()))).toEqual({ welcome: welcome() });
  });
});

import type { ProofBinding } from '../../shared/hub-auth.js';
import { constantTimeEqual, hubProof, newNonce, peerProof, sealKey } from '../../shared/hub-auth.js';
import type { Grant, HelloParams, Result, ServiceError } from '../../shared/peer-calls.js';
import { CLOSE_AUTH_FAILED, CLOSE_CODE_REPLACED, CLOSE_HUB_FULL, CLOSE_INTERNAL_ERROR, CLOSE_NO_PAIRING, CLOSE_UNKNOWN_KEY, PAIRING_SUBPROTOCOL } from '../../shared/wire-protocol.js';
import { log } from '../log.js';
import type { Directory, PairingPurpose } from '../directory.js';
import type { Principal } from './peer-dispatcher.js';
import type { PeerRole } from './upgrade-guard.js';

/** `busy`: a step of the handshake is under way (or the socket is being dropped); nothing else is taken meanwhile. */
export type HandshakeStage = 'hello' | 'busy' | 'challenged' | 'ready';

/** What the hub's side of the handshake keeps of one socket; the hub's peer carries it. */
export interface HandshakePeer {
  readonly role: PeerRole;
  readonly origin: string | null;
  /** Came to pair from an origin the hub did not know: it may do nothing else. */
  readonly pairingOnly: boolean;
  /** The upgrade asked to pair: the only sockets a pairing hello is taken from. */
  readonly pairing: boolean;
  stage: HandshakeStage;
  auth?: Chosen & { peerNonce: string; hubNonce: string };
  /**
   * The paired (or exported) key an extension, a device or a relay proved by its id: checked again before every call,
   * and whenever the file that holds it changes.
   */
  proven?: { keyId: string; key: string };
}

/**
 * What the hub does after a step: answer the call (the challenge), refuse it and leave the socket open, close the socket
 * (a failed proof: the close is the answer), or welcome the peer as the principal it proved, handing over the key it
 * paired when it paired. The hub marks the peer ready as it answers with the welcome, so no event reaches it first.
 */
export type HubStep<T> = { answer: T } | { refuse: ServiceError } | { close: number; reason: string };
export type Proven = { principal: Principal; paired?: NonNullable<Result<'auth'>['paired']> };

/** The directory as the handshake uses it: the keys a peer may prove, and the pairing code it spends. */
export type HandshakeKeys = Pick<
  Directory,
  'relayKeys' | 'pairing' | 'pairingSerial' | 'clearPairing' | 'recordPairingFailure' | 'pairedExtensions' | 'addPairedExtension' | 'pairedDevices' | 'addPairedDevice' | 'catchUp'
>;

interface HubHandshakeOptions {
  /** The port the hub bound: every proof is bound to it. */
  port: number;
  /** The install key a relay on this machine proves; read on every such handshake. */
  installKey(): string;
  /** The pairing codes and every paired or exported key; read on every handshake. */
  directory(): HandshakeKeys;
  /** The hub holds as many proven peers as it takes. */
  full(): boolean;
  /** A peer failed its proof (logged at a bounded rate by the hub). */
  onRefused(status: number, reason: string): void;
}

/** What a peer dropped because its key went is told, by role. */
export const DROPPED: Readonly<Record<PeerRole, string>> = {
  extension: 'this extension is no longer paired with this hub: pair again',
  device: 'this device is no longer paired with this hub: pair again',
  relay: 'this relay key is not (or no longer) exported by this hub: export a new one with elicitly-companion key export',
};

/** The key a peer must prove, and what proving it makes it. */
type Chosen = { key: string; keyId?: string; grants?: readonly Grant[]; pairingCode?: string; deviceName?: string };

/**
 * The hub's side of the handshake of `hub-auth.ts` (the peers' side is `shared/hub-handshake.ts`): it picks the key a
 * peer must know, proves first that the hub knows it too, checks the peer's proof, spends a pairing code on the one
 * pairing it opens, and makes an origin whose code was wrong wait before its next try.
 */
export class HubHandshake {
  /** Per origin: failed pairing attempts and until when it must wait before the next one. */
  private readonly pairingBackoff = new Map<string, { failures: number; until: number }>();

  constructor(private readonly options: HubHandshakeOptions) {}

  /** Until when an origin must wait before it may come to pair again (checked at the upgrade). */
  pairingBackoffUntil(origin: string): number {
    return this.pairingBackoff.get(origin)?.until ?? 0;
  }

  /** Step one: pick the key this peer must know, and prove first that this hub knows it too. */
  async hello(peer: HandshakePeer, hello: HelloParams): Promise<HubStep<Result<'hello'>>> {
    if (peer.stage !== 'hello') return { refuse: { code: 'invalid', message: 'hello was already sent on this socket' } };
    if (hello.role !== peer.role) return { refuse: { code: 'forbidden', message: `your connection makes you a ${peer.role}, not a ${hello.role}` } };
    peer.stage = 'busy';
    let chosen: Chosen | { close: number; reason: string };
    try {
      chosen = this.keyFor(peer, hello);
      // A key or a code another process made a moment ago (another hub, `pair` in a terminal) may not have reached
      // this one yet: a miss reads the directory once more.
      if ('close' in chosen && CATCH_UP_ON.has(chosen.close)) {
        await this.options.directory().catchUp();
        chosen = this.keyFor(peer, hello);
      }
    } catch (error) {
      // An unreadable or untrusted state file: this peer cannot be checked, so it is not let in; the hub stays up.
      log('error', 'cannot read the key a peer must prove', { role: peer.role, error: String(error) });
      return { close: CLOSE_INTERNAL_ERROR, reason: 'the hub cannot read its keys; see its log' };
    }
    if ('close' in chosen) return chosen;
    const hubNonce = newNonce();
    peer.auth = { ...chosen, peerNonce: hello.nonce, hubNonce };
    const proof = await hubProof(chosen.key, this.binding(peer), hello.nonce, hubNonce);
    peer.stage = 'challenged';
    return { answer: { nonce: hubNonce, proof } };
  }

  /** Step two: check the peer's proof; a pairing peer then gets its own key, sealed with the code. */
  async auth(peer: HandshakePeer, proof: string): Promise<HubStep<Proven>> {
    const auth = peer.auth;
    if (peer.stage !== 'challenged' || !auth) return { refuse: { code: 'invalid', message: 'auth comes after hello and its challenge' } };
    peer.stage = 'busy';
    const expected = await peerProof(auth.key, this.binding(peer), auth.hubNonce, auth.peerNonce);
    const directory = this.options.directory();
    // The reviewer the code was made for (`pair --reviewer`): the key it gives is theirs.
    let reviewer: string | undefined;
    if (auth.pairingCode !== undefined) {
      // Checked again now, with no await between this check, the comparison and the count of a failure: sockets
      // challenged while the code was alive get no guess once wrong ones have burnt it, however many there are.
      const pairing = directory.pairing(purposeOf(peer));
      if (!pairing || pairing.code !== auth.pairingCode) return { close: CLOSE_NO_PAIRING, reason: `the pairing code is no longer active: run ${PAIR_COMMAND[purposeOf(peer)]}` };
      reviewer = pairing.reviewer;
    }
    if (!constantTimeEqual(proof, expected)) {
      if (auth.pairingCode !== undefined && peer.origin) this.pairingFailed(peer.origin, purposeOf(peer));
      this.options.onRefused(4001, `a ${peer.role} failed to prove its key`);
      return { close: CLOSE_AUTH_FAILED, reason: 'authentication failed' };
    }
    if (this.options.full()) return { close: CLOSE_HUB_FULL, reason: 'the hub has as many peers as it takes; try again later' };
    delete peer.auth;
    if (auth.pairingCode !== undefined && peer.origin) {
      const { origin } = peer;
      let entry: { keyId: string; key: string };
      try {
        // Spent before anything else, and only by whoever still finds it active: a code opens exactly one pairing,
        // whichever hub of a team's database the browsers came to.
        if (!(await directory.clearPairing(purposeOf(peer), auth.pairingCode))) {
          return { close: CLOSE_NO_PAIRING, reason: `the pairing code was used meanwhile: run ${PAIR_COMMAND[purposeOf(peer)]}` };
        }
        // A device is paired to the origin its page was opened from: its key opens sockets from that origin only.
        entry = peer.role === 'device' ? await directory.addPairedDevice(auth.deviceName ?? 'Phone', origin, Date.now(), reviewer) : await directory.addPairedExtension(origin, Date.now(), reviewer);
      } catch (error) {
        log('error', 'could not record a pairing', { role: peer.role, error: String(error) });
        return { close: CLOSE_INTERNAL_ERROR, reason: 'the hub could not record the pairing; see its log' };
      }
      peer.proven = { keyId: entry.keyId, key: entry.key };
      this.pairingBackoff.delete(origin);
      log('info', peer.role === 'device' ? 'paired a device' : 'paired a browser extension', { origin, keyId: entry.keyId, ...(reviewer === undefined ? {} : { reviewer }) });
      const sealedKey = await sealKey(entry.key, auth.pairingCode, this.options.port, auth.hubNonce, auth.peerNonce);
      return { answer: { principal: { role: peer.role === 'device' ? 'device' : 'extension', keyId: entry.keyId, origin }, paired: { keyId: entry.keyId, sealedKey } } };
    }
    if (auth.keyId !== undefined) peer.proven = { keyId: auth.keyId, key: auth.key };
    return { answer: { principal: principalOf(peer, auth) } };
  }

  /**
   * What every proof on this hub is bound to: the port it bound (a proof made for another port never opens it), and for
   * a device the origin of its page too (a proof made on one origin never opens a socket from another).
   */
  private binding(peer: HandshakePeer): ProofBinding {
    const { port } = this.options;
    if (peer.role !== 'device') return { port, role: peer.role };
    return { port, role: 'device', origin: peer.origin ?? '' };
  }

  private keyFor(peer: HandshakePeer, hello: HelloParams): Chosen | { close: number; reason: string } {
    const state = this.options.directory();
    if (peer.role === 'relay') {
      // A relay on another machine proves the key exported for it, by id; one on this machine the install key.
      if (hello.keyId === undefined) return { key: this.options.installKey() };
      const exported = state.relayKeys().find((k) => k.keyId === hello.keyId);
      if (!exported) return { close: CLOSE_UNKNOWN_KEY, reason: DROPPED.relay };
      return { key: exported.key, keyId: exported.keyId, grants: exported.allow ?? [] };
    }
    if (hello.pairing) {
      // Only a socket that asked to pair in its upgrade, so the origin's backoff was checked before it got this far.
      if (!peer.pairing) return { close: CLOSE_AUTH_FAILED, reason: `a pairing hello needs the ${PAIRING_SUBPROTOCOL} subprotocol` };
      const purpose = purposeOf(peer);
      // Not a guess, and nothing secret: the serial only says which code the page's link carried.
      if (hello.pairingSerial !== undefined && hello.pairingSerial !== state.pairingSerial(purpose)) {
        return { close: CLOSE_CODE_REPLACED, reason: `a newer pairing code replaced this one: scan the newest QR code (${PAIR_COMMAND[purpose]})` };
      }
      const pairing = state.pairing(purpose);
      if (!pairing) return { close: CLOSE_NO_PAIRING, reason: `no pairing code is active: run ${PAIR_COMMAND[purpose]}` };
      return { key: pairing.code, pairingCode: pairing.code, ...(peer.role === 'device' ? { deviceName: hello.deviceName ?? 'Phone' } : {}) };
    }
    if (peer.role === 'device') {
      // Only from the origin it was paired on: a key carried to another allowed origin opens nothing there.
      const device = hello.keyId === undefined ? undefined : state.pairedDevices().find((d) => d.keyId === hello.keyId && d.origin === peer.origin);
      if (!device) return { close: CLOSE_UNKNOWN_KEY, reason: DROPPED.device };
      return { key: device.key, keyId: device.keyId };
    }
    const entry = peer.pairingOnly || !hello.keyId ? undefined : state.pairedExtensions().find((e) => e.keyId === hello.keyId && e.origin === peer.origin);
    if (!entry) return { close: CLOSE_UNKNOWN_KEY, reason: 'this extension is not paired with this hub: pair again' };
    return { key: entry.key, keyId: entry.keyId };
  }

  /** A wrong code: it counts against the code (burnt at the cap) and makes that origin wait, doubling up to a minute. */
  private pairingFailed(origin: string, purpose: PairingPurpose): void {
    const failures = (this.pairingBackoff.get(origin)?.failures ?? 0) + 1;
    this.pairingBackoff.set(origin, { failures, until: Date.now() + Math.min(60_000, 1000 * 2 ** (failures - 1)) });
    // Counted against the code from this moment (a database's directory counts it while it is written).
    Promise.resolve(this.options.directory().recordPairingFailure(purpose)).then(
      (left) => log('warn', 'a pairing attempt failed', { origin, attemptsLeftOnThisCode: left }),
      (error: unknown) => log('error', 'a pairing attempt failed and could not be counted against its code', { origin, error: String(error) }),
    );
  }
}

/** Which code a pairing peer proves: a device the phone's (`remote pair`), an extension its own (`pair`). */
function purposeOf(peer: HandshakePeer): PairingPurpose {
  return peer.role === 'device' ? 'device' : 'extension';
}

/** The refusals a key or a code made a moment ago by another process would have avoided. */
const CATCH_UP_ON = new Set([CLOSE_UNKNOWN_KEY, CLOSE_NO_PAIRING, CLOSE_CODE_REPLACED]);

const PAIR_COMMAND: Record<PairingPurpose, string> = { extension: 'elicitly-companion pair', device: 'elicitly-companion remote pair' };

/** What a peer that proved its key (not by pairing) is from now on. */
function principalOf(peer: HandshakePeer, chosen: Chosen): Principal {
  const keyId = chosen.keyId ?? '';
  if (peer.role === 'relay') return chosen.keyId === undefined ? { role: 'local' } : { role: 'remote', keyId, grants: chosen.grants ?? [] };
  return { role: peer.role, keyId, origin: peer.origin ?? '' };
}

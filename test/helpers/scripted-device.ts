import WebSocket from 'ws';
import type { ClientOptions } from 'ws';
import { constantTimeEqual, hubProof, newNonce, openSealedKey, peerProof, type ProofBinding } from '../../shared/hub-auth.js';
import type { Welcome } from '../../shared/peer-calls.js';
import { PAIRING_SUBPROTOCOL, PROTOCOL_VERSION, SUBPROTOCOL } from '../../shared/wire-protocol.js';
import { ScriptedPeer } from './scripted-peer.js';

export interface DeviceKey {
  keyId: string;
  key: string;
}

export interface DeviceOptions {
  /** The page's origin, sent as Origin and bound into every proof unless `bindOrigin` says otherwise. */
  origin: string;
  /** Ask to pair (lists `elicitly.pair`). */
  pairing?: boolean;
  /** Extra upgrade headers (a forged Host) and TLS options (the test certificate) for the `ws` client. */
  client?: ClientOptions;
}

/**
 * A stand-in for the hub's reviewer page in a phone's browser: it speaks the peer call map as role `device`, its proofs
 * bound to the hub's port and the page's origin. `connect` resolves with the HTTP status when the upgrade is refused.
 */
export class ScriptedDevice extends ScriptedPeer {
  private constructor(
    socket: WebSocket,
    readonly origin: string,
  ) {
    super(socket);
  }

  /** Opens the socket at `url` (ws:// or wss://); a refused upgrade gives its HTTP status. */
  static async connect(url: string, options: DeviceOptions, track?: { close: () => void }[]): Promise<ScriptedDevice | { status: number }> {
    const protocols = options.pairing ? [SUBPROTOCOL, PAIRING_SUBPROTOCOL] : [SUBPROTOCOL];
    const socket = new WebSocket(url, protocols, { ...options.client, origin: options.origin });
    track?.push({ close: () => socket.terminate() });
    socket.on('error', () => undefined);
    const device = new ScriptedDevice(socket, options.origin);
    const status = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`opening ${url} timed out`)), 5000);
      socket.once('open', () => (clearTimeout(timer), resolve(101)));
      socket.once('unexpected-response', (_req, res) => (clearTimeout(timer), res.resume(), resolve(res.statusCode ?? 0)));
      socket.once('error', (error) => (clearTimeout(timer), reject(error)));
    });
    return status === 101 ? device : { status };
  }

  private async hello(nonce: string, binding: ProofBinding, claim: { keyId: string } | { pairing: true; deviceName?: string }, check: string | null): Promise<{ nonce: string; genuine: boolean }> {
    const challenge = await this.call('hello', { protocol: PROTOCOL_VERSION, role: 'device', client: { name: 'scripted-device', version: '1' }, nonce, ...claim });
    if (!challenge.result) throw new Error(`the hub refused the hello: ${JSON.stringify(challenge.error)}`);
    const genuine = check !== null && constantTimeEqual(challenge.result.proof, await hubProof(check, binding, nonce, challenge.result.nonce));
    return { nonce: challenge.result.nonce, genuine };
  }

  /** Pairs with the one-time code: hello, the hub's proof checked with the code, ours, then the sealed key opened. */
  async pair(code: string, hubPort: number, deviceName?: string): Promise<{ key: DeviceKey; welcome: Welcome }> {
    const nonce = newNonce();
    const binding: ProofBinding = { port: hubPort, role: 'device', origin: this.origin };
    const challenge = await this.hello(nonce, binding, { pairing: true, ...(deviceName ? { deviceName } : {}) }, code);
    if (!challenge.genuine) throw new Error('the hub did not prove the code');
    const auth = await this.call('auth', { proof: await peerProof(code, binding, challenge.nonce, nonce) });
    if (!auth.result?.paired) throw new Error(`the hub did not pair: ${JSON.stringify(auth)}`);
    const key = await openSealedKey(auth.result.paired.sealedKey, code, hubPort, challenge.nonce, nonce);
    if (key === null) throw new Error('the sealed key does not open');
    return { key: { keyId: auth.result.paired.keyId, key }, welcome: auth.result.welcome };
  }

  /**
   * The handshake with a paired key. `bindOrigin` forges the origin the proof is bound to (a proof made on another
   * page); then the hub's proof is not checked (it cannot match) and the hub's answer is left to the test.
   */
  async handshake(key: DeviceKey, hubPort: number, bindOrigin = this.origin): Promise<Welcome | null> {
    const nonce = newNonce();
    const binding: ProofBinding = { port: hubPort, role: 'device', origin: bindOrigin };
    const challenge = await this.hello(nonce, binding, { keyId: key.keyId }, key.key);
    if (bindOrigin === this.origin && !challenge.genuine) throw new Error('the hub did not prove the key');
    const proof = await peerProof(key.key, binding, challenge.nonce, nonce);
    if (bindOrigin !== this.origin) {
      this.request('auth', { proof });
      return null;
    }
    const auth = await this.call('auth', { proof });
    if (!auth.result) throw new Error(`the hub refused the auth: ${JSON.stringify(auth.error)}`);
    return auth.result.welcome;
  }
}

/** Narrows a `connect` answer to an open device, or fails the test naming the status. */
export function openDevice(device: ScriptedDevice | { status: number }): ScriptedDevice {
  if (!(device instanceof ScriptedDevice)) throw new Error(`expected the upgrade to succeed, got HTTP ${device.status}`);
  return device;
}

// The hub's side of the handshake, for a stand-in hub (an old or hostile one the real server refuses to be, or one that
// plays a history): pairing with a code, then proving the paired key, both bound to the port the extension dials.
import type { WebSocket } from 'ws';
import { hubProof, newNonce, peerProof, sealKey } from '../../shared/hub-auth.js';
import { parseParams, type Result } from '../../shared/peer-calls.js';
import type { HubFrame, PeerFrame } from '../../shared/wire-protocol.js';

export interface StandInKeys {
  /** The pairing code the person types. */
  code: string;
  /** The key the hub seals to the extension when it pairs, and the extension proves later. */
  key: string;
  keyId: string;
}

export const sendFrame = (socket: WebSocket, frame: HubFrame) => socket.send(JSON.stringify(frame));

/** One socket's handshake: `hello` answered with a challenge, `auth` checked and answered with the welcome. */
export class StandInHandshake {
  private peerNonce = '';
  private hubNonce = '';
  private secret: string;
  private pairing = false;

  constructor(
    private readonly keys: StandInKeys,
    private readonly port: () => number,
  ) {
    this.secret = keys.key;
  }

  /** Answers a handshake call; which one it was, or null for any other frame (or a refusal, the socket closed). */
  async answer(socket: WebSocket, frame: PeerFrame, welcome: () => Result<'auth'>['welcome']): Promise<'hello' | 'auth' | null> {
    if (frame.id === undefined) return null;
    const binding = { port: this.port(), role: 'extension' as const };
    if (frame.method === 'hello') {
      const hello = parseParams('hello', frame.params);
      if (!hello.success) {
        socket.close(4000, 'not a hello of this protocol');
        return null;
      }
      this.pairing = hello.data.pairing === true;
      this.secret = this.pairing ? this.keys.code : this.keys.key;
      this.peerNonce = hello.data.nonce;
      this.hubNonce = newNonce();
      const challenge: Result<'hello'> = { nonce: this.hubNonce, proof: await hubProof(this.secret, binding, this.peerNonce, this.hubNonce) };
      sendFrame(socket, { id: frame.id, result: challenge });
      return 'hello';
    }
    if (frame.method === 'auth') {
      const auth = parseParams('auth', frame.params);
      if (!auth.success || auth.data.proof !== await peerProof(this.secret, binding, this.hubNonce, this.peerNonce)) {
        socket.close(4001, 'authentication failed');
        return null;
      }
      const paired = this.pairing ? { paired: { keyId: this.keys.keyId, sealedKey: await sealKey(this.keys.key, this.keys.code, binding.port, this.hubNonce, this.peerNonce) } } : {};
      sendFrame(socket, { id: frame.id, result: { ...paired, welcome: welcome() } });
      return 'auth';
    }
    return null;
  }
}

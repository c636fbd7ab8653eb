// The extension's side of pairing with a one-time code against a real hub, step by step over a raw socket: the hub
// proves the code first, then the extension, and the key comes back sealed with the code.
import type WebSocket from 'ws';
import { constantTimeEqual, hubProof, newNonce, openSealedKey, peerProof } from '../../shared/hub-auth.js';
import { PAIRING_SUBPROTOCOL, PROTOCOL_VERSION, SUBPROTOCOL } from '../../shared/wire-protocol.js';
import { answerTo, callFrame, helloParams, resultOf } from './peer-frames.js';
import { opened, rawPeer } from './raw-peer.js';

/** The key the hub gave for `code`, or how it closed the socket instead. */
export async function pairExtension(port: number, origin: string, code: string, track?: WebSocket[]): Promise<{ keyId: string; key: string } | { closed: number }> {
  const peer = opened(await rawPeer(port, { origin, protocols: [SUBPROTOCOL, PAIRING_SUBPROTOCOL], ...(track ? { track } : {}) }));
  const nonce = newNonce();
  peer.send(callFrame('hello', 'hello', helloParams('extension', nonce, { client: { name: 'pairing-test', version: '1' }, pairing: true })));
  const first = await Promise.race([peer.next(answerTo('hello')), peer.closed.then((c) => ({ closedWith: c.code }))]);
  if ('closedWith' in first) return { closed: first.closedWith };
  const challenge = resultOf('hello', first);
  if (!constantTimeEqual(challenge.proof, await hubProof(code, { port, role: 'extension' }, nonce, challenge.nonce))) throw new Error('the hub did not prove the code');
  peer.send(callFrame('auth', 'auth', { proof: await peerProof(code, { port, role: 'extension' }, challenge.nonce, nonce) }));
  const second = await Promise.race([peer.next(answerTo('auth')), peer.closed.then((c) => ({ closedWith: c.code }))]);
  // Another socket spent the code between this one's hello and its proof.
  if ('closedWith' in second) return { closed: second.closedWith };
  const { paired, welcome } = resultOf('auth', second);
  if (!paired) throw new Error('the auth was answered without a key');
  if (welcome.protocol !== PROTOCOL_VERSION) throw new Error(`welcome.protocol ${welcome.protocol}, not ${PROTOCOL_VERSION}`);
  peer.socket.close();
  const key = await openSealedKey(paired.sealedKey, code, port, challenge.nonce, nonce);
  if (!key) throw new Error('could not open the sealed key');
  return { keyId: paired.keyId, key };
}

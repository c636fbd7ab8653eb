import type { ProofBinding, HubSecret } from '../shared/hub-auth.js';
import { nextHandshake, startHandshake, type ClientHandshake } from '../shared/hub-handshake.js';
import { parseResult } from '../shared/peer-calls.js';
import { CLOSE_AUTH_FAILED, CLOSE_UNKNOWN_KEY, HubFrameSchema, SUBPROTOCOL, isAnswer, type DecideParams } from '../shared/wire-protocol.js';
import type { DecisionAnswer } from '../shared/wire-fields.js';
import type { SocketFactory, SocketLike } from '../kit/hub/hub-connection.js';

/**
 * One decision from the phone's service worker (a notification's Approve or Deny): a socket opened for it alone, the
 * device's handshake (the hub proves the key first, bound to the hub's port and the page's origin), one `decide` call
 * and its answer, then the socket closed. Everything within one bound: a worker is given seconds, not minutes.
 */

export interface DecideOnceOptions {
  /** The hub's socket at the page's origin (`/phone/socket`). */
  url: string;
  binding: ProofBinding;
  credential: { keyId: string; key: HubSecret };
  socketFactory: SocketFactory;
  client: { name: string; version: string };
  params: DecideParams;
  timeoutMs: number;
}

export type DecideOnceResult =
  | { state: 'answered'; answer: DecisionAnswer }
  /** The hub refused the call itself (not the decision): its code and words. */
  | { state: 'refused'; code: string; message: string }
  /** No hub proved this key (an impostor, a key removed), or none answered in time: nothing was decided. */
  | { state: 'unproven' | 'unreachable' | 'no_answer'; message: string };

const DECIDE_ID = 'decide';

export function decideOnce(options: DecideOnceOptions): Promise<DecideOnceResult> {
  return new Promise((resolve) => {
    let settled = false;
    let socket: SocketLike | null = null;
    let handshake: ClientHandshake | null = null;
    let welcomed = false;
    // Frames are handled one at a time, in order: a step may wait for Web Crypto.
    let chain = Promise.resolve();
    const finish = (result: DecideOnceResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      try {
        socket?.close(1000, 'done');
      } catch {
        // Already closing.
      }
      resolve(result);
    };
    const timer = setTimeout(() => finish(welcomed ? { state: 'no_answer', message: 'the hub did not answer in time: the decision may or may not be recorded' } : { state: 'unreachable', message: 'the hub did not answer in time' }), options.timeoutMs);
    try {
      socket = options.socketFactory(options.url, [SUBPROTOCOL]);
    } catch (error) {
      finish({ state: 'unreachable', message: `could not open the hub's socket: ${String(error)}` });
      return;
    }
    const open = socket;
    open.onopen = () => {
      const started = startHandshake({ role: 'device', client: options.client, secret: options.credential.key, claim: { keyId: options.credential.keyId }, binding: options.binding });
      handshake = started.state;
      open.send(JSON.stringify(started.send));
    };
    open.onerror = () => undefined;
    open.onclose = (event) => {
      if (welcomed) finish({ state: 'no_answer', message: `the hub closed the socket (${event.code}) before it answered: the decision may or may not be recorded` });
      else finish({ state: event.code === CLOSE_AUTH_FAILED || event.code === CLOSE_UNKNOWN_KEY ? 'unproven' : 'unreachable', message: `the hub closed the socket (${event.code}${event.reason ? `: ${event.reason}` : ''})` });
    };
    open.onmessage = (event) => {
      chain = chain.then(async () => {
        if (settled) return;
        if (!welcomed) {
          if (!handshake) return;
          const step = await nextHandshake(handshake, event.data);
          if ('refusal' in step) {
            const { refusal } = step;
            finish(refusal.kind === 'unproven' || refusal.kind === 'wrong_proof' ? { state: 'unproven', message: refusal.why } : { state: 'refused', code: refusal.kind, message: refusal.why });
            return;
          }
          if ('welcome' in step) {
            welcomed = true;
            open.send(JSON.stringify({ id: DECIDE_ID, method: 'decide', params: options.params }));
            return;
          }
          handshake = step.state;
          if (step.send) open.send(JSON.stringify(step.send));
          return;
        }
        if (typeof event.data !== 'string') return;
        let raw: unknown;
        try {
          raw = JSON.parse(event.data);
        } catch {
          return;
        }
        const frame = HubFrameSchema.safeParse(raw);
        // Notices (new requests, heartbeats) are not this socket's business.
        if (!frame.success || !isAnswer(frame.data) || frame.data.id !== DECIDE_ID) return;
        if ('error' in frame.data) {
          finish({ state: 'refused', code: frame.data.error.code, message: frame.data.error.message });
          return;
        }
        const result = parseResult('decide', frame.data.result);
        finish(result.success ? { state: 'answered', answer: result.data } : { state: 'no_answer', message: 'the hub answered with something that is not a decision\'s answer' });
      });
    };
  });
}

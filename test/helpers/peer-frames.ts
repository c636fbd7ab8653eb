import type { HelloParams, Params, PeerMethod, Result, ServiceError } from '../../shared/peer-calls.js';
import { parseResult } from '../../shared/peer-calls.js';
import type { AnswerFrame, CallFrame, HubFrame } from '../../shared/wire-protocol.js';
import { HubFrameSchema, PROTOCOL_VERSION, firstIssue, isAnswer } from '../../shared/wire-protocol.js';

// Small pieces for tests that speak the peer call map frame by frame (raw sockets, hand-made handshakes): typed calls
// to send, matchers for answers, and readers of what a hub sent.

/** A call frame of the map, its params typed by the method. */
export function callFrame<M extends PeerMethod>(id: string, method: M, params: Params<M>): CallFrame {
  return { id, method, params };
}

/** The params of a hello of this protocol (a test adds a key id, a pairing, or overrides a field). */
export function helloParams(role: HelloParams['role'], nonce: string, extra: Partial<HelloParams> = {}): HelloParams {
  return { protocol: PROTOCOL_VERSION, role, client: { name: 'test-peer', version: '1' }, nonce, ...extra };
}

/** Matches the answer to the call `id` (a result or an error). */
export function answerTo(id: string | null): (frame: HubFrame) => frame is AnswerFrame {
  return (frame): frame is AnswerFrame => isAnswer(frame) && frame.id === id;
}

/** Matches an answer with an error of this code, whatever its id. */
export function errorWith(code: ServiceError['code']): (frame: HubFrame) => boolean {
  return (frame) => isAnswer(frame) && 'error' in frame && frame.error.code === code;
}

/** The result of an answer to `method`, checked against the map's schema; fails the test on an error or a bad value. */
export function resultOf<M extends PeerMethod>(method: M, frame: HubFrame): Result<M> {
  if (!isAnswer(frame)) throw new Error(`expected the answer to ${method}, got the notice ${frame.method}`);
  if ('error' in frame) throw new Error(`the hub refused ${method}: ${frame.error.code}: ${frame.error.message}`);
  const checked = parseResult(method, frame.result);
  if (!checked.success) throw new Error(`the hub answered ${method} with an invalid result: ${firstIssue(checked.error)}`);
  return checked.data;
}

/** The error of an answer; fails the test when it is a result or a notice. */
export function errorOf(frame: HubFrame): ServiceError {
  if (!isAnswer(frame) || !('error' in frame)) throw new Error(`expected an error answer, got ${JSON.stringify(frame)}`);
  return frame.error;
}

/** Every frame a raw peer received, each checked against the hub's framing. */
export function hubFrames(frames: readonly string[]): HubFrame[] {
  return frames.map((text) => HubFrameSchema.parse(JSON.parse(text)));
}

/** Answers that carried a result (not an error), by the id of their call. */
export function resultIds(frames: readonly HubFrame[]): (string | null)[] {
  return frames.filter((f): f is AnswerFrame => isAnswer(f) && 'result' in f).map((f) => f.id);
}

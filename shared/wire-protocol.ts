import * as z from 'zod';
import { first, fromZod, pathOf, segments } from './field-issues.js';
import { HUB_NOTICES, PEER_NOTICES, ServiceErrorSchema, type HubNotice, type HubNoticeName, type PeerNotice, type PeerNoticeName, type ServiceError } from './peer-calls.js';

export { DecideParamsSchema, DecisionRefusalSchema, DeviceNameSchema, IdempotencyKeySchema, KeyIdSchema, NONCE_HEX_LENGTH, PROTOCOL_VERSION } from './wire-fields.js';
export type { DecideParams, DecisionRefusal } from './wire-fields.js';
export type { RequestView } from './review-request.js';

/**
 * The hub socket's framing (one JSON object per text frame), for the one call map of `peer-calls.ts`:
 *
 *   call    { id, method, params }       a peer asks; answered exactly once, by the answer with its id
 *   answer  { id, result } | { id, error } the hub answers; `id: null` only for a frame it could not read an id from
 *   notice  { method, params }           either side, never answered (heartbeats, events, `abort`)
 *
 * The hub only answers and notifies; it never calls a peer, so no answer is ever answered.
 */

/** The hub's `maxPayload`: a bigger frame closes the socket (1009), so a peer refuses to send one. */
export const MAX_FRAME_BYTES = 1024 * 1024;

/**
 * Both sides send a heartbeat on their own timer and never answer one: an answered heartbeat turns two peers that both
 * answer into a storm. Messages, not WebSocket pings, are what keep an MV3 service worker alive (Chrome ≥ 116).
 */
export const HEARTBEAT_MS = 20_000;

/** Close codes the hub uses (4000–4999 are the application's). */
/** The peer's proof was wrong (or the pairing code was). */
export const CLOSE_AUTH_FAILED = 4001;
/** The reason is `hub speaks protocol <N>`. */
export const CLOSE_PROTOCOL_MISMATCH = 4002;
/** The extension's key is not (or no longer) paired with this hub: pair again. */
export const CLOSE_UNKNOWN_KEY = 4003;
/** A pairing hello, but no pairing code is active (none made, expired, or used up by failed attempts). */
export const CLOSE_NO_PAIRING = 4004;
/** The phone page was turned off (`remote disable`) or this device's origin is no longer allowed: the key is kept. */
export const CLOSE_REMOTE_OFF = 4005;
/** A device's pairing hello named a code a newer `remote pair` replaced (its `pairingSerial` is not the newest). */
export const CLOSE_CODE_REPLACED = 4006;
/** No hello within the hub's hello window. */
export const CLOSE_HELLO_TIMEOUT = 4008;
/** The hub is shutting down or stepping down (its store failed): reconnect, another process takes over. */
export const CLOSE_GOING_AWAY = 1001;
/** The hub could not read what it needs to check this peer (an untrusted or unreadable state file): see its log. */
export const CLOSE_INTERNAL_ERROR = 1011;
/** The hub has as many proven peers as it takes: try again later. */
export const CLOSE_HUB_FULL = 1013;

export function protocolMismatchReason(version: number): string {
  return `hub speaks protocol ${version}`;
}
/** The hub's version from a mismatch close reason, or null when the reason is not one. */
export function hubProtocolFromReason(reason: string): number | null {
  const match = /^hub speaks protocol (\d+)$/.exec(reason);
  return match ? Number(match[1]) : null;
}

const FrameIdSchema = z.string().min(1).max(100);
const MethodNameSchema = z.string().min(1).max(50);

/** What a peer sends: a call (with an id) or a notice (without). Params are checked against the method's own schema. */
export const PeerFrameSchema = z.strictObject({ id: FrameIdSchema.optional(), method: MethodNameSchema, params: z.unknown() });
export type PeerFrame = z.infer<typeof PeerFrameSchema>;
export interface CallFrame {
  id: string;
  method: string;
  params: unknown;
}

const ResultFrameSchema = z.strictObject({ id: FrameIdSchema, result: z.unknown() });
const ErrorFrameSchema = z.strictObject({ id: FrameIdSchema.nullable(), error: ServiceErrorSchema });
const NoticeFrameSchema = z.strictObject({ method: MethodNameSchema, params: z.unknown() });
/** What the hub sends: an answer to a call, or a notice. */
export const HubFrameSchema = z.union([ResultFrameSchema, ErrorFrameSchema, NoticeFrameSchema]);
export type AnswerFrame = z.infer<typeof ResultFrameSchema> | z.infer<typeof ErrorFrameSchema>;
export type HubFrame = z.infer<typeof HubFrameSchema>;

export function isAnswer(frame: HubFrame): frame is AnswerFrame {
  return 'id' in frame;
}

/** A hub notice checked against its own schema, or why not. */
export function parseHubNotice(frame: { method: string; params: unknown }): Parsed<HubNotice> {
  if (!Object.hasOwn(HUB_NOTICES, frame.method)) return { ok: false, error: `unknown notice ${JSON.stringify(frame.method)}` };
  const method = frame.method as HubNoticeName;
  const checked = HUB_NOTICES[method].params.safeParse(frame.params);
  // The name picked the schema that just checked these params: the pair is one of the map's notices.
  return checked.success ? { ok: true, message: { method, params: checked.data } as HubNotice } : { ok: false, error: `${method}: ${firstIssue(checked.error)}` };
}

/** A peer notice checked against its own schema, or why not. */
export function parsePeerNotice(frame: { method: string; params: unknown }): Parsed<PeerNotice> {
  if (!Object.hasOwn(PEER_NOTICES, frame.method)) return { ok: false, error: `unknown notice ${JSON.stringify(frame.method)}` };
  const method = frame.method as PeerNoticeName;
  const checked = PEER_NOTICES[method].params.safeParse(frame.params);
  return checked.success ? { ok: true, message: { method, params: checked.data } as PeerNotice } : { ok: false, error: `${method}: ${firstIssue(checked.error)}` };
}

/** An answer with an error, for a call the hub refuses (or a frame it could not read an id from: `id` null). */
export function errorFrame(id: string | null, error: ServiceError): AnswerFrame {
  return { id, error };
}

/**
 * Read before the rest of a hello, so a peer of any version learns of a mismatch: this protocol's hello, or the
 * `{ type: 'hello', protocol }` of protocols 1 to 8.
 */
const HelloVersionSchema = z.looseObject({ method: z.literal('hello'), params: z.looseObject({ protocol: z.number().int() }) });
const LegacyHelloVersionSchema = z.looseObject({ type: z.literal('hello'), protocol: z.number().int() });
export function helloProtocol(raw: unknown): number | null {
  const hello = HelloVersionSchema.safeParse(raw);
  if (hello.success) return hello.data.params.protocol;
  const legacy = LegacyHelloVersionSchema.safeParse(raw);
  return legacy.success ? legacy.data.protocol : null;
}

/**
 * The error frame of protocols 1 to 8 (`{ type: "error", code, message }`): what an older hub answers a hello of this
 * protocol with, since it cannot read it. Anything else in that old shape is no hub's answer to our hello.
 */
const LegacyErrorSchema = z.looseObject({ type: z.literal('error'), code: z.string(), message: z.string() });
export function isLegacyError(raw: unknown): boolean {
  return LegacyErrorSchema.safeParse(raw).success;
}

/** Every peer lists it. No credential travels in the handshake any more: peers prove keys on the socket. */
export const SUBPROTOCOL = 'elicitly.v1';
/** Listed (besides SUBPROTOCOL) by an extension whose origin is not paired yet and that comes to pair. */
export const PAIRING_SUBPROTOCOL = 'elicitly.pair';

export type Parsed<T> = { ok: true; message: T } | { ok: false; error: string };

export function parseFrame<T>(schema: z.ZodType<T>, data: string): Parsed<T> {
  let raw: unknown;
  try {
    raw = JSON.parse(data);
  } catch {
    return { ok: false, error: 'not JSON' };
  }
  const result = schema.safeParse(raw);
  return result.success ? { ok: true, message: result.data } : { ok: false, error: first(fromZod(schema, result.error.issues, raw, { whole: '(message)' }), 'invalid message') };
}

/**
 * The first problem of a refused message, naming the field, for the peer to act on. Only the error is at hand here, not
 * the frame, so the words are zod's; `parseFrame` says the kit's.
 */
export function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid message';
  return `${pathOf(segments(issue.path), { whole: '(message)' })}: ${issue.message}`;
}

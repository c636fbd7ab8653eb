import * as z from 'zod';
import { ApprovalMethodSchema, ServiceErrorSchema } from './approval-calls.js';
import { FieldIssueSchema, first, fromZod, pathOf, segments } from './field-issues.js';
import { RequestViewSchema } from './review-request.js';
import { DecidedViaSchema, StatusSchema } from './lifecycle.js';
import { MAX_RULES, RuleDraftSchema, RuleIdSchema, RuleSchema } from './rules.js';
import { DecideMessageSchema, DecisionRefusalSchema, DeviceNameSchema, ElicitationIdSchema, IdempotencyKeySchema, KeyIdSchema, NONCE_HEX_LENGTH, PROTOCOL_VERSION } from './wire-fields.js';

export { DecideMessageSchema, DecisionRefusalSchema, DeviceNameSchema, IdempotencyKeySchema, KeyIdSchema, NONCE_HEX_LENGTH, PROTOCOL_VERSION };
export type { DecideMessage, DecisionRefusal } from './wire-fields.js';

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

export type { RequestView } from './review-request.js';

const Hex = (length: number) => z.string().length(length).regex(/^[0-9a-f]+$/, 'must be lowercase hex');
const Nonce = Hex(NONCE_HEX_LENGTH);
const Proof = Hex(64);

/**
 * The first message. An extension or a device names the key it was paired with (`keyId`), or asks to pair
 * (`pairing: true`, proving the one-time code; a device also says what to call it, `deviceName`); a relay proves the
 * install secret and names no key, or the key exported for it (`elicitly-companion key export`) by its `keyId`.
 * See `hub-auth.ts`.
 */
const Hello = z.strictObject({
  type: z.literal('hello'),
  protocol: z.number().int(),
  role: z.enum(['extension', 'relay', 'device']),
  client: z.strictObject({ name: z.string().max(100), version: z.string().max(50) }),
  nonce: Nonce,
  keyId: KeyIdSchema.optional(),
  pairing: z.literal(true).optional(),
  deviceName: DeviceNameSchema.optional(),
});
const Auth = z.strictObject({ type: z.literal('auth'), proof: Proof });
/** Read before the full hello, so a peer of any version, whatever else its hello holds, learns of a mismatch. */
export const HelloVersionSchema = z.looseObject({ type: z.literal('hello'), protocol: z.number().int() });
const Heartbeat = z.strictObject({ type: z.literal('heartbeat'), t: z.number() });

/** A relay forwards one approval call; `params` is checked against the method's schema in `approval-calls.ts`. */
const CallId = z.string().min(1).max(100);
const Call = z.strictObject({ type: z.literal('call'), callId: CallId, method: ApprovalMethodSchema, params: z.unknown() });
/** The relay's caller gave up (the host cancelled the tool call): the hub stops waiting and answers the call at once. */
const CallAbort = z.strictObject({ type: z.literal('call.abort'), callId: CallId });

/**
 * The extension's Rules view: save a rule (a new one has no `id`; an existing one is replaced whole) or delete one.
 * Each is answered by `rule.result` with its `changeId`; every change is then pushed to every extension as `rules`.
 */
const ChangeId = z.string().min(1).max(100);
const RuleSave = z.strictObject({ type: z.literal('rule.save'), changeId: ChangeId, id: RuleIdSchema.optional(), rule: RuleDraftSchema });
const RuleDelete = z.strictObject({ type: z.literal('rule.delete'), changeId: ChangeId, id: RuleIdSchema });

export const PeerMessageSchema = z.discriminatedUnion('type', [Hello, Auth, Heartbeat, DecideMessageSchema, Call, CallAbort, RuleSave, RuleDelete]);
export type PeerMessage = z.infer<typeof PeerMessageSchema>;

/**
 * The ids an answer must carry, read from a frame that failed its own schema: a decide or a call that is refused is
 * answered with its `decision.result` / `call.result`, so the peer's waiting request settles instead of retrying.
 */
export const ReplyToSchema = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('decide'), elicitationId: ElicitationIdSchema, idempotencyKey: IdempotencyKeySchema }),
  z.looseObject({ type: z.literal('call'), callId: CallId }),
  z.looseObject({ type: z.literal('rule.save'), changeId: ChangeId }),
  z.looseObject({ type: z.literal('rule.delete'), changeId: ChangeId }),
]);

const Challenge = z.strictObject({ type: z.literal('challenge'), nonce: Nonce, proof: Proof });
/** After a pairing: the extension's new key, sealed with the code (see `sealKey`). */
const Paired = z.strictObject({ type: z.literal('paired'), keyId: KeyIdSchema, sealedKey: Hex(64) });
const Rules = z.array(RuleSchema).max(MAX_RULES);
/** How many ended requests a device's welcome carries as its recent history (it keeps no history of its own). */
export const DEVICE_RECENT = 20;
/** `recent`: to a device only, the last ended requests, newest first. */
const Welcome = z.strictObject({
  type: z.literal('welcome'),
  protocol: z.number().int(),
  hubPid: z.number(),
  pending: z.array(RequestViewSchema),
  rules: Rules,
  recent: z.array(RequestViewSchema).max(DEVICE_RECENT).optional(),
});
/** Every rule, after any change (a save, a delete, an expiry the hub swept, a `rules --remove`). */
const RulesMessage = z.strictObject({ type: z.literal('rules'), rules: Rules });
const RuleResult = z.strictObject({
  type: z.literal('rule.result'),
  changeId: ChangeId,
  ok: z.boolean(),
  /** The saved rule's id. */
  id: RuleIdSchema.optional(),
  issues: z.array(FieldIssueSchema).optional(),
});
/** A new request; one a rule decided at creation arrives decided (for the history), with its outcome. */
const Created = z.strictObject({ type: z.literal('request.created'), request: RequestViewSchema });
/** `decidedVia` says which surface decided a request that ended decided, so the other one can say so. */
const Removed = z.strictObject({ type: z.literal('request.removed'), elicitationId: ElicitationIdSchema, status: StatusSchema, decidedVia: DecidedViaSchema.optional() });
const DecisionResult = z.strictObject({
  type: z.literal('decision.result'),
  elicitationId: ElicitationIdSchema,
  idempotencyKey: IdempotencyKeySchema,
  ok: z.boolean(),
  status: StatusSchema.optional(),
  reason: DecisionRefusalSchema.optional(),
  issues: z.array(FieldIssueSchema).optional(),
});
const CallResult = z.discriminatedUnion('ok', [
  z.strictObject({ type: z.literal('call.result'), callId: CallId, ok: z.literal(true), value: z.unknown() }),
  z.strictObject({ type: z.literal('call.result'), callId: CallId, ok: z.literal(false), error: ServiceErrorSchema }),
]);
/**
 * A frame the hub could not attribute to a call or a decision. `unsupported_protocol` is what hubs of protocol 1 sent
 * instead of closing; a peer reads it before `welcome` as "the hub is older than me".
 */
const ErrorMessage = z.strictObject({
  type: z.literal('error'),
  code: z.enum(['invalid_message', 'unsupported_protocol', 'rate_limited', 'not_hello', 'forbidden']),
  message: z.string(),
});

export const HubMessageSchema = z.discriminatedUnion('type', [Challenge, Paired, Welcome, Created, Removed, DecisionResult, CallResult, ErrorMessage, Heartbeat, RulesMessage, RuleResult]);
export type HubMessage = z.infer<typeof HubMessageSchema>;

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

import * as z from 'zod';
import { FieldIssueSchema } from './field-issues.js';
import { ReceiptSchema, Sha256HexSchema } from './receipt.js';
import { DecidedViaSchema, StatusSchema, SurfaceSchema } from './lifecycle.js';
import { RequestViewSchema, ResultEnvelopeSchema, ReviewRequestSchema } from './review-request.js';
import { PushSubscriptionSchema } from './push-notice.js';
import { MAX_RULES, RuleDraftSchema, RuleIdSchema, RuleSchema } from './rules.js';
import { AssertionSchema, AssuranceSchema, CredentialIdSchema, PasskeyInfoSchema, PasskeyLabelSchema, PasskeyScopeSchema, RegistrationSchema } from './passkey-wire.js';
import { QuorumStatusSchema } from './routing.js';
import { DecideParamsSchema, DecisionAnswerSchema, DeviceNameSchema, ElicitationIdSchema, KeyIdSchema, NONCE_HEX_LENGTH, RequesterSchema, type Grant } from './wire-fields.js';
import { ReviewerNameSchema } from './reviewers.js';

/**
 * The one call map every peer of the hub speaks: relays (agents' servers, hooks, commands), the browser extension, the
 * phone page, and the review inside a chat (through the server that serves it). Each method is `{ params, result,
 * callers }`: the hub's dispatcher checks `callers` (and `grant`) before anything runs, validates `params`, and the
 * caller validates `result`. Frames are `{ id, method, params }` answered by `{ id, result }` or `{ id, error }`
 * (`wire-protocol.ts`); notices (`{ method, params }`, no id) are never answered.
 */

/**
 * Who is calling, as the hub knows it from the key the socket proved (never from anything a frame says):
 * - `unproven`: a socket that has not proved a key yet (only the handshake);
 * - `local`: a relay proving the install key: an agent's server, a hook or a command on this computer;
 * - `remote`: a relay proving a key exported for it (`key export`): an agent on another machine, which sees and
 *   touches only its own requests, and more only as granted by name at export (`GRANTS`);
 * - `extension`: a paired browser extension; `device`: a paired phone page;
 * - `app`: the review inside a chat. It reaches the hub only through the local server that served it, after that server
 *   checked the view's single-use key, so a local relay's socket (and the hub's own tools) call the app's methods as it.
 */
export const CALLERS = ['unproven', 'local', 'remote', 'extension', 'device', 'app'] as const;
export type Caller = (typeof CALLERS)[number];

export { GRANTS, GrantSchema, type Grant } from './wire-fields.js';

const Hex = (length: number) => z.string().length(length).regex(/^[0-9a-f]+$/, 'must be lowercase hex');
const Nonce = Hex(NONCE_HEX_LENGTH);
const Proof = Hex(64);

/**
 * The first call. An extension or a device names the key it was paired with (`keyId`), or asks to pair (`pairing: true`,
 * proving the one-time code; a device also says what to call itself); a relay proves the install key and names none, or
 * the key exported for it, by its `keyId`. See `hub-auth.ts`.
 */
const HelloParamsSchema = z.strictObject({
  protocol: z.number().int(),
  role: z.enum(['extension', 'relay', 'device']),
  client: z.strictObject({ name: z.string().max(100), version: z.string().max(50) }),
  nonce: Nonce,
  keyId: KeyIdSchema.optional(),
  pairing: z.literal(true).optional(),
  deviceName: DeviceNameSchema.optional(),
  /**
   * A device pairing with the code of its QR link names that code's serial (the link's `n`): when a newer code replaced
   * it, the hub says so (4006) instead of failing a proof the page would read as an impostor's.
   */
  pairingSerial: z.number().int().min(1).optional(),
});
export type HelloParams = z.infer<typeof HelloParamsSchema>;

/** How many ended requests a device's welcome carries as its recent history (it keeps no history of its own). */
export const DEVICE_RECENT = 20;
const RulesSchema = z.array(RuleSchema).max(MAX_RULES);
/** `recent`: to a device only, the last ended requests, newest first. */
const WelcomeSchema = z.strictObject({
  protocol: z.number().int(),
  hubPid: z.number(),
  pending: z.array(RequestViewSchema),
  rules: RulesSchema,
  recent: z.array(RequestViewSchema).max(DEVICE_RECENT).optional(),
});
export type Welcome = z.infer<typeof WelcomeSchema>;

/** The answer to a proven `auth`: a pairing peer's new key first (sealed with the code, `sealKey`), then the welcome. */
const AuthResultSchema = z.strictObject({
  paired: z.strictObject({ keyId: KeyIdSchema, sealedKey: Hex(64) }).optional(),
  welcome: WelcomeSchema,
});

const CreateParamsSchema = z.strictObject({
  /** Made by the caller, so a relay that lost its hub mid-call can retry without creating a twin. */
  id: ElicitationIdSchema,
  request: ReviewRequestSchema,
  renderedTemplate: z.string().nullable(),
  timeoutMs: z.number().int().positive(),
  requester: RequesterSchema,
  /**
   * Where the request may be decided; the hub refuses a decision from a surface not listed. Absent (a relay of an
   * earlier build) means both, as before.
   */
  surfaces: z.array(SurfaceSchema).min(1).max(2).optional(),
  /**
   * The request lives only as long as the connection that created it: the hub withdraws it when that socket closes (the
   * hook's process ended, by any signal), and at start for any left from a hub that is gone.
   */
  bound: z.literal(true).optional(),
  /** `passkey`: only a decision signed by one of the person's passkeys counts (refused when they have none). */
  assurance: AssuranceSchema.optional(),
});
export type CreateParams = z.infer<typeof CreateParamsSchema>;
/** A create of a host's own permission prompt: what the `permission` grant is for. */
const PermissionCreateSchema = z.looseObject({ request: z.looseObject({ kind: z.literal('permission') }) });

const CreatedSchema = z.strictObject({
  elicitationId: ElicitationIdSchema,
  /** Decided already when one of the person's rules matched it (permission requests and confirm asks only). */
  status: z.enum(['pending', 'approved', 'rejected']),
  decidedVia: DecidedViaSchema.optional(),
  ruleId: RuleIdSchema.optional(),
  expiresAt: z.string(),
  reviewer: z.strictObject({ connected: z.boolean() }),
  /** When no extension is paired: what the agent should tell the person (where to pair, never the code). */
  next: z.string().optional(),
});
export type Created = z.infer<typeof CreatedSchema>;

const IdParamsSchema = z.strictObject({ id: ElicitationIdSchema });
const HubInfoSchema = z.strictObject({
  /** The hub's process id, for a person checking what holds the port (`elicitly-companion status`). */
  pid: z.number().int().positive(),
  extensionsConnected: z.number().int().min(0),
  /** When a reviewer's extension last sent anything (ms since the epoch), or null when none has yet. */
  lastSeenAt: z.number().nullable(),
  /** Requests waiting for a decision: every one for a local caller, the caller's own for a remote one. */
  pending: z.number().int().min(0),
});
export type HubInfo = z.infer<typeof HubInfoSchema>;
/** A request's status; with a quorum (a team's route), the approvals so far. */
const StatusAnswerSchema = z.strictObject({ status: StatusSchema, approvals: QuorumStatusSchema.optional() });
/** The longest elicit_await window; the relay's own call timeout is derived from it. */
const MAX_WAIT_MS = 600_000;

/** The answer to a rule change, once it is on disk; `issues` name the field of a refused one. */
const RuleChangeResultSchema = z.strictObject({ ok: z.boolean(), id: RuleIdSchema.optional(), issues: z.array(FieldIssueSchema).optional() });

/** A ceremony's one-time nonce (base64url of 32 random bytes). */
const NonceSchema = z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'must be a nonce from passkey.nonce');
/**
 * The answer to a change to the passkeys or their setting, once it is on disk; a refusal names the field, and says
 * `passkey_required` when a passkey must approve the change first.
 */
const PasskeyChangeResultSchema = z.strictObject({
  ok: z.boolean(),
  id: CredentialIdSchema.optional(),
  removed: z.boolean().optional(),
  reason: z.enum(['passkey_required', 'passkey_invalid', 'invalid']).optional(),
  issues: z.array(FieldIssueSchema).optional(),
});
/** Proof for a change made from a page: an assertion by one of the passkeys over `manageChallenge` of this nonce and change. */
const ProofFields = { nonce: NonceSchema.optional(), proof: AssertionSchema.optional() };

interface MethodSpec {
  params: z.ZodType;
  result: z.ZodType;
  callers: readonly Caller[];
  /** A remote caller needs this grant for these (already checked) params; null: none needed. */
  grant?: (params: unknown) => Grant | null;
  /** One line for the role × method table in docs/security.md. */
  what: string;
}

export const PEER_CALLS = {
  hello: { params: HelloParamsSchema, result: z.strictObject({ nonce: Nonce, proof: Proof }), callers: ['unproven'], what: 'open the handshake: the hub proves the key first' },
  auth: { params: z.strictObject({ proof: Proof }), result: AuthResultSchema, callers: ['unproven'], what: "prove the key; the answer is the welcome (and a pairing peer's sealed key)" },
  create: {
    params: CreateParamsSchema,
    result: CreatedSchema,
    callers: ['local', 'remote'],
    grant: (params: unknown) => (PermissionCreateSchema.safeParse(params).success ? 'permission' : null),
    what: "file a request (a remote key files a host's permission prompt only with the `permission` grant)",
  },
  status: { params: IdParamsSchema, result: StatusAnswerSchema, callers: ['local', 'remote'], what: "a request's status (a remote key: its own only)" },
  await: {
    params: z.strictObject({ id: ElicitationIdSchema, waitMs: z.number().int().positive().max(MAX_WAIT_MS) }),
    result: StatusAnswerSchema,
    callers: ['local', 'remote'],
    what: 'wait for a decision (a remote key: its own requests only)',
  },
  result: { params: IdParamsSchema, result: ResultEnvelopeSchema, callers: ['local', 'remote'], what: 'collect a decision (a remote key: its own only)' },
  cancel: { params: IdParamsSchema, result: z.strictObject({ status: z.literal('canceled') }), callers: ['local', 'remote'], what: 'withdraw a request (a remote key: its own only)' },
  /** What the doctor reports of the hub: its reviewers and its queue. */
  info: { params: z.strictObject({}), result: HubInfoSchema, callers: ['local', 'remote'], what: "the hub's pid, reviewers and queue (a remote key counts its own requests)" },
  /**
   * How many reviewers (extensions and phones) are paired (null when the hub cannot read their files): an ask nobody
   * could ever answer is refused instead of filed.
   */
  paired: { params: z.strictObject({}), result: z.strictObject({ paired: z.number().int().min(0).nullable() }), callers: ['local', 'remote'], what: 'how many reviewers are paired' },
  /** One request as a reviewer sees it, decided or not: for the review inside the chat. */
  view: { params: IdParamsSchema, result: RequestViewSchema, callers: ['app'], what: 'read one request as a reviewer sees it, for the review inside a chat' },
  /**
   * A person's decision. The surface recorded (`decidedVia`) is the caller's: `extension`, `phone` for a device, `app`;
   * only the extension may save a rule with it.
   */
  decide: { params: DecideParamsSchema, result: DecisionAnswerSchema, callers: ['extension', 'device', 'app'], what: 'decide a request (the surface recorded is the caller\'s)' },
  /** The person's rules, for `elicitly-companion rules --list` and the hook. */
  rules: { params: z.strictObject({}), result: z.strictObject({ rules: RulesSchema }), callers: ['local'], what: "list the person's rules" },
  /** Save a rule (no `id`: a new one; an `id`: that rule replaced whole): only in the extension, never an agent. */
  /** With the person's setting `rules`: approved by a passkey over `manageChallenge({ rule: { id, draft } })`. */
  'rule.save': { params: z.strictObject({ id: RuleIdSchema.optional(), rule: RuleDraftSchema, ...ProofFields }), result: RuleChangeResultSchema, callers: ['extension'], what: 'save a rule' },
  /** The hub's key id, the person's setting and passkeys, and the RP ID the caller's origin uses. */
  'passkey.info': { params: z.strictObject({}), result: PasskeyInfoSchema, callers: ['local', 'extension', 'device'], what: "list the person's passkeys and setting" },
  /** A one-time nonce for a ceremony (a new passkey, or a change a passkey approves). */
  'passkey.nonce': { params: z.strictObject({}), result: z.strictObject({ nonce: NonceSchema, expiresAt: z.number() }), callers: ['extension', 'device'], what: 'start a passkey ceremony' },
  /** A new passkey: its registration over the nonce; once one exists, approved by an existing one (`proof`). */
  'passkey.register': {
    params: z.strictObject({ nonce: NonceSchema, registration: RegistrationSchema, label: PasskeyLabelSchema, proof: AssertionSchema.optional() }),
    result: PasskeyChangeResultSchema,
    callers: ['extension', 'device'],
    what: 'register a passkey (the first freely, more with an existing one)',
  },
  /** Remove a passkey: from a page with a passkey's proof, or from the terminal for a lost one (`passkey remove`). */
  'passkey.remove': { params: z.strictObject({ id: CredentialIdSchema, ...ProofFields }), result: PasskeyChangeResultSchema, callers: ['local', 'extension', 'device'], what: 'remove a passkey (from a page: approved with a passkey)' },
  /** The setting: which requests need a passkey. Loosening it from a page needs a passkey's proof. */
  'passkey.require': {
    params: z.strictObject({ require: z.array(PasskeyScopeSchema).max(4), ...ProofFields }),
    result: PasskeyChangeResultSchema,
    callers: ['local', 'extension', 'device'],
    what: 'set which requests need a passkey (loosening from a page: approved with a passkey)',
  },
  /** The hub's VAPID public key (a page's `applicationServerKey`) and whether this device has a push subscription. */
  'push.info': { params: z.strictObject({}), result: z.strictObject({ publicKey: z.string().regex(/^[A-Za-z0-9_-]{87}$/), subscribed: z.boolean() }), callers: ['device'], what: 'read the push key and this device\'s subscription' },
  /** This device's push subscription (null: notifications off here); refused when the push service is not one the hub posts to. */
  'push.subscribe': {
    params: z.strictObject({ subscription: PushSubscriptionSchema.nullable() }),
    result: z.strictObject({ subscribed: z.boolean(), issues: z.array(FieldIssueSchema).optional() }),
    callers: ['device'],
    what: 'turn push notifications on or off for this device',
  },
  /** Remove a rule: the question it answered goes back to the person, so a local command may too (`rules --remove`). */
  'rule.delete': { params: z.strictObject({ id: RuleIdSchema }), result: z.strictObject({ removed: z.boolean() }), callers: ['local', 'extension'], what: 'remove a rule' },
} as const satisfies Record<string, MethodSpec>;

export type PeerMethod = keyof typeof PEER_CALLS;
export const PEER_METHODS = Object.keys(PEER_CALLS) as PeerMethod[];
export type Params<M extends PeerMethod> = z.infer<(typeof PEER_CALLS)[M]['params']>;
export type Result<M extends PeerMethod> = z.infer<(typeof PEER_CALLS)[M]['result']>;
type CallersOf<M extends PeerMethod> = (typeof PEER_CALLS)[M]['callers'][number];
/** The methods an agent's server calls, for itself and for the review it serves: what `ApprovalService` offers. */
export type AgentMethod = { [M in PeerMethod]: Extract<CallersOf<M>, 'local' | 'remote' | 'app'> extends never ? never : M }[PeerMethod];

/** Notices the hub sends, with who hears each; never answered. */
export const HUB_NOTICES = {
  /** A new request; one a rule decided at creation arrives decided (for the history), with its outcome. */
  'request.created': { params: z.strictObject({ request: RequestViewSchema }), to: ['extension', 'device'] },
  /**
   * `decidedVia` says which surface decided a request that ended decided, so the others can say so; on a team's hub
   * `decidedBy` names the reviewer whose browser or phone it was.
   */
  'request.removed': {
    params: z.strictObject({ elicitationId: ElicitationIdSchema, status: StatusSchema, decidedVia: DecidedViaSchema.optional(), decidedBy: ReviewerNameSchema.optional() }),
    to: ['extension', 'device'],
  },
  /**
   * A decided request's receipt, once its ledger entry is on disk (a moment after `request.removed`): the extension keeps
   * it with the row, and its history export carries it.
   */
  'request.receipt': { params: z.strictObject({ elicitationId: ElicitationIdSchema, receipt: ReceiptSchema }), to: ['extension'] },
  /** Every rule, after any change (a save, a delete, an expiry the hub swept, `rules --remove`). */
  'rules.changed': { params: z.strictObject({ rules: RulesSchema }), to: ['extension'] },
  /** Sent on a timer to every proven peer, never in answer to anything: messages keep an MV3 worker alive. */
  heartbeat: { params: z.strictObject({ t: z.number() }), to: ['local', 'remote', 'extension', 'device'] },
} as const satisfies Record<string, { params: z.ZodType; to: readonly Caller[] }>;
export type HubNoticeName = keyof typeof HUB_NOTICES;
export type HubNotice = { [N in HubNoticeName]: { method: N; params: z.infer<(typeof HUB_NOTICES)[N]['params']> } }[HubNoticeName];

/** Notices a peer sends; never answered. */
export const PEER_NOTICES = {
  heartbeat: { params: z.strictObject({ t: z.number() }) },
  /** The caller gave up on its call `id` (the host cancelled `elicit_await`): the hub stops waiting and answers it at once. */
  abort: { params: z.strictObject({ id: z.string().min(1).max(100) }) },
  /**
   * A reviewer (an extension, a phone) shows this request to the person now, rendered to this hash: the hub's ledger
   * records it (`request.shown`) once per request and surface.
   */
  'request.shown': { params: z.strictObject({ elicitationId: ElicitationIdSchema, shownHash: Sha256HexSchema }) },
} as const satisfies Record<string, { params: z.ZodType }>;
export type PeerNoticeName = keyof typeof PEER_NOTICES;
export type PeerNotice = { [N in PeerNoticeName]: { method: N; params: z.infer<(typeof PEER_NOTICES)[N]['params']> } }[PeerNoticeName];

const ERROR_CODES = [
  'not_found',
  'pending',
  'expired',
  'canceled',
  'already_decided',
  'already_canceled',
  'invalid',
  'limit',
  'unavailable',
  /** A decision in the chat for a request created with `surfaces: ["extension"]`. */
  'not_in_app',
  /** The method is not for this caller (the role × method table), or needs a grant its key lacks. */
  'forbidden',
  'unknown_method',
  'rate_limited',
] as const;
const ErrorCodeSchema = z.enum(ERROR_CODES);
export type ServiceErrorCode = z.infer<typeof ErrorCodeSchema>;
export const ServiceErrorSchema = z.strictObject({ code: ErrorCodeSchema, message: z.string(), issues: z.array(FieldIssueSchema).optional() });
export type ServiceError = z.infer<typeof ServiceErrorSchema>;

export type Answer<T> = { ok: true; value: T } | { ok: false; error: ServiceError };

/** What the approval tools need, whether this process is the hub or a relay forwarding to it. */
export interface ApprovalService {
  call<M extends AgentMethod>(method: M, params: Params<M>, signal?: AbortSignal): Promise<Answer<Result<M>>>;
}

export function fail(code: ServiceErrorCode, message: string): { ok: false; error: ServiceError } {
  return { ok: false, error: { code, message } };
}

/** The one caller of `callers` this method is for, or null: the role × method table. */
export function callerFor(method: PeerMethod, callers: readonly Caller[]): Caller | null {
  const allowed: readonly Caller[] = PEER_CALLS[method].callers;
  return callers.find((c) => allowed.includes(c)) ?? null;
}

/** The grant a remote caller needs for these params, or null. */
export function grantFor(method: PeerMethod, params: unknown): Grant | null {
  const spec: MethodSpec = PEER_CALLS[method];
  return spec.grant ? spec.grant(params) : null;
}

export function isPeerMethod(name: string): name is PeerMethod {
  return Object.hasOwn(PEER_CALLS, name);
}

/**
 * Checks a call's params, or its result, against the method's own schema. TypeScript cannot relate the schema picked
 * by a generic method name to that method's types, hence the one narrowing here; zod has checked the value itself.
 */
export function parseParams<M extends PeerMethod>(method: M, raw: unknown): z.ZodSafeParseResult<Params<M>> {
  return PEER_CALLS[method].params.safeParse(raw) as z.ZodSafeParseResult<Params<M>>;
}
export function parseResult<M extends PeerMethod>(method: M, raw: unknown): z.ZodSafeParseResult<Result<M>> {
  return PEER_CALLS[method].result.safeParse(raw) as z.ZodSafeParseResult<Result<M>>;
}

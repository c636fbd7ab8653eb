import * as z from 'zod';
import { DecidedViaSchema, StatusSchema, SurfaceSchema } from './lifecycle.js';
import { RequestViewSchema, ResultEnvelopeSchema, ReviewRequestSchema } from './review-request.js';
import { MAX_RULES, RuleIdSchema, RuleSchema } from './rules.js';
import { DecideMessageSchema, DecisionAnswerSchema, ElicitationIdSchema, RequesterSchema } from './wire-fields.js';

/**
 * The approval service's calls, defined once as a `{ method: { params, result } }` map of zod schemas. The hub's
 * engine implements them, a relay forwards them over the wire (`call` / `call.result`) and validates what comes back,
 * and the MCP tools call them without knowing which of the two answers.
 */

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
});
export type CreateParams = z.infer<typeof CreateParamsSchema>;

const CreatedSchema = z.strictObject({
  elicitationId: ElicitationIdSchema,
  /** Decided already when one of the person's rules matched it (permission requests and confirm asks only). */
  status: z.enum(['pending', 'approved', 'rejected']),
  decidedVia: DecidedViaSchema.optional(),
  ruleId: RuleIdSchema.optional(),
  expiresAt: z.string(),
  reviewer: z.strictObject({ connected: z.boolean() }),
  /** When no extension is paired: what the agent should tell the person (a pairing code and where to enter it). */
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
  pending: z.number().int().min(0),
});
export type HubInfo = z.infer<typeof HubInfoSchema>;
const StatusAnswerSchema = z.strictObject({ status: StatusSchema });
/**
 * A decision made in the review shown inside the chat (the MCP App): the extension's decide frame, relayed by the
 * process that served the app and checked its key. The extension's own decisions travel as `decide` frames instead.
 */
const AppDecideParamsSchema = DecideMessageSchema.omit({ type: true, rule: true });
export type AppDecideParams = z.infer<typeof AppDecideParamsSchema>;
/** The longest elicit_await window; the relay's own call timeout is derived from it. */
const MAX_WAIT_MS = 600_000;

const APPROVAL_CALLS = {
  create: { params: CreateParamsSchema, result: CreatedSchema },
  status: { params: IdParamsSchema, result: StatusAnswerSchema },
  await: { params: z.strictObject({ id: ElicitationIdSchema, waitMs: z.number().int().positive().max(MAX_WAIT_MS) }), result: StatusAnswerSchema },
  result: { params: IdParamsSchema, result: ResultEnvelopeSchema },
  cancel: { params: IdParamsSchema, result: z.strictObject({ status: z.literal('canceled') }) },
  /** What the doctor reports of the hub: its reviewers and its queue. */
  info: { params: z.strictObject({}), result: HubInfoSchema },
  /**
   * How many browser extensions are paired with this install (null when the hub cannot read its paired-extensions
   * file): an ask nobody could ever answer is refused instead of filed.
   */
  paired: { params: z.strictObject({}), result: z.strictObject({ paired: z.number().int().min(0).nullable() }) },
  /** One request as a reviewer sees it, decided or not: for the review inside the chat. */
  view: { params: IdParamsSchema, result: RequestViewSchema },
  appDecide: { params: AppDecideParamsSchema, result: DecisionAnswerSchema },
  /** The person's rules, for `elicitly-companion rules --list`. */
  rules: { params: z.strictObject({}), result: z.strictObject({ rules: z.array(RuleSchema).max(MAX_RULES) }) },
  /** Removes one rule (`rules --remove`): the question it answered goes back to the person, so an agent may too. */
  ruleRemove: { params: z.strictObject({ id: RuleIdSchema }), result: z.strictObject({ removed: z.boolean() }) },
} as const;

export type ApprovalMethod = keyof typeof APPROVAL_CALLS;
export const ApprovalMethodSchema = z.enum(Object.keys(APPROVAL_CALLS) as [ApprovalMethod, ...ApprovalMethod[]]);
export type CallParams<M extends ApprovalMethod> = z.infer<(typeof APPROVAL_CALLS)[M]['params']>;
export type CallResult<M extends ApprovalMethod> = z.infer<(typeof APPROVAL_CALLS)[M]['result']>;

const ServiceErrorCodeSchema = z.enum([
  'not_found',
  'pending',
  'expired',
  'canceled',
  'already_decided',
  'already_canceled',
  'invalid',
  'limit',
  'unavailable',
  /** An app decision for a request created with `surfaces: ["extension"]`: only the extension may decide it. */
  'not_in_app',
]);
export type ServiceErrorCode = z.infer<typeof ServiceErrorCodeSchema>;
export const ServiceErrorSchema = z.strictObject({ code: ServiceErrorCodeSchema, message: z.string() });
export type ServiceError = z.infer<typeof ServiceErrorSchema>;

export type Answer<T> = { ok: true; value: T } | { ok: false; error: ServiceError };

/** What the approval tools need, whether this process is the hub or a relay forwarding to it. */
export interface ApprovalService {
  call<M extends ApprovalMethod>(method: M, params: CallParams<M>, signal?: AbortSignal): Promise<Answer<CallResult<M>>>;
}

export function fail(code: ServiceErrorCode, message: string): { ok: false; error: ServiceError } {
  return { ok: false, error: { code, message } };
}

/**
 * Checks a call's params, or its result, against the method's own schema. TypeScript cannot relate the schema picked
 * by a generic method name to that method's types, hence the one narrowing here; zod has checked the value itself.
 */
export function parseCallParams<M extends ApprovalMethod>(method: M, raw: unknown): z.ZodSafeParseResult<CallParams<M>> {
  return APPROVAL_CALLS[method].params.safeParse(raw) as z.ZodSafeParseResult<CallParams<M>>;
}
export function parseCallResult<M extends ApprovalMethod>(method: M, raw: unknown): z.ZodSafeParseResult<CallResult<M>> {
  return APPROVAL_CALLS[method].result.safeParse(raw) as z.ZodSafeParseResult<CallResult<M>>;
}

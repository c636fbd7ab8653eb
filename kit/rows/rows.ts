import * as z from 'zod';
import { RequestKindSchema, ReviewRequestSchema } from '../../shared/review-request.js';
import { DecidedViaSchema, StatusSchema, type DecidedVia, type Status } from '../../shared/lifecycle.js';
import { RuleDraftSchema } from '../../shared/rules.js';
import { AssuranceSchema } from '../../shared/passkey-wire.js';
import { ReceiptSchema } from '../../shared/receipt.js';
import type { RequestView } from '../../shared/wire-protocol.js';
import { FieldIssueSchema } from '../../shared/field-issues.js';
import { DecideParamsSchema, DecisionRefusalSchema, ElicitationIdSchema, IdempotencyKeySchema, RequesterSchema } from '../../shared/wire-fields.js';
import { searchWords } from '../core/search-words.js';
import { VERDICTS } from './verdict.js';
import { ReviewerNameSchema } from '../../shared/reviewers.js';

/** What became of a request (verdict.ts). */
export const VerdictSchema = z.enum(VERDICTS);

/** What the reviewer decided, as sent (the hub keeps the authoritative copy). */
export const LocalOutcomeSchema = z.strictObject({
  decision: z.enum(['approved', 'rejected']),
  action: z.enum(['submit', 'cancel']).optional(),
  values: z.record(z.string(), z.unknown()).optional(),
  included: z.array(z.string()).optional(),
  comment: z.string().optional(),
  /** The rule the person saved with this decision ("Always allow …"), as sent. */
  rule: RuleDraftSchema.optional(),
  /** Signed with one of the person's passkeys (the assertion itself stays with the hub's ledger and the receipt). */
  passkey: z.literal(true).optional(),
});
export type LocalOutcome = z.infer<typeof LocalOutcomeSchema>;

/**
 * Why a decision was not taken: the hub's reasons, plus `too_large`, the extension's own for a decision that could never
 * be sent (over the hub's frame limit). `invalid` and `too_large` keep the request pending with per-field issues.
 */
const RefusalReasonSchema = z.enum([...DecisionRefusalSchema.options, 'too_large']);
export type RefusalReason = z.infer<typeof RefusalReasonSchema>;
const RefusalSchema = z.strictObject({ reason: RefusalReasonSchema, issues: z.array(FieldIssueSchema).optional() });

/**
 * One request as the extension keeps it: the hub's view plus the reviewer's side of the story (delivery state of the
 * decision, a refusal, a draft). Every row is checked with this schema on the way in and on the way out.
 */
export const RequestRowSchema = z.strictObject({
  elicitationId: ElicitationIdSchema,
  kind: RequestKindSchema,
  status: StatusSchema,
  message: z.string(),
  words: z.array(z.string()),
  agent: z.string(),
  requester: RequesterSchema,
  createdAt: z.number(),
  expiresAt: z.number(),
  decidedAt: z.number().optional(),
  /**
   * Where the decision the hub took was made, when the hub said: `app` is the review shown inside the chat, `rule` one
   * of the person's rules decided it when it was created (`ruleId` names it).
   */
  decidedVia: DecidedViaSchema.optional(),
  /** The reviewer whose browser or phone decided it, on a team's hub. */
  decidedBy: ReviewerNameSchema.optional(),
  /** The rule that decided it (`decidedVia: "rule"`), or the one the person saved with their decision. */
  ruleId: z.string().min(1).max(100).optional(),
  /** The wire's own schema: a row whose request does not fit is skipped on read, so the UI never re-checks it. */
  request: ReviewRequestSchema,
  renderedTemplate: z.string().nullable(),
  outcome: LocalOutcomeSchema.optional(),
  /** queued: waiting in the outbox for the hub; delivered: the hub took it; refused: see `refusal`. */
  delivery: z.enum(['queued', 'delivered', 'refused']).optional(),
  refusal: RefusalSchema.optional(),
  /**
   * What became of it (`verdict.ts`). The database derives it on every write (its middleware, database.ts), so the
   * history can filter on it by index; a row on its way in carries the verdict known before the write, or none.
   */
  verdict: VerdictSchema.optional(),
  /** `passkey`: decided only with one of the person's passkeys (`shared/passkey.ts`). */
  assurance: AssuranceSchema.optional(),
  /** Where the hub's ledger recorded the decision (`request.receipt`): what `audit verify --receipt` checks. */
  receipt: ReceiptSchema.optional(),
});
export type RequestRow = z.infer<typeof RequestRowSchema>;

/**
 * A request row as the database gives it back: every stored row has its verdict (written by the database's
 * middleware, back-filled by v4), so a row read without one does not fit and is skipped like any other.
 */
export const StoredRowSchema = RequestRowSchema.required({ verdict: true });
export type StoredRow = z.infer<typeof StoredRowSchema>;

export const OutboxRowSchema = z.strictObject({
  idempotencyKey: IdempotencyKeySchema,
  elicitationId: ElicitationIdSchema,
  decision: z.enum(['approved', 'rejected']),
  values: z.record(z.string(), z.unknown()).optional(),
  included: z.array(z.string()).optional(),
  comment: z.string().max(4000).optional(),
  /** A rule saved with the decision: it travels in the decide frame, so it is replayed with it. */
  rule: RuleDraftSchema.optional(),
  /** The hash of what the reviewer was shown (`shared/shown-hash.ts`): the hub refuses the decision when it is not the stored request's. */
  shownHash: DecideParamsSchema.shape.shownHash,
  /** The person's passkey assertion over this decision: sent again with it, and still valid (its challenge names no time). */
  passkey: DecideParamsSchema.shape.passkey,
  queuedAt: z.number(),
});
export type OutboxRow = z.infer<typeof OutboxRowSchema>;

const ConnectionCommon = {
  /** When the next attempt runs (reconnecting, version_mismatch, untrusted_hub), epoch ms. */
  retryAt: z.number().optional(),
  detail: z.string().optional(),
  since: z.number(),
};

/**
 * Why this browser must pair (again). Absent: it never paired with the hub on this port. The code ones come from a
 * pairing attempt: `code_refused` the hub refused our proof of it, `code_unproven` the hub could not prove it knows
 * it (a mistyped code, or something other than the hub on the port), `no_code_active` the hub has no code running,
 * `code_replaced` a newer code replaced the one the phone's link carried.
 * `key_unknown`: the hub no longer knows the key this browser holds (removed, or the hub's state was reset).
 */
export const PairingReasonSchema = z.enum(['code_refused', 'code_unproven', 'no_code_active', 'code_replaced', 'key_unknown']);
export type PairingReason = z.infer<typeof PairingReasonSchema>;

/**
 * A surface's connection to the hub, as its header shows it (kit/ui/connection-header.tsx): the extension keeps it in
 * its database, the phone page in memory. `pairing`: a pairing code is being tried (the phone's, from the QR's link).
 */
export const ConnectionStateSchema = z.discriminatedUnion('state', [
  z.strictObject({ state: z.enum(['connecting', 'pairing', 'connected', 'reconnecting']), ...ConnectionCommon }),
  z.strictObject({ state: z.literal('pairing_needed'), port: z.number().int(), reason: PairingReasonSchema.optional(), ...ConnectionCommon }),
  /** Whatever answers on the port could not prove it holds this browser's key: nothing but the hello was sent to it. */
  z.strictObject({ state: z.literal('untrusted_hub'), port: z.number().int(), ...ConnectionCommon }),
  /**
   * The hub speaks another protocol; the header tells which side to update. `hubProtocol` is null when the hub only
   * said it refused ours (hubs of protocol 1 did that), which makes it the older side.
   */
  z.strictObject({
    state: z.literal('version_mismatch'),
    hubProtocol: z.number().int().nullable(),
    extensionProtocol: z.number().int(),
    ...ConnectionCommon,
  }),
]);
export type ConnectionState = z.infer<typeof ConnectionStateSchema>;

function agentName(requester: RequestView['requester']): string {
  return requester.client ?? `MCP server (pid ${requester.pid})`;
}

/**
 * What the hub's `request.removed` changes on a row, for every surface that keeps rows (the extension's database, the
 * phone's memory): its status, who decided it, and when it ended (the first time it did).
 */
export function endedChanges(row: RequestRow, status: Status, decidedVia: DecidedVia | undefined, now: number, decidedBy?: string): Partial<RequestRow> {
  const changes: Partial<RequestRow> = { status, ...(decidedVia ? { decidedVia } : {}), ...(decidedBy ? { decidedBy } : {}) };
  if (status !== 'pending' && row.decidedAt === undefined) changes.decidedAt = now;
  return changes;
}

/**
 * A request a surface still shows as pending that the hub's welcome no longer lists left while that surface was away:
 * past its deadline it expired, otherwise it was withdrawn (or decided elsewhere, which the hub's own list then says).
 */
export function leftWhileAway(row: RequestRow, now: number): Partial<RequestRow> {
  return { status: row.expiresAt <= now ? 'expired' : 'canceled', decidedAt: now };
}

export function rowFromView(view: RequestView, previous?: RequestRow): RequestRow {
  const row: RequestRow = {
    elicitationId: view.elicitationId,
    kind: view.kind,
    status: view.status,
    message: view.message,
    words: searchWords(view.message),
    agent: agentName(view.requester),
    requester: view.requester,
    createdAt: view.createdAt,
    expiresAt: view.expiresAt,
    request: view.request,
    renderedTemplate: view.renderedTemplate,
  };
  if (view.decidedAt !== undefined) row.decidedAt = view.decidedAt;
  if (view.assurance !== undefined) row.assurance = view.assurance;
  // The reviewer's side survives a re-sent view: the hub does not know about drafts or queued decisions.
  if (previous?.outcome) row.outcome = previous.outcome;
  if (previous?.delivery) row.delivery = previous.delivery;
  if (previous?.refusal) row.refusal = previous.refusal;
  if (view.outcome && !row.outcome) {
    const { decidedVia, decidedBy, ruleId, passkey, ...outcome } = view.outcome;
    row.outcome = passkey ? { ...outcome, passkey: true } : outcome;
    if (decidedVia) row.decidedVia = decidedVia;
    if (decidedBy !== undefined) row.decidedBy = decidedBy;
    if (ruleId !== undefined) row.ruleId = ruleId;
  }
  // What was known before this change travels with the row: the database derives the new verdict from it on write.
  if (previous?.verdict) row.verdict = previous.verdict;
  if (previous?.receipt) row.receipt = previous.receipt;
  return row;
}

import * as z from 'zod';
import { PasskeyEvidenceSchema } from './passkey-wire.js';
import { ReceiptSchema } from './receipt.js';
import { ReviewerNameSchema } from './reviewers.js';
import { STATUSES } from './statuses.js';

/** A request's status: see `statuses.ts`. */
export const StatusSchema = z.enum(STATUSES);
export type Status = z.infer<typeof StatusSchema>;

/** Where a person decided: the paired browser extension, or the review shown inside the chat (MCP App). */
export const SurfaceSchema = z.enum(['extension', 'app']);
export type Surface = z.infer<typeof SurfaceSchema>;

/** Who decided: a person on one of the surfaces, or one of the person's own rules at creation (`shared/rules.ts`). */
export const DecidedViaSchema = z.enum(['extension', 'app', 'rule', 'phone']);
export type DecidedVia = z.infer<typeof DecidedViaSchema>;

export const OutcomeSchema = z.strictObject({
  decision: z.enum(['approved', 'rejected']),
  /** Absent on records written before the app surface existed: those were all decided in the extension. */
  decidedVia: DecidedViaSchema.optional(),
  /** The reviewer the deciding browser or phone was paired for, on a team's hub (`reviewer add`, `pair --reviewer`). */
  decidedBy: ReviewerNameSchema.optional(),
  /** With a quorum (`shared/routing.ts`): every reviewer who approved, in order; the last is `decidedBy`. */
  approvedBy: z.array(ReviewerNameSchema).min(2).max(10).optional(),
  /** With `decidedVia: "rule"` the rule that decided; with a person's decision the rule they saved along with it. */
  ruleId: z.string().min(1).max(100).optional(),
  action: z.enum(['submit', 'cancel']),
  values: z.record(z.string(), z.unknown()).optional(),
  comment: z.string().max(4000).optional(),
  /** The person's passkey assertion over this decision, when the request needed one (`shared/passkey.ts`). */
  passkey: PasskeyEvidenceSchema.optional(),
  idempotencyKey: z.string().min(1).max(200),
});
export type Outcome = z.infer<typeof OutcomeSchema>;

export interface LifecycleState {
  status: Status;
  expiresAt: number;
  decidedAt?: number;
  consumedAt?: number;
  outcome?: Outcome;
}

/** The status as of `now`: a pending request past its deadline reads as expired even before the sweep records it. */
export function effectiveStatus(state: LifecycleState, now: number): Status {
  return state.status === 'pending' && now >= state.expiresAt ? 'expired' : state.status;
}

type DecideRefusal = 'already_decided' | 'expired' | 'withdrawn';

type DecideResult<T> = { ok: true; state: T; duplicate: boolean } | { ok: false; reason: DecideRefusal; state: T };

/** The first decision wins; a repeat with the same idempotency key gets the winning outcome back as a success. */
export function decide<T extends LifecycleState>(state: T, outcome: Outcome, now: number): DecideResult<T> {
  const status = effectiveStatus(state, now);
  if (status === 'pending') return { ok: true, duplicate: false, state: { ...state, status: outcome.decision, decidedAt: now, outcome } };
  if (state.outcome?.idempotencyKey === outcome.idempotencyKey) return { ok: true, duplicate: true, state };
  if (status === 'expired') return { ok: false, reason: 'expired', state };
  if (status === 'canceled') return { ok: false, reason: 'withdrawn', state };
  return { ok: false, reason: 'already_decided', state };
}

type CancelRefusal = 'already_decided' | 'expired' | 'already_canceled';

export function withdraw<T extends LifecycleState>(state: T, now: number): { ok: true; state: T } | { ok: false; reason: CancelRefusal; state: T } {
  const status = effectiveStatus(state, now);
  if (status === 'pending') return { ok: true, state: { ...state, status: 'canceled', decidedAt: now } };
  if (status === 'expired') return { ok: false, reason: 'expired', state };
  if (status === 'canceled') return { ok: false, reason: 'already_canceled', state };
  return { ok: false, reason: 'already_decided', state };
}

export function expire<T extends LifecycleState>(state: T, now: number): T {
  return effectiveStatus(state, now) === 'expired' && state.status === 'pending' ? { ...state, status: 'expired', decidedAt: now } : state;
}

export function consume<T extends LifecycleState>(state: T, now: number): T {
  return state.status === 'approved' || state.status === 'rejected' ? { ...state, status: 'consumed', consumedAt: now } : state;
}

/** Seed 004's envelope: context echoed verbatim, values only when approved, the reviewer's comment when there is one. */
export const ApprovalEnvelopeSchema = z.strictObject({
  status: z.literal('consumed'),
  decision: z.enum(['approved', 'rejected']),
  action: z.enum(['submit', 'cancel']),
  context: z.unknown(),
  values: z.record(z.string(), z.unknown()).optional(),
  comment: z.string().optional(),
  decidedVia: DecidedViaSchema,
  /** The reviewer who decided, on a team's hub. */
  decidedBy: ReviewerNameSchema.optional(),
  /** With a quorum: every reviewer who approved, in order. */
  approvedBy: z.array(ReviewerNameSchema).optional(),
  /** Where the decision is in the hub's ledger (`shared/receipt.ts`). */
  receipt: ReceiptSchema.optional(),
});
export type ApprovalEnvelope = z.infer<typeof ApprovalEnvelopeSchema>;

export function approvalEnvelope(context: unknown, outcome: Outcome): ApprovalEnvelope {
  const envelope: ApprovalEnvelope = { status: 'consumed', decision: outcome.decision, action: outcome.action, context: context ?? null, decidedVia: outcome.decidedVia ?? 'extension' };
  if (outcome.decidedBy !== undefined) envelope.decidedBy = outcome.decidedBy;
  if (outcome.approvedBy !== undefined) envelope.approvedBy = outcome.approvedBy;
  if (outcome.decision === 'approved') envelope.values = outcome.values ?? {};
  if (outcome.comment !== undefined && outcome.comment !== '') envelope.comment = outcome.comment;
  return envelope;
}

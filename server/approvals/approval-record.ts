import * as z from 'zod';
import { ElicitationIdSchema, KeyIdSchema, RequesterSchema } from '../../shared/wire-fields.js';
import { RequestKindSchema, ReviewRequestSchema } from '../../shared/review-request.js';
import { OutcomeSchema, StatusSchema, SurfaceSchema } from '../../shared/lifecycle.js';
import type { RequestView } from '../../shared/review-request.js';
import { AssuranceSchema } from '../../shared/passkey-wire.js';
import { QuorumApprovalSchema, RequestRouteSchema } from '../../shared/routing.js';

/** One stored request; every row read back from disk is validated against this before it is trusted. */
export const ApprovalRecordSchema = z.strictObject({
  id: ElicitationIdSchema,
  updatedAt: z.number(),
  kind: RequestKindSchema,
  status: StatusSchema,
  createdAt: z.number(),
  expiresAt: z.number(),
  decidedAt: z.number().optional(),
  consumedAt: z.number().optional(),
  requester: RequesterSchema,
  request: ReviewRequestSchema,
  renderedTemplate: z.string().nullable(),
  outcome: OutcomeSchema.optional(),
  /** Where it may be decided, as created; absent on records written before surfaces were stored, which allowed both. */
  surfaces: z.array(SurfaceSchema).optional(),
  /**
   * The exported relay key (`key export`) that filed it: only that key sees or touches it. Absent: filed on this computer
   * (the install key, or the hub's own tools).
   */
  owner: KeyIdSchema.optional(),
  /** Lives only as long as the connection that filed it (a hook): withdrawn when it closes, or at the next hub's start. */
  bound: z.literal(true).optional(),
  /** Decided only with one of the person's passkeys: fixed at creation (the agent's ask, or the person's setting then). */
  assurance: AssuranceSchema.optional(),
  /** The team's route it took at creation (its routing policy): whose reviewers see it, and how many must approve. */
  route: RequestRouteSchema.optional(),
  /** With a quorum, the approvals so far, each of the same values (`decisionHash`), one per reviewer. */
  approvals: z.array(QuorumApprovalSchema).max(10).optional(),
});
export type ApprovalRecord = z.infer<typeof ApprovalRecordSchema>;

export function toView(record: ApprovalRecord): RequestView {
  const view: RequestView = {
    elicitationId: record.id,
    kind: record.kind,
    status: record.status,
    message: record.request.message,
    createdAt: record.createdAt,
    expiresAt: record.expiresAt,
    requester: record.requester,
    request: record.request,
    renderedTemplate: record.renderedTemplate,
  };
  if (record.decidedAt !== undefined) view.decidedAt = record.decidedAt;
  if (record.assurance !== undefined) view.assurance = record.assurance;
  if (record.outcome) {
    const { idempotencyKey: _key, ...outcome } = record.outcome;
    view.outcome = outcome;
  }
  return view;
}

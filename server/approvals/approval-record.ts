import { z } from 'zod';
import { OutcomeSchema, StatusSchema } from '../../shared/lifecycle.js';
import type { RequestView } from '../../shared/wire-protocol.js';

/** One stored request; every row read back from disk is validated against this before it is trusted. */
export const ApprovalRecordSchema = z.strictObject({
  id: z.string().min(1),
  updatedAt: z.number(),
  kind: z.enum(['approval', 'proposal']),
  status: StatusSchema,
  createdAt: z.number(),
  expiresAt: z.number(),
  decidedAt: z.number().optional(),
  consumedAt: z.number().optional(),
  requester: z.strictObject({ client: z.string().nullable(), pid: z.number() }),
  request: z.looseObject({ kind: z.enum(['approval', 'proposal']), message: z.string() }),
  renderedTemplate: z.string().nullable(),
  outcome: OutcomeSchema.optional(),
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
  if (record.outcome) {
    const { idempotencyKey: _key, ...outcome } = record.outcome;
    view.outcome = outcome;
  }
  return view;
}

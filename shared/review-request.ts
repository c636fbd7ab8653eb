// Every kind of request a person reviews in the extension, as one schema: the two approvals an agent asks for
// (elicit_approval, elicit_proposal), the three asks routed there when no host dialog reaches the person, and a host's
// own permission prompt bridged by the hook command.
import * as z from 'zod';
import { ApprovalRequestSchema, ProposalRequestSchema, checkDecisionValues } from './approval-input.js';
import { AskResultSchema, ConfirmAskSchema, FormAskSchema, SelectionAskSchema, askResult, checkAskValues } from './ask-input.js';
import { ApprovalEnvelopeSchema, OutcomeSchema, StatusSchema, approvalEnvelope, type Outcome } from './lifecycle.js';
import { PermissionRequestSchema, PermissionResultSchema, checkPermissionValues, permissionResult } from './permission.js';
import { ElicitationIdSchema, RequesterSchema } from './wire-fields.js';
import { AssuranceSchema } from './passkey-wire.js';
import type { FieldIssue } from './field-issues.js';

/** The normalized request that is stored, relayed and shown: one schema for records, relay create, wire views and rows. */
export const ReviewRequestSchema = z.discriminatedUnion('kind', [ProposalRequestSchema, ApprovalRequestSchema, ConfirmAskSchema, FormAskSchema, SelectionAskSchema, PermissionRequestSchema]);
export type ReviewRequest = z.infer<typeof ReviewRequestSchema>;
export const RequestKindSchema = z.enum(['proposal', 'approval', 'confirm', 'form', 'selection', 'permission']);
export type RequestKind = z.infer<typeof RequestKindSchema>;

/** A reviewer's approved values, checked against the request they answer. */
export function checkAnswer(
  request: ReviewRequest,
  values: unknown,
  included?: readonly string[],
): { ok: true; values: Record<string, unknown> } | { ok: false; issues: FieldIssue[] } {
  if (request.kind === 'proposal' || request.kind === 'approval') return checkDecisionValues(request, values, included);
  if (request.kind === 'permission') return checkPermissionValues(request, values);
  return checkAskValues(request, values);
}

/** What elicit_result returns: seed 004's envelope for approvals and proposals, the ask's own seed shape for an ask. */
export const ResultEnvelopeSchema = z.union([ApprovalEnvelopeSchema, AskResultSchema, PermissionResultSchema]);
export type ResultEnvelope = z.infer<typeof ResultEnvelopeSchema>;

export function resultEnvelope(request: ReviewRequest, outcome: Outcome): ResultEnvelope {
  if (request.kind === 'proposal' || request.kind === 'approval') return approvalEnvelope(request.context, outcome);
  if (request.kind === 'permission') return permissionResult(outcome);
  return askResult(request, outcome);
}

/** What a reviewer needs to show one request; the full request as the agent sent it (validated at creation). */
export const RequestViewSchema = z.strictObject({
  elicitationId: ElicitationIdSchema,
  kind: RequestKindSchema,
  status: StatusSchema,
  message: z.string(),
  createdAt: z.number(),
  expiresAt: z.number(),
  decidedAt: z.number().optional(),
  requester: RequesterSchema,
  request: ReviewRequestSchema,
  renderedTemplate: z.string().nullable(),
  outcome: OutcomeSchema.omit({ idempotencyKey: true }).optional(),
  /** `passkey`: decided only with one of the person's passkeys (asked for by the agent, or by the person's setting). */
  assurance: AssuranceSchema.optional(),
});
export type RequestView = z.infer<typeof RequestViewSchema>;

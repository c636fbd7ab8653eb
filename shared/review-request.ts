// The reviewer's gate: a request arriving from the hub is re-checked with the same rules the server applied at
// creation before any of it is rendered, so a corrupt stored row or a buggy hub cannot feed the UI a shape it does not
// expect. The checks are idempotent on the normalized form the server stores.
import { checkApprovalInput, checkProposalInput, type ReviewRequest } from './approval-input.js';
import { isObject, type FieldIssue } from './requested-schema.js';

export type CheckedReview = { ok: true; request: ReviewRequest } | { ok: false; issues: FieldIssue[] };

export function parseReviewRequest(raw: unknown): CheckedReview {
  if (!isObject(raw)) return { ok: false, issues: [{ path: '(request)', rule: 'invalid_type', message: '(request): must be an object' }] };
  const { kind, mode: _mode, requestedSchema, ...rest } = raw;
  if (kind === 'proposal') {
    const checked = checkProposalInput({ ...rest, requestedSchema });
    return checked.ok ? { ok: true, request: checked.request } : checked;
  }
  if (kind === 'approval') {
    const input = requestedSchema === null || requestedSchema === undefined ? rest : { ...rest, requestedSchema };
    const checked = checkApprovalInput(input);
    return checked.ok ? { ok: true, request: checked.request } : checked;
  }
  return { ok: false, issues: [{ path: 'kind', rule: 'invalid_value', message: `kind: must be "approval" or "proposal", got ${JSON.stringify(kind)}` }] };
}

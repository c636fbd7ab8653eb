import type { FieldIssue } from '../../../shared/field-issues.js';
import type { RequestRow } from '../../rows/rows.js';
import { REFUSAL_TEXT } from '../labels.js';
import type { Feedback } from './decision-feedback.js';

interface RefusedAttempt {
  values?: Record<string, unknown>;
  included?: string[];
  comment: string;
  issues: FieldIssue[];
}

/**
 * The decision refused for its values (by the hub as invalid, or here as too large to send), if that is where this
 * request stands. A review reopened after closing the popup starts from it, with the issues next to the fields, so
 * nothing the person typed is lost.
 */
export function refusedAttempt(row: RequestRow): RefusedAttempt | null {
  const reason = row.refusal?.reason;
  if (row.delivery !== 'refused' || !row.refusal || (reason !== 'invalid' && reason !== 'too_large') || !row.outcome) return null;
  return {
    ...(row.outcome.values ? { values: row.outcome.values } : {}),
    ...(row.outcome.included ? { included: row.outcome.included } : {}),
    comment: row.outcome.comment ?? '',
    issues: row.refusal.issues ?? [],
  };
}

/**
 * Why the hub refused this browser's last decision on a request still pending, when nothing next to the fields says it:
 * `shown_mismatch` (what was shown was not the request the hub holds). A review mounted anew (reopened, or after the
 * decision's brief "waiting for the hub") says it from the row, as the one that sent the decision did from the reply.
 */
export function refusalFeedback(row: RequestRow): Feedback | null {
  if (row.status !== 'pending' || row.delivery !== 'refused' || row.refusal?.reason !== 'shown_mismatch') return null;
  return { tone: 'alert', text: REFUSAL_TEXT.shown_mismatch };
}

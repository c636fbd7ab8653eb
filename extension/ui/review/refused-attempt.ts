import type { FieldIssue } from '../../../shared/field-issues.js';
import type { RequestRow } from '../../db/rows.js';

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

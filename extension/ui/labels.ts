import type { RequestRow } from '../db/rows.js';

/** How a request's kind reads to a person, the same in the inbox, the notification, the history and the detail. */
export const KIND_LABEL: Record<RequestRow['kind'], string> = {
  approval: 'Approval',
  proposal: 'Proposal',
  confirm: 'Question',
  form: 'Form',
  selection: 'Choice',
  permission: 'Permission',
};

/**
 * Where a request was decided when it was not decided here, as the review's note and the history say it; null for a
 * decision made in this extension (or by a rule, which says itself with the rule's words).
 */
export function decidedElsewhere(via: RequestRow['decidedVia']): string | null {
  if (via === 'app') return 'decided in the chat';
  if (via === 'phone') return 'decided on a paired phone';
  return null;
}

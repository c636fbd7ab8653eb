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

/** The person's own reviewers: where a review is shown and decided from. */
export type Reviewer = 'extension' | 'phone';

const DECIDED_IN: Record<'app' | Reviewer, string> = {
  app: 'decided in the chat',
  extension: 'decided in the browser extension',
  phone: 'decided on a paired phone',
};

/**
 * Where a request was decided when it was not decided on this reviewer (`here`), as its review's note and the history
 * say it; null for a decision made here, or by a rule (which says itself, with the rule's words where they are known).
 * `here: null` names every surface: the phone page, since one paired phone cannot tell its decisions from another's.
 */
export function decidedElsewhere(via: RequestRow['decidedVia'], here: Reviewer | null = 'extension'): string | null {
  if (via === undefined || via === 'rule' || via === here) return null;
  return DECIDED_IN[via];
}

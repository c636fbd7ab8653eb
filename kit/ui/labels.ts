import type { Status } from '../../shared/lifecycle.js';
import type { RefusalReason, RequestRow } from '../rows/rows.js';
import type { Verdict } from '../rows/verdict.js';

// The words the views use for a request's kind, status, decision and refusal, in one place: the inbox, the review,
// the history, the notification and the phone page read them from here.

/** How a request's kind reads to a person, the same in the inbox, the notification, the history and the detail. */
export const KIND_LABEL: Record<RequestRow['kind'], string> = {
  approval: 'Approval',
  proposal: 'Proposal',
  confirm: 'Question',
  form: 'Form',
  selection: 'Choice',
  permission: 'Permission',
};

/** A request's status as the review's detail says it (an ask's and a permission's decided statuses have their own words). */
export const STATUS_TEXT: Record<Status, string> = {
  pending: 'Waiting for a decision',
  approved: 'Approved',
  rejected: 'Rejected',
  canceled: 'Withdrawn by the agent',
  expired: 'Expired without a decision',
  consumed: 'Decided, and the agent has read the decision',
};

/** The decision as the history names it, the same in a row, the filter and the detail. */
export const VERDICT_LABEL: Record<Verdict, string> = {
  pending: 'Pending',
  approved: 'Approved',
  rejected: 'Rejected',
  withdrawn: 'Withdrawn',
  expired: 'Expired',
  unknown: 'Decided elsewhere',
};

/**
 * The decision filter's words: an ask answered with its "no" label is stored as `approved` (an accepted answer), so the
 * filter names what each verdict holds for every kind rather than calling a "no" approved.
 */
export const VERDICT_FILTER_LABEL: Record<Verdict, string> = {
  ...VERDICT_LABEL,
  approved: 'Approved, allowed or answered',
  rejected: 'Rejected, denied or dismissed',
};

type Decided = 'approved' | 'rejected';

/** A host's permission prompt is allowed or denied, in the words the host's own prompt uses. */
export const PERMISSION_WORD: Record<Decided, string> = { approved: 'Allowed', rejected: 'Denied' };

/** An ask (question, form, choice) is answered or dismissed, never approved: a "no" label is an answer too. */
export const ASK_WORD: Record<Decided, string> = { approved: 'Answered', rejected: 'Dismissed' };

/** What this browser's own decision was, as the review's detail says it, for the kinds whose answer has no words of the agent's. */
export const DECIDED_WORD: Record<'proposal' | 'approval', Record<Decided, string>> = {
  proposal: { approved: 'Submitted', rejected: 'Canceled' },
  approval: { approved: 'Approved', rejected: 'Declined' },
};

/** Why the hub did not take a decision (and the extension's own `too_large`), in the review and the history. */
export const REFUSAL_TEXT: Record<RefusalReason, string> = {
  invalid: 'The hub refused these values; see the issues below.',
  already_decided: 'This request was already decided; your decision was not used.',
  expired: 'This request expired before your decision reached the agent.',
  withdrawn: 'The agent withdrew this request.',
  not_found: 'The hub no longer knows this request.',
  shown_mismatch: 'What you were shown is not what the agent asked (it changed, or this view is stale); nothing was decided. Look at it again.',
  passkey_required: 'This request is decided only with one of your passkeys; nothing was decided.',
  passkey_invalid: 'Your passkey did not sign this decision (it changed after you approved it, or the passkey is not registered); nothing was decided.',
  too_large: 'This decision is too large to send to the hub; shorten the field named below.',
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

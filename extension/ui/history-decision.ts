import type { RequestRow } from '../db/rows.js';
import { collected, deriveVerdict, type Verdict } from '../db/verdict.js';

/** The decision as the history names it, the same in a row, the filter and the detail. */
export const VERDICT_LABEL: Record<Verdict, string> = {
  pending: 'Pending',
  approved: 'Approved',
  rejected: 'Rejected',
  withdrawn: 'Withdrawn',
  expired: 'Expired',
  unknown: 'Decided elsewhere',
};

export interface DecisionSummary {
  verdict: Verdict;
  label: string;
  /** True once the agent has read the decision, false while it has not; null when there is nothing to collect. */
  collected: boolean | null;
  /** What else a person should know at a glance (collected or not, a decision of theirs still on its way). */
  note: string | null;
}

/** What a history row says about a request: what was decided, and whether the agent has it. */
export function decisionSummary(row: RequestRow): DecisionSummary {
  // A row built outside the database has no stored verdict yet; the status alone then tells it.
  const verdict = row.verdict ?? deriveVerdict(row);
  const isCollected = collected(row, verdict);
  let note: string | null = null;
  if (isCollected === true) note = 'collected by the agent';
  else if (isCollected === false) note = 'not collected yet';
  else if (verdict === 'pending' && row.outcome && row.delivery === 'queued') {
    note = `${row.outcome.decision === 'approved' ? 'approved' : 'rejected'} here, waiting for the hub`;
  } else if (verdict === 'pending' && row.delivery === 'refused') note = 'your decision was refused; decide again';
  return { verdict, label: VERDICT_LABEL[verdict], collected: isCollected, note };
}

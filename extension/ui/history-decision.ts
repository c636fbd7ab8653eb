import { decidedElsewhere, type Reviewer } from './labels.js';
import type { Rule } from '../../shared/rules.js';
import type { RequestRow } from '../db/rows.js';
import { collected, deriveVerdict, type Verdict } from '../db/verdict.js';
import { answerLabel } from './ask-words.js';
import { ruleDecisionText } from './rule-words.js';

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

export interface DecisionSummary {
  verdict: Verdict;
  /** Agent text for an ask (its yes or no label, the options chosen): shown through VisibleText. */
  label: string;
  /** True once the agent has read the decision, false while it has not; null when there is nothing to collect. */
  collected: boolean | null;
  /** What else a person should know at a glance (collected or not, a decision of theirs still on its way). */
  note: string | null;
}

/**
 * What a history row says about a request: what was decided, and whether the agent has it. `rules` are the person's
 * rules by id, to say which one decided a request at creation (absent: not read yet, the rule is not named).
 */
export function decisionSummary(row: RequestRow, rules?: ReadonlyMap<string, Rule>, here: Reviewer | null = 'extension'): DecisionSummary {
  // A row built outside the database has no stored verdict yet; the status alone then tells it.
  const verdict = row.verdict ?? deriveVerdict(row);
  const isCollected = collected(row, verdict);
  let note: string | null = null;
  if (isCollected === true) note = 'collected by the agent';
  else if (isCollected === false) note = 'not collected yet';
  else if (verdict === 'pending' && row.outcome && row.delivery === 'queued') {
    note = `${queuedWord(row, row.outcome.decision)} here, waiting for the hub`;
  } else if (verdict === 'pending' && row.delivery === 'refused') note = 'your decision was refused; decide again';
  const elsewhere = decidedElsewhere(row.decidedVia, here);
  if (elsewhere) note = note ? `${elsewhere} · ${note}` : elsewhere;
  if (row.decidedVia === 'rule' && rules) {
    const byRule = ruleDecisionText(row, row.ruleId === undefined ? undefined : rules.get(row.ruleId));
    if (byRule) note = note ? `${byRule} · ${note}` : byRule;
  }
  return { verdict, label: label(row, verdict), collected: isCollected, note };
}

export function isAsk(request: RequestRow['request']): request is Exclude<RequestRow['request'], { kind: 'proposal' | 'approval' | 'permission' }> {
  return request.kind !== 'proposal' && request.kind !== 'approval' && request.kind !== 'permission';
}

/** A host's permission prompt is allowed or denied, in the words the host's own prompt uses. */
export const PERMISSION_WORD = { approved: 'Allowed', rejected: 'Denied' } as const;

function queuedWord(row: RequestRow, decision: 'approved' | 'rejected'): string {
  if (row.request.kind === 'permission') return PERMISSION_WORD[decision].toLowerCase();
  if (isAsk(row.request)) return decision === 'approved' ? 'answered' : 'dismissed';
  return decision;
}

/**
 * An ask's decision in its own words (Answered: <the agent's yes label>, Chose: …, Dismissed); the verdicts that are
 * not a decision (pending, withdrawn, expired, decided elsewhere) read the same for every kind.
 */
function label(row: RequestRow, verdict: Verdict): string {
  if (row.request.kind === 'permission' && (verdict === 'approved' || verdict === 'rejected')) {
    const edited = verdict === 'approved' && row.delivery !== 'refused' && row.outcome?.values?.updatedInput !== undefined;
    return `${PERMISSION_WORD[verdict]}${edited ? ' (edited)' : ''}`;
  }
  if (!isAsk(row.request) || (verdict !== 'approved' && verdict !== 'rejected')) return VERDICT_LABEL[verdict];
  // This browser's decision tells the answer only if it is the one the hub took.
  return answerLabel(row.request, verdict, row.delivery === 'refused' ? undefined : row.outcome);
}

import type { Rule } from '../../shared/rules.js';
import type { LocalOutcome, RequestRow, StoredRow } from '../rows/rows.js';
import { collected, type Verdict } from '../rows/verdict.js';
import { answerLabel } from './ask-words.js';
import { dateTime } from './format-time.js';
import { ASK_WORD, DECIDED_WORD, KIND_LABEL, PERMISSION_WORD, STATUS_TEXT, VERDICT_LABEL, decidedElsewhere, type Reviewer } from './labels.js';
import { ruleDecisionText } from './rule-words.js';

// What a request says about itself, once for every view that shows one: the inbox, the review and its read-only
// detail, the history's rows and detail, and the phone page. The words come from labels.ts; agent text (the message,
// the agent's name, an ask's labels) is returned as is, for the views to show through VisibleText.

/** The lines every view shows about a request. */
export interface RequestSummary {
  /** The agent's message: the view's title. Agent text. */
  title: string;
  /** The kind in words ("Proposal", "Question"). */
  kind: string;
  /** An approval's mode ("form", "json"), which the history's detail adds to the kind; null for the other kinds. */
  mode: string | null;
  /** The agent's name. Agent text. */
  agent: string;
  pid: number;
  created: string;
  /** Null while nothing decided it. */
  decided: string | null;
  /** What a comment sent with the decision is called: a permission's is the reason given to the agent. */
  commentTerm: string;
}

export function requestSummary(row: RequestRow): RequestSummary {
  return {
    title: row.message,
    kind: KIND_LABEL[row.kind],
    mode: row.request.kind === 'approval' ? row.request.mode : null,
    agent: row.agent,
    pid: row.requester.pid,
    created: dateTime(row.createdAt),
    decided: row.decidedAt === undefined ? null : dateTime(row.decidedAt),
    commentTerm: row.request.kind === 'permission' ? 'Reason' : 'Comment',
  };
}

function isAsk(request: RequestRow['request']): request is Exclude<RequestRow['request'], { kind: 'proposal' | 'approval' | 'permission' }> {
  return request.kind !== 'proposal' && request.kind !== 'approval' && request.kind !== 'permission';
}

/** This browser's decision, when it is the one the hub took (a refused one tells nothing about the answer). */
function knownOutcome(row: RequestRow): LocalOutcome | undefined {
  return row.delivery === 'refused' ? undefined : row.outcome;
}

/**
 * A request's status in words, as the review says it. An ask is answered or dismissed, never "approved": a question
 * answered with its "no" label is an accepted answer whose value is `confirmed: false`, so it says the label chosen.
 */
export function statusText(row: RequestRow): string {
  const { request, status } = row;
  if (request.kind === 'proposal' || request.kind === 'approval') return STATUS_TEXT[status];
  if (request.kind === 'permission') {
    if (status === 'approved' || status === 'rejected') return PERMISSION_WORD[status];
    return STATUS_TEXT[status];
  }
  const known = knownOutcome(row);
  if (status === 'approved' || status === 'rejected') return answerLabel(request, status, known);
  if (status === 'consumed' && known) return `${answerLabel(request, known.decision, known)}, and the agent has read the answer`;
  return STATUS_TEXT[status];
}

/** Our own leading word in lower case mid-sentence; the agent's words after it (a label) keep theirs. */
function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}

/** The review's note on a request that is no longer pending: how it ended, and by whom when not by this reviewer. */
export function endedNote(row: RequestRow, here: Reviewer | null): string {
  const elsewhere = decidedElsewhere(row.decidedVia, here);
  const by = row.decidedVia === 'rule' ? ', by one of your rules' : elsewhere ? `, ${elsewhere}` : '';
  const who = row.decidedBy === undefined ? '' : `, by ${row.decidedBy}`;
  return `This request is no longer pending: ${lowerFirst(statusText(row))}${who}${by}.`;
}

/**
 * What this browser decided, as the review's read-only detail says it: the agent's own words for an ask's answer,
 * fixed words for the other kinds.
 */
export function decidedText(request: RequestRow['request'], outcome: LocalOutcome): string {
  if (request.kind === 'permission') return PERMISSION_WORD[outcome.decision];
  if (request.kind === 'proposal' || request.kind === 'approval') return DECIDED_WORD[request.kind][outcome.decision];
  return answerLabel(request, outcome.decision, outcome);
}

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
 * What the history says about a request: what was decided (the verdict the database derived), and whether the agent
 * has it. `rules` are the person's rules by id, to say which one decided a request at creation (absent: not read yet,
 * the rule is not named).
 */
export function decisionSummary(row: StoredRow, rules?: ReadonlyMap<string, Rule>, here: Reviewer | null = 'extension'): DecisionSummary {
  const { verdict } = row;
  const isCollected = collected(row, verdict);
  let note: string | null = null;
  if (isCollected === true) note = 'collected by the agent';
  else if (isCollected === false) note = 'not collected yet';
  else if (verdict === 'pending' && row.outcome && row.delivery === 'queued') {
    note = `${queuedWord(row, row.outcome.decision)} here, waiting for the hub`;
  } else if (verdict === 'pending' && row.delivery === 'refused') note = 'your decision was refused; decide again';
  const elsewhere = decidedElsewhere(row.decidedVia, here);
  if (elsewhere) note = note ? `${elsewhere} · ${note}` : elsewhere;
  // On a team's hub, who decided: the reviewer whose browser or phone it was.
  if (row.decidedBy !== undefined) note = note ? `by ${row.decidedBy} · ${note}` : `by ${row.decidedBy}`;
  if (row.decidedVia === 'rule' && rules) {
    const byRule = ruleDecisionText(row, row.ruleId === undefined ? undefined : rules.get(row.ruleId));
    if (byRule) note = note ? `${byRule} · ${note}` : byRule;
  }
  return { verdict, label: verdictLabel(row), collected: isCollected, note };
}

function queuedWord(row: RequestRow, decision: 'approved' | 'rejected'): string {
  if (row.request.kind === 'permission') return PERMISSION_WORD[decision].toLowerCase();
  if (isAsk(row.request)) return ASK_WORD[decision].toLowerCase();
  return decision;
}

/**
 * The verdict in a request's own words: an ask's answer (Answered: <the agent's yes label>, Chose: …, Dismissed), a
 * permission allowed or denied; the verdicts that are not a decision (pending, withdrawn, expired, decided elsewhere)
 * read the same for every kind.
 */
function verdictLabel(row: StoredRow): string {
  const { verdict } = row;
  if (row.request.kind === 'permission' && (verdict === 'approved' || verdict === 'rejected')) {
    const edited = verdict === 'approved' && row.delivery !== 'refused' && row.outcome?.values?.updatedInput !== undefined;
    return `${PERMISSION_WORD[verdict]}${edited ? ' (edited)' : ''}`;
  }
  if (!isAsk(row.request) || (verdict !== 'approved' && verdict !== 'rejected')) return VERDICT_LABEL[verdict];
  return answerLabel(row.request, verdict, knownOutcome(row));
}

import { useCallback, useRef, useState } from 'preact/hooks';
import { ownEntry } from '../../core/own-entry.js';
import type { FieldIssue } from '../../../shared/field-issues.js';
import { validateValues, type RequestedSchema } from '../../../shared/requested-schema.js';
import type { LocalOutcome } from '../../rows/rows.js';
import type { Decide, DecideReply, Decision } from '../../messages.js';
import { REFUSAL_TEXT } from '../labels.js';
import { VisibleText } from '../visible-text.js';
export interface Feedback { tone: 'status' | 'alert'; text: string }

const SENT = 'Decision sent.';
/** A team's quorum: the hub counted this approval, and the request waits for the other reviewers'. */
const COUNTED = 'Your approval is counted. The team needs more approvals before this request is approved.';
const QUEUED = 'The hub is unreachable. Your decision is saved and will be delivered when it reconnects.';

/** A second popup or tab decided too late: the first decision made in this browser is the one that counts. */
export function alreadyDecidedHere(decision: LocalOutcome, delivery: 'queued' | 'delivered'): string {
  const first = decision.decision === 'approved' ? 'approved' : 'rejected';
  const where = delivery === 'queued' ? 'it is waiting for the hub' : 'the hub has it';
  return `Already decided in this browser (in another popup or tab): ${first}, and ${where}. This decision was not sent.`;
}

interface ReplyOutcome {
  feedback: Feedback;
  /** Per-field problems to show next to the editors (only for an `invalid` refusal). */
  issues: FieldIssue[];
  /** The decision reached the hub or the outbox: there is nothing left to do on this page. */
  settled: boolean;
}

function interpretReply(reply: DecideReply): ReplyOutcome {
  switch (reply.state) {
    case 'queued':
      return { feedback: { tone: 'status', text: QUEUED }, issues: [], settled: true };
    case 'error':
      return { feedback: { tone: 'alert', text: reply.message || 'The decision could not be sent.' }, issues: [], settled: false };
    case 'already_decided_here':
      return { feedback: { tone: 'alert', text: alreadyDecidedHere(reply.decision, reply.delivery) }, issues: [], settled: true };
    case 'too_large':
      return { feedback: { tone: 'alert', text: REFUSAL_TEXT.too_large }, issues: reply.issues, settled: false };
    case 'answered': {
      if (reply.ok) return { feedback: { tone: 'status', text: reply.status === 'pending' ? COUNTED : SENT }, issues: [], settled: true };
      const text = reply.reason ? REFUSAL_TEXT[reply.reason] : 'The hub refused this decision.';
      return { feedback: { tone: 'alert', text }, issues: reply.reason === 'invalid' ? (reply.issues ?? []) : [], settled: false };
    }
  }
}

/** Field messages keyed by property name: a Map, since agents choose the names ("constructor", "toString"…). */
export interface SplitIssues { byKey: ReadonlyMap<string, readonly string[]>; general: string[] }

function keyOfPath(path: string, keys: readonly string[]): string | undefined {
  let best: string | undefined;
  for (const key of keys) {
    const heads = [`values.${key}`, `values[${JSON.stringify(key)}]`];
    const hit = heads.some((head) => path === head || path.startsWith(`${head}[`) || path.startsWith(`${head}.`));
    // "values.a.b" could be key "a" or key "a.b"; the longer key is the more specific reading.
    if (hit && (best === undefined || key.length > best.length)) best = key;
  }
  return best;
}

/** An issue as shown next to its field: the path is already said by where it appears; "required but null" is for agents. */
function fieldText(issue: FieldIssue): string {
  const prefix = `${issue.path}: `;
  if (issue.rule === 'required') return 'Required.';
  return issue.message.startsWith(prefix) ? issue.message.slice(prefix.length) : issue.message;
}

/** Sorts issues to their field (paths `values.<key>…`); the rest are shown as a general list. */
export function splitIssues(issues: readonly FieldIssue[], keys: readonly string[]): SplitIssues {
  const byKey = new Map<string, string[]>();
  const general: string[] = [];
  for (const issue of issues) {
    const key = keyOfPath(issue.path, keys);
    if (key === undefined) general.push(issue.message);
    else byKey.set(key, [...(byKey.get(key) ?? []), fieldText(issue)]);
  }
  return { byKey, general };
}

// Only number and date inputs report input they cannot read (a string field's is a date or a date-time).
const UNREADABLE: Partial<Record<string, string>> = { string: 'Not a complete date or time.', number: 'Not a number.', integer: 'Not a number.' };

/**
 * What the shared validator says about one field's value, as the person types (the same check the submit runs, so the
 * messages agree). NaN is an editor's "cannot read what is typed" (a half-typed number or date), said plainly.
 */
export function fieldMessages(schema: RequestedSchema, key: string, value: unknown): string[] {
  if (typeof value === 'number' && Number.isNaN(value)) return [UNREADABLE[ownEntry(schema.properties, key)?.type ?? 'number'] ?? 'Not a number.'];
  // A computed key defines an own property, whatever the name.
  const checked = validateValues(schema, { [key]: value }, { only: [key] });
  return checked.ok ? [] : checked.issues.map(fieldText);
}

interface DecisionState {
  busy: boolean;
  settled: boolean;
  feedback: Feedback | null;
  /** Sends the decision; resolves to the hub's field issues when it refused the values as invalid. */
  send(decision: Decision): Promise<FieldIssue[]>;
  clearFeedback(): void;
}

/** `initial`: what the review says before any decision of its own (a refusal the row records, `refusalFeedback`). */
export function useDecision(decide: Decide, onDone?: () => void, initial: Feedback | null = null): DecisionState {
  const [busy, setBusy] = useState(false);
  const [settled, setSettled] = useState(false);
  const [feedback, setFeedback] = useState<Feedback | null>(initial);
  // A second Ctrl+Enter before the re-render that disables the buttons must not send twice.
  const inFlight = useRef(false);
  const send = useCallback(async (decision: Decision): Promise<FieldIssue[]> => {
    if (inFlight.current) return [];
    inFlight.current = true;
    setBusy(true);
    setFeedback(null);
    let reply: DecideReply;
    try {
      reply = await decide(decision);
    } catch (err) {
      reply = { state: 'error', message: err instanceof Error ? err.message : String(err) };
    }
    const outcome = interpretReply(reply);
    inFlight.current = false;
    setBusy(false);
    setFeedback(outcome.feedback);
    if (outcome.settled) {
      setSettled(true);
      // A queued decision stays on screen: the review turns into "waiting for the hub" until it is delivered. So does
      // one refused because another surface decided first, so the person reads why.
      if (reply.state !== 'queued' && reply.state !== 'already_decided_here') onDone?.();
    }
    return outcome.issues;
  }, [decide, onDone]);
  const clearFeedback = useCallback(() => setFeedback(null), []);
  return { busy, settled, feedback, send, clearFeedback };
}

/** The status region is always present so screen readers announce the text when it appears. */
export function FeedbackView({ feedback }: { feedback: Feedback | null }) {
  return (
    <>
      <p role="status" class="feedback">{feedback?.tone === 'status' ? feedback.text : ''}</p>
      {feedback?.tone === 'alert' && <p role="alert" class="feedback error">{feedback.text}</p>}
    </>
  );
}

export function GeneralIssues({ issues }: { issues: readonly string[] }) {
  if (issues.length === 0) return null;
  return (
    <ul class="issues error" aria-label="Problems">
      {issues.map((text, i) => <li key={i}><VisibleText text={text} /></li>)}
    </ul>
  );
}

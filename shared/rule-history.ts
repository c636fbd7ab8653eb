// A rule tried on the person's past questions before it is saved: which of them it would have answered, and which the
// other way from the person (the editor's dry run); and the rules their own repeated answers suggest (the Rules view).
// Pure: the extension reads the rows (extension/db/question-history.ts) and shows the result.
import type { PermissionRequest } from './permission.js';
import { defaultRuleEnd, draftMatch } from './rule-draft.js';
import { ruleSubject, ruleVerdict, type RuleSubject } from './rule-match.js';
import type { Rule, RuleDraft, RuleMatch } from './rules.js';

/** One past permission prompt as the history keeps it: the request the agent sent, and what became of it. */
export interface QuestionRow {
  id: string;
  createdAt: number;
  request: PermissionRequest;
  /** What was decided; null when nothing was (pending, withdrawn, expired) or this browser never learned which way. */
  decision: 'approved' | 'rejected' | null;
  /** One of the person's rules decided it when it was asked, not the person. */
  byRule: boolean;
}

/** The id a draft is tried under: rules are matched by their fields, never by their id. */
const DRAFT_ID = 'rule_0000000000000000';

/** A draft as a rule that never ends: a dry run asks which questions it answers, not whether it would still be alive. */
function asRule(draft: RuleDraft, now: number): Rule {
  return { id: DRAFT_ID, effect: draft.effect, match: draft.match, createdAt: now, expiresAt: null };
}

const subjects = new WeakMap<QuestionRow, RuleSubject>();

/** A row's subject, parsed once: the editor tries its draft on every keystroke, and parsing the commands is the cost. */
function subjectOf(row: QuestionRow): RuleSubject {
  let subject = subjects.get(row);
  if (subject === undefined) {
    subject = ruleSubject(row.request, row.request.host);
    subjects.set(row, subject);
  }
  return subject;
}

const answers = (rule: Rule, row: QuestionRow, now: number) => ruleVerdict([rule], subjectOf(row), now) !== null;

export interface DryRunAnswer {
  id: string;
  createdAt: number;
  /** What the agent asked: the command, the file path or the arguments as JSON, as text. */
  text: string;
  /** What the person decided; null when one of their rules did, or nothing was decided. */
  person: 'approved' | 'rejected' | null;
  byRule: boolean;
  /** The rule would have answered it the other way from the person: an allow where they denied, a deny where they allowed. */
  differs: boolean;
}

export interface DryRun {
  /** How many questions it was tried on. */
  asked: number;
  /** Those it would have answered, in the rows' order. */
  answered: DryRunAnswer[];
  /** How many of those it would have answered the other way from the person. */
  differing: number;
}

/** The draft alone, as the hub would match it, over `rows` (newest first): what it would have answered. */
export function dryRun(draft: RuleDraft, rows: readonly QuestionRow[], now: number): DryRun {
  const rule = asRule(draft, now);
  const against = draft.effect === 'allow' ? 'rejected' : 'approved';
  const answered: DryRunAnswer[] = [];
  for (const row of rows) {
    if (!answers(rule, row, now)) continue;
    const person = row.byRule ? null : row.decision;
    answered.push({ id: row.id, createdAt: row.createdAt, text: subjectOf(row).text, person, byRule: row.byRule, differs: person === against });
  }
  return { asked: rows.length, answered, differing: answered.filter((a) => a.differs).length };
}

/** How many same answers, and none the other way, make a suggestion. */
export const SUGGEST_AFTER = 5;

export interface RuleSuggestion {
  /** A stable name for the group, for lists. */
  key: string;
  /** The rule a review would draft from these questions, with the person's answer, ending in the default days. */
  draft: RuleDraft;
  /** What it starts from as the person saw it: the command's first words, or the path or the arguments. */
  subject: string;
  /** How many of the questions it would have answered the person allowed, and denied (one of the two is 0). */
  allowed: number;
  denied: number;
}

interface Group {
  match: RuleMatch;
  subject: string;
  rows: QuestionRow[];
}

/**
 * The rules the person's own answers suggest: their decisions (never a rule's) grouped by the rule a review would
 * draft from each question (tool, command's first words or the escaped path or arguments, agent), kept when they gave
 * one answer at least `SUGGEST_AFTER` times and the other never, and none of the rules they have (`rules`, those still
 * alive at `now`) already answers those questions. The draft is limited to the one directory the questions were all
 * asked in, if there is one. Counted are the questions the drafted rule would really have answered (an allow of
 * `npm test` does not cover `npm test && rm -rf x`). Most answers first.
 */
export function ruleSuggestions(rows: readonly QuestionRow[], rules: readonly Rule[], now: number): RuleSuggestion[] {
  const groups = new Map<string, Group>();
  for (const row of rows) {
    if (row.byRule || row.decision === null) continue;
    const match = draftMatch(row.request);
    const key = JSON.stringify([match.tool, match.agent ?? null, match.commandPrefix ?? null, match.pattern ?? null]);
    let group = groups.get(key);
    if (group === undefined) {
      group = { match, subject: match.commandPrefix ?? row.request.path ?? JSON.stringify(row.request.input), rows: [] };
      groups.set(key, group);
    }
    group.rows.push(row);
  }
  const out: (RuleSuggestion & { newest: number })[] = [];
  for (const [key, group] of groups) {
    const allowed = group.rows.filter((r) => r.decision === 'approved').length;
    const denied = group.rows.length - allowed;
    if (!(allowed >= SUGGEST_AFTER && denied === 0) && !(denied >= SUGGEST_AFTER && allowed === 0)) continue;
    const effect = allowed > 0 ? 'allow' : 'deny';
    const cwds = new Set(group.rows.map((r) => r.request.cwd));
    const [cwd] = cwds;
    const match: RuleMatch = { ...group.match, ...(cwds.size === 1 && cwd ? { directory: cwd } : {}) };
    const draft: RuleDraft = { effect, match, expiresAt: defaultRuleEnd(now) };
    const rule = asRule(draft, now);
    const covered = group.rows.filter((r) => answers(rule, r, now));
    if (covered.length < SUGGEST_AFTER) continue;
    if (covered.every((r) => ruleVerdict(rules, subjectOf(r), now) !== null)) continue;
    out.push({
      key, draft, subject: group.subject,
      allowed: effect === 'allow' ? covered.length : 0,
      denied: effect === 'deny' ? covered.length : 0,
      newest: Math.max(...covered.map((r) => r.createdAt)),
    });
  }
  return out
    .sort((a, b) => b.allowed + b.denied - (a.allowed + a.denied) || b.newest - a.newest)
    .map(({ newest: _newest, ...suggestion }) => suggestion);
}

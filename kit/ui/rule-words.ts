import type { PermissionRequest } from '../../shared/permission.js';
import { HOUR_MS, defaultRuleEnd, draftMatch } from '../../shared/rule-draft.js';
import { describeRule, type Rule, type RuleDraft, type RuleMatch } from '../../shared/rules.js';
import type { RequestRow } from '../rows/rows.js';
import { age } from './format-time.js';
import { ASK_WORD, PERMISSION_WORD, VERDICT_LABEL } from './labels.js';

export { commandPrefixOf } from '../../shared/rule-draft.js';

/**
 * The review's four scopes: "this session" and "this project" narrow where it applies (for the default days), the
 * other two how long.
 */
export type RuleScope = 'session' | 'project' | 'hour' | 'forever';

export const SCOPE_LABEL: Record<RuleScope, string> = {
  session: 'This session',
  project: 'This project',
  hour: '1 hour',
  forever: 'Until removed',
};

/**
 * The rule a review's "Always allow…" / "Always deny…" starts from: the tool; a command's first words, or else the
 * whole subject as a literal pattern (an edit's path, another tool's arguments); the agent; the working directory; and
 * the scope the person picked.
 */
export function draftFor(request: PermissionRequest, effect: 'allow' | 'deny', scope: RuleScope, now: number): RuleDraft {
  return withScope({ effect, match: draftMatch(request), expiresAt: null }, request, scope, now);
}

/**
 * The draft with a scope applied: only the fields a scope sets change; the rest are the person's edits. A rule made in
 * a review ends after the default days unless the person picks an hour or "until removed": a rule forgotten about
 * should not answer for them forever.
 */
export function withScope(draft: RuleDraft, request: Pick<PermissionRequest, 'cwd' | 'sessionId'>, scope: RuleScope, now: number): RuleDraft {
  const { sessionId: _s, directory: _d, ...rest } = draft.match;
  const match: RuleMatch = { ...rest };
  if (scope === 'session' && request.sessionId) match.sessionId = request.sessionId;
  // "Until removed" applies everywhere; the others stay in this project.
  if (scope !== 'forever' && request.cwd) match.directory = request.cwd;
  return { effect: draft.effect, match, expiresAt: scope === 'hour' ? now + HOUR_MS : scope === 'forever' ? null : defaultRuleEnd(now) };
}

/** How long a rule lasts, in words: "until removed", "until <date>", "expired". */
export function ruleExpiry(rule: Pick<Rule, 'expiresAt'>, now: number, format: (ms: number) => string): string {
  if (rule.expiresAt === null) return 'Until removed';
  return rule.expiresAt <= now ? `Expired ${format(rule.expiresAt)}` : `Until ${format(rule.expiresAt)}`;
}

/** How often a rule answered, from the hub's counts: "Answered 37 times, last 2 h ago", or "Not used yet". */
export function ruleUse(rule: Pick<Rule, 'hits' | 'lastHitAt'>, now: number): string {
  const hits = rule.hits ?? 0;
  if (hits === 0) return 'Not used yet';
  const times = hits === 1 ? 'once' : `${hits} times`;
  return rule.lastHitAt === undefined ? `Answered ${times}` : `Answered ${times}, last ${age(rule.lastHitAt, now)}`;
}

/**
 * What the history says about a request one of the person's rules decided at creation: "Allowed by your rule: …" (the
 * rule in words), or, once that rule is gone, that a rule since removed did. Null when no rule decided it.
 * `rule` is the rule named by the row's `ruleId`, undefined when it is no longer stored.
 */
export function ruleDecisionText(row: Pick<RequestRow, 'decidedVia' | 'ruleId' | 'status' | 'verdict' | 'kind' | 'outcome'>, rule: Rule | undefined, now = Date.now()): string | null {
  if (row.decidedVia !== 'rule') return null;
  const decision = row.verdict === 'approved' || row.verdict === 'rejected' ? row.verdict : row.outcome?.decision ?? (row.status === 'rejected' ? 'rejected' : 'approved');
  let verb: string;
  if (row.kind === 'permission') verb = PERMISSION_WORD[decision];
  else if (row.kind === 'confirm') verb = ASK_WORD.approved;
  else verb = VERDICT_LABEL[decision];
  return rule ? `${verb} by your rule: ${describeRule(rule, now)}` : `${verb} by a rule since removed`;
}

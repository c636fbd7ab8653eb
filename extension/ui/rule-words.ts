import type { PermissionRequest } from '../../shared/permission.js';
import { describeRule, type Rule, type RuleDraft, type RuleMatch } from '../../shared/rules.js';
import type { RequestRow } from '../db/rows.js';
import { ASK_WORD, PERMISSION_WORD, VERDICT_LABEL } from './labels.js';

export const HOUR_MS = 3_600_000;

/** The review's four scopes: "this session" and "this project" narrow where it applies, the other two how long. */
export type RuleScope = 'session' | 'project' | 'hour' | 'forever';

export const SCOPE_LABEL: Record<RuleScope, string> = {
  session: 'This session',
  project: 'This project',
  hour: '1 hour',
  forever: 'Until removed',
};

/** A word a command's tool takes as its subcommand (`npm test`, `git status`), not a flag, a path or a value. */
const SUBCOMMAND = /^[a-z][a-z0-9:_-]*$/i;

/**
 * The command's first word(s) a rule starts from: the program, and its subcommand when it has one, so "Always allow
 * npm test" does not become "always allow npm". The person sees it and can widen or narrow it before saving.
 */
export function commandPrefixOf(command: string): string {
  const words = command.trim().split(/\s+/);
  const [first = '', second] = words;
  return second !== undefined && SUBCOMMAND.test(second) ? `${first} ${second}` : first;
}

/**
 * The rule a review's "Always allow…" / "Always deny…" starts from: the tool; a command's first words, or else the
 * whole subject as a pattern (an edit's path, another tool's arguments); the agent; the working directory; and the
 * scope the person picked.
 */
export function draftFor(request: PermissionRequest, effect: 'allow' | 'deny', scope: RuleScope, now: number): RuleDraft {
  const match: RuleMatch = { tool: request.tool, agent: request.host };
  if (request.command !== undefined && request.command.trim() !== '') match.commandPrefix = commandPrefixOf(request.command);
  else match.pattern = request.path ?? JSON.stringify(request.input);
  return withScope({ effect, match, expiresAt: null }, request, scope, now);
}

/** The draft with a scope applied: only the fields a scope sets change; the rest are the person's edits. */
export function withScope(draft: RuleDraft, request: Pick<PermissionRequest, 'cwd' | 'sessionId'>, scope: RuleScope, now: number): RuleDraft {
  const { sessionId: _s, directory: _d, ...rest } = draft.match;
  const match: RuleMatch = { ...rest };
  if (scope === 'session' && request.sessionId) match.sessionId = request.sessionId;
  // "Until removed" applies everywhere; the others stay in this project.
  if (scope !== 'forever' && request.cwd) match.directory = request.cwd;
  return { effect: draft.effect, match, expiresAt: scope === 'hour' ? now + HOUR_MS : null };
}

/** How long a rule lasts, in words: "until removed", "until <date>", "expired". */
export function ruleExpiry(rule: Pick<Rule, 'expiresAt'>, now: number, format: (ms: number) => string): string {
  if (rule.expiresAt === null) return 'Until removed';
  return rule.expiresAt <= now ? `Expired ${format(rule.expiresAt)}` : `Until ${format(rule.expiresAt)}`;
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

// The person's own rules ("Always allow npm test in this project", "Always deny rm -rf"): their shape, and the pure
// match the hub runs when a request is created. Only a person makes a rule, in the extension's review or Rules view;
// an agent can list rules and remove one (which only brings the question back to the person), never create or widen.
import * as z from 'zod';
import type { ConfirmAsk } from './ask-input.js';
import type { PermissionRequest } from './permission.js';

export const MAX_RULES = 500;
export const RuleIdSchema = z.string().regex(/^rule_[0-9a-f]{16}$/, 'must be a rule id (rule_ and 16 hex digits)');

/** Every condition present must hold; `tool` always must. */
export const RuleMatchSchema = z.strictObject({
  /** The tool as the host names it (`Bash`, `Edit`, `mcp__github__create_issue`), or `elicit_confirm` for a question. */
  tool: z.string().min(1).max(200),
  /**
   * A shell command starts with these words. An allow rule never matches a command that chains, pipes, substitutes
   * or redirects (`;`, `&`, `|`, backquote, `$(`, `<`, `>`, a line break): `npm test` must not allow `npm test; rm -rf ~`.
   */
  commandPrefix: z.string().trim().min(1).max(1000).optional(),
  /**
   * A glob (`*` is any text, nothing else is special) over the whole subject: an edit's file path, another MCP tool's
   * arguments as JSON, a question's text.
   */
  pattern: z.string().min(1).max(1000).optional(),
  /** The agent: `claude-code`, `codex`, or an MCP client's name. */
  agent: z.string().min(1).max(200).optional(),
  /** Only under this directory: the working directory and, for an allow, every file the request touches. */
  directory: z.string().min(1).max(4096).optional(),
  /** Only in this agent session. */
  sessionId: z.string().min(1).max(200).optional(),
});
export type RuleMatch = z.infer<typeof RuleMatchSchema>;

export const RuleEffectSchema = z.enum(['allow', 'deny']);

export const RuleSchema = z.strictObject({
  id: RuleIdSchema,
  effect: RuleEffectSchema,
  match: RuleMatchSchema,
  createdAt: z.number(),
  /** Null: until removed. */
  expiresAt: z.number().nullable(),
  /** The request the person was reviewing when they made it. */
  from: z.string().min(1).max(100).optional(),
});
export type Rule = z.infer<typeof RuleSchema>;

/** A rule as the person saves it (the hub gives it its id and creation time). */
export const RuleDraftSchema = RuleSchema.omit({ id: true, createdAt: true, from: true });
export type RuleDraft = z.infer<typeof RuleDraftSchema>;

/** What a rule is matched against, derived from a request (`ruleSubject`). */
export interface RuleSubject {
  tool: string;
  command: string | null;
  /** What `pattern` is matched against. */
  text: string;
  agent: string | null;
  directory: string | null;
  /** Files the request touches (an edit's path). */
  paths: string[];
  sessionId: string | null;
}

/** The subject of a permission request or a confirm ask; other kinds have no rules (there is no answer to repeat). */
export function ruleSubject(request: PermissionRequest | ConfirmAsk, agent: string | null): RuleSubject {
  if (request.kind === 'confirm') {
    return { tool: 'elicit_confirm', command: null, text: request.message, agent, directory: null, paths: [], sessionId: null };
  }
  const text = request.command ?? request.path ?? JSON.stringify(request.input);
  return {
    tool: request.tool,
    command: request.command ?? null,
    text,
    agent: request.host,
    directory: request.cwd || null,
    paths: request.path ? [request.path] : [],
    sessionId: request.sessionId || null,
  };
}

const CHAINS = /[;&|`<>\r\n]|\$\(/;

const words = (s: string) => s.trim().split(/\s+/);

/** `command` is `prefix` followed by nothing or by more words. */
export function startsWithWords(command: string, prefix: string): boolean {
  const have = words(command);
  const want = words(prefix);
  return want.length <= have.length && want.every((w, i) => have[i] === w);
}

/** `*` is any text (line breaks included); every other character is itself. */
export function globMatches(glob: string, text: string): boolean {
  const source = glob.split('*').map((part) => part.replace(/[\\^$.|?+()[\]{}]/g, '\\$&')).join('[\\s\\S]*');
  return new RegExp(`^${source}$`).test(text);
}

/** `path` is `dir` or inside it (plain string paths, no `..` taken as inside). */
export function isUnder(path: string, dir: string): boolean {
  const base = dir.endsWith('/') ? dir.slice(0, -1) : dir;
  if (path.split('/').includes('..')) return false;
  return path === base || path.startsWith(`${base}/`);
}

export function ruleMatches(rule: Rule, subject: RuleSubject, now: number): boolean {
  if (rule.expiresAt !== null && now >= rule.expiresAt) return false;
  const m = rule.match;
  if (m.tool !== subject.tool) return false;
  if (m.agent !== undefined && m.agent !== subject.agent) return false;
  if (m.sessionId !== undefined && m.sessionId !== subject.sessionId) return false;
  if (m.commandPrefix !== undefined) {
    if (subject.command === null || !startsWithWords(subject.command, m.commandPrefix)) return false;
    if (rule.effect === 'allow' && CHAINS.test(subject.command)) return false;
  }
  if (m.pattern !== undefined && !globMatches(m.pattern, subject.text)) return false;
  if (m.directory !== undefined) {
    if (subject.directory === null || !isUnder(subject.directory, m.directory)) return false;
    if (rule.effect === 'allow' && !subject.paths.every((p) => isUnder(p.startsWith('/') ? p : `${subject.directory}/${p}`, m.directory!))) return false;
  }
  return true;
}

/** The rule that decides a request: any matching deny before any matching allow; null when the person must decide. */
export function decidingRule(rules: readonly Rule[], subject: RuleSubject, now: number): Rule | null {
  let allow: Rule | null = null;
  for (const rule of rules) {
    if (!ruleMatches(rule, subject, now)) continue;
    if (rule.effect === 'deny') return rule;
    allow ??= rule;
  }
  return allow;
}

/** A rule in one line, as the review shows it before it is saved and the Rules view and `rules --list` list it. */
export function describeRule(rule: Pick<Rule, 'effect' | 'match' | 'expiresAt'>, now = Date.now()): string {
  const m = rule.match;
  const parts = [`${rule.effect === 'allow' ? 'Always allow' : 'Always deny'} ${m.tool}`];
  if (m.commandPrefix !== undefined) parts.push(`commands starting with "${m.commandPrefix}"`);
  if (m.pattern !== undefined) parts.push(`matching "${m.pattern}"`);
  if (m.agent !== undefined) parts.push(`from ${m.agent}`);
  if (m.directory !== undefined) parts.push(`in ${m.directory}`);
  if (m.sessionId !== undefined) parts.push('in this session only');
  if (rule.expiresAt === null) parts.push('until removed');
  else if (rule.expiresAt <= now) parts.push('(expired)');
  else parts.push(`until ${new Date(rule.expiresAt).toISOString()}`);
  return parts.join(' ');
}

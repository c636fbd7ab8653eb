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

/**
 * `*` is any text (line breaks included); every other character is itself. Matched without a regular expression: a
 * pattern of many stars against an agent's long command made the backtracking engine run for minutes, in the hub,
 * at create. This walk backs up only to the last star: at most glob × text steps.
 */
export function globMatches(glob: string, text: string): boolean {
  let g = 0;
  let t = 0;
  let star = -1;
  let resume = 0;
  while (t < text.length) {
    if (g < glob.length && glob[g] !== '*' && glob[g] === text[t]) {
      g++;
      t++;
    } else if (g < glob.length && glob[g] === '*') {
      star = g++;
      resume = t;
    } else if (star !== -1) {
      g = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (g < glob.length && glob[g] === '*') g++;
  return g === glob.length;
}

/** `path` is `dir` or inside it (plain string paths, no `..` taken as inside). */
export function isUnder(path: string, dir: string): boolean {
  const base = dir.replace(/\/+$/, '');
  if (path.split('/').includes('..')) return false;
  return path === base || path.startsWith(`${base}/`);
}

/** An absolute path with its `.` and `..` steps taken (as text: links are not followed). */
export function normalizePath(path: string): string {
  const out: string[] = [];
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') out.pop();
    else out.push(part);
  }
  return `/${out.join('/')}`;
}

export function ruleMatches(rule: Rule, subject: RuleSubject, now: number): boolean {
  if (rule.expiresAt !== null && now >= rule.expiresAt) return false;
  const m = rule.match;
  const allow = rule.effect === 'allow';
  if (m.tool !== subject.tool) return false;
  if (m.agent !== undefined && m.agent !== subject.agent) return false;
  if (m.sessionId !== undefined && m.sessionId !== subject.sessionId) return false;
  if (m.commandPrefix !== undefined && (subject.command === null || !startsWithWords(subject.command, m.commandPrefix))) return false;
  if (m.pattern !== undefined && !globMatches(m.pattern, subject.text)) return false;
  // A command scoped by its words or a pattern is allowed only alone: `npm test*` must not allow `npm test; rm -rf ~`
  // any more than the prefix `npm test` does. (A rule on the tool alone allows every command, as the person chose.)
  if (allow && subject.command !== null && (m.commandPrefix !== undefined || m.pattern !== undefined) && CHAINS.test(subject.command)) return false;
  if (m.directory !== undefined) {
    const dir = m.directory;
    const resolved = subject.paths.map((p) => (p.startsWith('/') || subject.directory === null ? p : `${subject.directory}/${p}`));
    if (allow) {
      // The working directory and every file inside, with no `..` taken as inside.
      if (subject.directory === null || !isUnder(subject.directory, dir) || !resolved.every((p) => isUnder(p, dir))) return false;
    } else {
      // Either one inside, `..` resolved: an edit of `../../etc/passwd` is denied in /etc from wherever the agent runs.
      const inside = (p: string) => p.startsWith('/') && isUnder(normalizePath(p), dir);
      if (!(subject.directory !== null && inside(subject.directory)) && !resolved.some(inside)) return false;
    }
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

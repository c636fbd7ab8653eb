// The person's own rules ("Always allow npm test in this project", "Always deny rm -rf"): their shape, their patterns,
// and their words. Only a person makes a rule, in the extension's review or Rules view; an agent can list rules and
// remove one (which only brings the question back to the person), never create or widen. The match the hub runs is in
// `rule-match.ts` (it parses shell commands: kept out of what the wire and the pages load).
import * as z from 'zod';

export const MAX_RULES = 500;
/** How long a rule made in a review lasts unless the person picks otherwise. */
export const DEFAULT_RULE_DAYS = 30;
export const RuleIdSchema = z.string().regex(/^rule_[0-9a-f]{16}$/, 'must be a rule id (rule_ and 16 hex digits)');

/** Every condition present must hold; `tool` always must. */
export const RuleMatchSchema = z.strictObject({
  /** The tool as the host names it (`Bash`, `Edit`, `mcp__github__create_issue`), or `elicit_confirm` for a question. */
  tool: z.string().min(1).max(200),
  /**
   * A shell command's words: an allow covers a simple command that starts with them, word for word; a deny matches
   * when a program that starts with them runs anywhere in the command (`shared/shell-command.ts`).
   */
  commandPrefix: z.string().trim().min(1).max(1000).optional(),
  /**
   * A wildcard pattern over the subject: `*` is any text, `?` one character, `\` makes the next character itself. For
   * a shell command an allow matches it against each simple command, a deny against the whole and each program run;
   * otherwise against an edit's file path, another MCP tool's arguments as JSON, a question's text.
   */
  pattern: z.string().min(1).max(1000).optional(),
  /** The agent: `claude-code`, `codex`, or an MCP client's name. */
  agent: z.string().min(1).max(200).optional(),
  /** Only under this directory: for an allow, the working directory and every path the request names. */
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
  /** How many requests it answered, counted by the hub. */
  hits: z.number().int().nonnegative().optional(),
  /** When it last answered one. */
  lastHitAt: z.number().optional(),
});
export type Rule = z.infer<typeof RuleSchema>;

/** A rule as the person saves it (the hub gives it its id, creation time and counts). */
export const RuleDraftSchema = RuleSchema.omit({ id: true, createdAt: true, from: true, hits: true, lastHitAt: true });
export type RuleDraft = z.infer<typeof RuleDraftSchema>;

type GlobToken = { kind: 'char'; ch: string } | { kind: 'star' } | { kind: 'one' };

function globTokens(glob: string): GlobToken[] {
  const out: GlobToken[] = [];
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] ?? '';
    if (c === '\\' && i + 1 < glob.length) out.push({ kind: 'char', ch: glob[++i] ?? '' });
    else if (c === '*') out.push({ kind: 'star' });
    else if (c === '?') out.push({ kind: 'one' });
    else out.push({ kind: 'char', ch: c });
  }
  return out;
}

/**
 * `*` is any text (line breaks included), `?` one character, `\` makes the next character itself. Matched without a
 * regular expression: a pattern of many stars against an agent's long command made the backtracking engine run for
 * minutes, in the hub, at create. This walk backs up only to the last star: at most glob × text steps.
 */
export function globMatches(glob: string, text: string): boolean {
  const g = globTokens(glob);
  let gi = 0;
  let t = 0;
  let star = -1;
  let resume = 0;
  while (t < text.length) {
    const token = g[gi];
    if (token !== undefined && (token.kind === 'one' || (token.kind === 'char' && token.ch === text[t]))) {
      gi++;
      t++;
    } else if (token?.kind === 'star') {
      star = gi++;
      resume = t;
    } else if (star !== -1) {
      gi = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (g[gi]?.kind === 'star') gi++;
  return gi === g.length;
}

/** The text as a pattern that matches only itself: what the agent wrote never becomes a wildcard. */
export function escapeGlob(text: string): string {
  return text.replace(/[\\*?]/g, (c) => `\\${c}`);
}

/** The pattern in pieces, wildcards told apart, for the editor to show them. */
export function globPieces(glob: string): { text: string; wildcard: boolean }[] {
  const out: { text: string; wildcard: boolean }[] = [];
  for (const token of globTokens(glob)) {
    const wildcard = token.kind !== 'char';
    const text = token.kind === 'char' ? token.ch : token.kind === 'star' ? '*' : '?';
    const last = out[out.length - 1];
    if (last && last.wildcard === wildcard && !wildcard) last.text += text;
    else out.push({ text, wildcard });
  }
  return out;
}

/** A rule in one line, as the review shows it before it is saved and the Rules view and `rules --list` list it. */
export function describeRule(rule: Pick<Rule, 'effect' | 'match' | 'expiresAt'>, now = Date.now()): string {
  const m = rule.match;
  const parts = [`${rule.effect === 'allow' ? 'Always allow' : 'Always deny'} ${m.tool}`];
  if (m.commandPrefix !== undefined) parts.push(rule.effect === 'allow' ? `commands starting with "${m.commandPrefix}"` : `commands that run "${m.commandPrefix}" anywhere`);
  if (m.pattern !== undefined) parts.push(`matching "${m.pattern}"`);
  if (m.agent !== undefined) parts.push(`from ${m.agent}`);
  if (m.directory !== undefined) parts.push(`in ${m.directory}`);
  if (m.sessionId !== undefined) parts.push('in this session only');
  if (rule.expiresAt === null) parts.push('until removed');
  else if (rule.expiresAt <= now) parts.push('(expired)');
  else parts.push(`until ${new Date(rule.expiresAt).toISOString()}`);
  return parts.join(' ');
}

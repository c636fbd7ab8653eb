// What a rule drafted from one permission request matches: the review's "Always allow…" starts from it, and the Rules
// view's suggestions group the person's past decisions by it. Apart from the match (rule-match.ts), so the surfaces that
// only draft (the review, also in the chat and on the phone) do not carry the shell parser the match needs.
import type { PermissionRequest } from './permission.js';
import { DEFAULT_RULE_DAYS, escapeGlob, type RuleMatch } from './rules.js';

export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;
/** A new rule's end unless the person picks another: `DEFAULT_RULE_DAYS` from `now`. */
export const defaultRuleEnd = (now: number): number => now + DEFAULT_RULE_DAYS * DAY_MS;

/** A word a command's tool takes as its subcommand (`npm test`, `git status`), not a flag, a path or a value. */
const SUBCOMMAND = /^[a-z][a-z0-9:_-]*$/i;

/**
 * The command's first word(s) a rule starts from (after any leading `cd …`): the program, and its subcommand when it has one, so "Always allow
 * npm test" does not become "always allow npm". The person sees it and can widen or narrow it before saving.
 */
export function commandPrefixOf(command: string): string {
  // Agents often start with `cd <project> &&`: the rule is about what runs there (a `cd` inside a rule's directory is
  // covered by that rule), so the draft starts from the first part that is not a cd. Text only: the review does not
  // carry the shell parser; the person sees the draft, and the dry run, before saving.
  const parts = command.split(/&&|\|\||;|\n/).map((p) => p.trim()).filter((p) => p !== '');
  const words = (parts.find((p) => !/^(cd|pushd|popd)(\s|$)/.test(p)) ?? command).trim().split(/\s+/);
  const [first = '', second] = words;
  return second !== undefined && SUBCOMMAND.test(second) ? `${first} ${second}` : first;
}

/**
 * The tool, the agent, and a command's first words or else the whole subject as a pattern (an edit's path, another
 * tool's arguments as JSON). The pattern is escaped: a `*` or `?` the agent wrote is matched as itself, never as a
 * wildcard the person did not choose.
 */
export function draftMatch(request: Pick<PermissionRequest, 'tool' | 'host' | 'command' | 'path' | 'input'>): RuleMatch {
  const match: RuleMatch = { tool: request.tool, agent: request.host };
  if (request.command !== undefined && request.command.trim() !== '') match.commandPrefix = commandPrefixOf(request.command);
  else match.pattern = escapeGlob(request.path ?? JSON.stringify(request.input));
  return match;
}

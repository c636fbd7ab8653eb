// What every host's decision says in words: the person's reason for a deny, or who decided. Each host prints it in its
// own JSON (server/hook/hosts/); Claude Code and Codex share the shape of their PreToolUse answer.
import type { PermissionResult } from '../../shared/permission.js';
import type { HookOutput } from './hosts/hook-host.js';

export function decisionReason(result: PermissionResult): string {
  if (result.message !== undefined) return result.message;
  const who = result.decidedVia === 'rule' ? `a rule in Elicitly${result.ruleId ? ` (${result.ruleId})` : ''}` : 'the person in Elicitly';
  return `${result.behavior === 'allow' ? 'Allowed' : 'Denied'} by ${who}`;
}

/** Claude Code's and Codex's PreToolUse answer: allow or deny with the reason, and an edited input where one is run. */
export function preToolUseOutput(result: PermissionResult, updatedInput: Record<string, unknown> | undefined): HookOutput {
  return {
    hookSpecificOutput: {
      hookEventName: 'PreToolUse',
      permissionDecision: result.behavior,
      permissionDecisionReason: decisionReason(result),
      ...(updatedInput !== undefined ? { updatedInput } : {}),
    },
  };
}

// The decision JSON each host documents for each hook event, from the person's answer. Pure. `null` means print
// nothing: the host then goes on as if no hook had answered (its own prompt, or for Codex's PreToolUse its own approval).
import type { AskResult } from '../../shared/ask-input.js';
import type { PermissionRequest, PermissionResult } from '../../shared/permission.js';

export type HookOutput = { hookSpecificOutput: Record<string, unknown> };

function reason(result: PermissionResult): string {
  if (result.message !== undefined) return result.message;
  const who = result.decidedVia === 'rule' ? `a rule in Elicitly${result.ruleId ? ` (${result.ruleId})` : ''}` : 'the person in Elicitly';
  return `${result.behavior === 'allow' ? 'Allowed' : 'Denied'} by ${who}`;
}

/**
 * The host's own suggestions for "always allow in this session": those already scoped to the session verbatim, else
 * its rule suggestions narrowed to the session (the person chose this session, not the project's settings).
 */
export function sessionPermissions(suggestions: readonly Record<string, unknown>[]): Record<string, unknown>[] {
  const session = suggestions.filter((s) => s.destination === 'session');
  if (session.length > 0) return [...session];
  return suggestions.filter((s) => s.type === 'addRules').map((s) => ({ ...s, destination: 'session' }));
}

/**
 * `alwaysThisSession`: the person saved an allow rule for this session with this decision; Claude Code's
 * PermissionRequest then also gets its own session rule, so it stops asking for the rest of the session.
 */
export function permissionOutput(request: PermissionRequest, result: PermissionResult, alwaysThisSession = false): HookOutput | null {
  const allow = result.behavior === 'allow';
  const updatedInput = allow && request.editable ? result.updatedInput : undefined;
  if (request.event === 'PreToolUse') {
    // Codex has no "allow" in PreToolUse (it answers "unsupported" and runs its own approval); an edited input it runs.
    if (request.host === 'codex' && allow && updatedInput === undefined) return null;
    return {
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: allow ? 'allow' : 'deny',
        permissionDecisionReason: reason(result),
        ...(updatedInput !== undefined ? { updatedInput } : {}),
      },
    };
  }
  const decision: Record<string, unknown> = { behavior: result.behavior };
  if (!allow) decision.message = reason(result);
  if (updatedInput !== undefined) decision.updatedInput = updatedInput;
  if (allow && alwaysThisSession && request.host === 'claude-code') {
    const permissions = sessionPermissions(request.suggestions);
    if (permissions.length > 0) decision.updatedPermissions = permissions;
  }
  return { hookSpecificOutput: { hookEventName: 'PermissionRequest', decision } };
}

/** Claude Code's `Elicitation` answer: accept with the content, or decline. */
export function elicitationOutput(result: AskResult): HookOutput | null {
  if (!('content' in result)) return null;
  return {
    hookSpecificOutput: {
      hookEventName: 'Elicitation',
      action: result.action,
      ...(result.action === 'accept' && result.content !== null ? { content: result.content } : {}),
    },
  };
}

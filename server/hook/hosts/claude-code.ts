// Claude Code (measured on 2.1.332, ../shared/notes/claude-code.md): hooks in settings.json (`hooks.<Event>[]`, timeouts
// in seconds); PermissionRequest is its prompt (allow / deny / an edited input / its own session rules), Elicitation
// another MCP server's form, PostToolUse and PostToolUseFailure tell that the person answered in the terminal.
import * as z from 'zod';
import type { AskResult } from '../../../shared/ask-input.js';
import type { PermissionRequest, PermissionResult } from '../../../shared/permission.js';
import { eventMismatch, firstIssue, SNAKE_BASE, snakeToolPrompt, ToolInputSchema } from '../hook-input.js';
import { decisionReason, preToolUseOutput } from '../hook-output.js';
import { jsonInstalled, mergeJsonSettings, nothingOf } from '../hooks-settings.js';
import type { HookEvent, HookHost, HookOutput, ParsedHookInput } from './hook-host.js';

const TOOL_EVENTS = ['PreToolUse', 'PermissionRequest'] as const;
const ANSWERED_EVENTS = ['PostToolUse', 'PostToolUseFailure'] as const;

/** Its PermissionRequest adds the host's own "always allow" suggestions (no tool_use_id). */
const ToolSchema = z.looseObject({
  ...SNAKE_BASE,
  hook_event_name: z.enum(TOOL_EVENTS),
  tool_name: z.string().min(1),
  tool_input: ToolInputSchema,
  tool_use_id: z.string().optional(),
  permission_suggestions: z.array(z.record(z.string(), z.unknown())).optional(),
});

/** Another MCP server's form or URL request, before Claude Code draws its dialog. */
const ElicitationSchema = z.looseObject({
  ...SNAKE_BASE,
  hook_event_name: z.literal('Elicitation'),
  mcp_server_name: z.string().min(1),
  message: z.string(),
  mode: z.string().optional(),
  url: z.string().optional(),
  elicitation_id: z.string().optional(),
  requested_schema: z.unknown().optional(),
});

/** PostToolUse / PostToolUseFailure: the call's id is what names the request to withdraw. */
const AnsweredSchema = z.looseObject({
  ...SNAKE_BASE,
  hook_event_name: z.enum(ANSWERED_EVENTS),
  tool_name: z.string().min(1),
  tool_use_id: z.string().min(1).max(200),
});

function parse(event: HookEvent, raw: unknown): ParsedHookInput {
  if (event === 'Elicitation') {
    const parsed = ElicitationSchema.safeParse(raw);
    if (!parsed.success) return { ok: false, issue: firstIssue(ElicitationSchema, parsed.error, raw) };
    const input = parsed.data;
    return {
      ok: true,
      kind: 'elicitation',
      event,
      prompt: {
        sessionId: input.session_id,
        cwd: input.cwd,
        server: input.mcp_server_name,
        message: input.message,
        ...(input.mode !== undefined ? { mode: input.mode } : {}),
        ...(input.requested_schema !== undefined ? { requestedSchema: input.requested_schema } : {}),
      },
    };
  }
  if ((ANSWERED_EVENTS as readonly string[]).includes(event)) {
    const parsed = AnsweredSchema.safeParse(raw);
    if (!parsed.success) return { ok: false, issue: firstIssue(AnsweredSchema, parsed.error, raw) };
    const mismatch = eventMismatch(parsed.data.hook_event_name, event);
    return mismatch ? { ok: false, issue: mismatch } : { ok: true, kind: 'answered', event, sessionId: parsed.data.session_id, toolUseId: parsed.data.tool_use_id };
  }
  return snakeToolPrompt(ToolSchema, event, raw, (input) => (input.permission_suggestions ? { suggestions: input.permission_suggestions } : {}));
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
 * `alwaysThisSession`: the person saved an allow rule for this session with this decision; the PermissionRequest then
 * also gets Claude Code's own session rule, so it stops asking for the rest of the session.
 */
function output(request: PermissionRequest, result: PermissionResult, alwaysThisSession: boolean): HookOutput {
  const allow = result.behavior === 'allow';
  const updatedInput = allow ? result.updatedInput : undefined;
  if (request.event === 'PreToolUse') {
    return preToolUseOutput(result, updatedInput);
  }
  const decision: Record<string, unknown> = { behavior: result.behavior };
  if (!allow) decision.message = decisionReason(result);
  if (updatedInput !== undefined) decision.updatedInput = updatedInput;
  if (allow && alwaysThisSession) {
    const permissions = sessionPermissions(request.suggestions);
    if (permissions.length > 0) decision.updatedPermissions = permissions;
  }
  return { hookSpecificOutput: { hookEventName: 'PermissionRequest', decision } };
}

/** The Elicitation answer: accept with the content, or decline. */
function elicitationOutput(result: AskResult): HookOutput | null {
  if (!('content' in result)) return null;
  return {
    hookSpecificOutput: {
      hookEventName: 'Elicitation',
      action: result.action,
      ...(result.action === 'accept' && result.content !== null ? { content: result.content } : {}),
    },
  };
}

export const claudeCode: HookHost = {
  id: 'claude-code',
  name: 'Claude Code',
  binary: 'claude',
  events: [...TOOL_EVENTS, 'Elicitation', ...ANSWERED_EVENTS],
  defaultEvents: ['PermissionRequest', 'Elicitation', ...ANSWERED_EVENTS],
  answeredEvents: ANSWERED_EVENTS,
  // It draws its own prompt while the PermissionRequest hook waits: only the answered events tell that it was answered there.
  withCompanions(events) {
    const all = [...events];
    if (events.includes('PermissionRequest')) for (const event of ANSWERED_EVENTS) if (!all.includes(event)) all.push(event);
    return all;
  },
  // Its PreToolUse runs before every tool, read-only ones included: narrowed to the ones that change something.
  matcher: (event) => (event === 'Elicitation' ? undefined : event === 'PreToolUse' ? 'Bash|Edit|MultiEdit|Write|NotebookEdit|mcp__.*' : '*'),
  configDir: { env: 'CLAUDE_CONFIG_DIR', home: '.claude' },
  settingsFile: { user: 'settings.json', project: ['.claude', 'settings.json'] },
  settings: async () => ({
    installed: (text) => jsonInstalled(text, 'claude-code'),
    merge: (text, desired) => mergeJsonSettings(text, desired),
    unmerge: (text) => mergeJsonSettings(text, nothingOf(claudeCode)),
  }),
  parse,
  shellTools: new Set(['Bash']),
  // It runs an edited input from both events.
  editable: () => true,
  output,
  elicitationOutput,
  // Its PermissionRequest names no call: the transcript's last matching tool_use does, for the PostToolUse guard.
  async findToolUseId(event, prompt) {
    if (event !== 'PermissionRequest') return null;
    const { findToolUseId } = await import('../transcript.js');
    return findToolUseId(prompt.transcriptPath, prompt.tool, prompt.input);
  },
};

// What Claude Code and Codex write on a hook's stdin, one schema per host and event. Loose objects: both hosts add
// fields between releases, and a field we do not read must never turn a prompt into a fallback. The shapes are the
// ones measured on Claude Code 2.1.332 (../shared/notes/claude-code.md) and Codex's own generated hook schemas.
import * as z from 'zod';
import { first, fromZod } from '../../shared/field-issues.js';
import type { HostAgent } from '../../shared/permission.js';

export const HookEventSchema = z.enum(['PreToolUse', 'PermissionRequest', 'Elicitation', 'PostToolUse', 'PostToolUseFailure']);
export type HookEvent = z.infer<typeof HookEventSchema>;
/**
 * The events that say the host ran (or tried) a tool call: the person answered its prompt in the terminal, so a
 * request still waiting for that call is withdrawn. Claude Code's only: Codex draws its prompt after its hook answers.
 */
export const ANSWERED_EVENTS = ['PostToolUse', 'PostToolUseFailure'] as const satisfies readonly HookEvent[];
export type AnsweredEvent = (typeof ANSWERED_EVENTS)[number];
export function isAnsweredEvent(event: HookEvent): event is AnsweredEvent {
  return (ANSWERED_EVENTS as readonly HookEvent[]).includes(event);
}

const Base = {
  session_id: z.string(),
  cwd: z.string(),
  transcript_path: z.string().nullable().optional(),
  permission_mode: z.string().optional(),
};

const ToolInput = z.record(z.string(), z.unknown());

/** Claude Code's `PermissionRequest` adds the host's own "always allow" suggestions (no tool_use_id). */
const ClaudeToolSchema = z.looseObject({
  ...Base,
  hook_event_name: z.enum(['PreToolUse', 'PermissionRequest']),
  tool_name: z.string().min(1),
  tool_input: ToolInput,
  tool_use_id: z.string().optional(),
  permission_suggestions: z.array(z.record(z.string(), z.unknown())).optional(),
});

/** Another MCP server's form or URL request, before Claude Code draws its dialog. */
const ClaudeElicitationSchema = z.looseObject({
  ...Base,
  hook_event_name: z.literal('Elicitation'),
  mcp_server_name: z.string().min(1),
  message: z.string(),
  mode: z.string().optional(),
  url: z.string().optional(),
  elicitation_id: z.string().optional(),
  requested_schema: z.unknown().optional(),
});

/** Codex: shell (`Bash`, `tool_input.command`), `apply_patch`, MCP tools (`mcp__server__tool`); `turn_id` and `model` besides. */
const CodexToolSchema = z.looseObject({
  ...Base,
  hook_event_name: z.enum(['PreToolUse', 'PermissionRequest']),
  tool_name: z.string().min(1),
  tool_input: ToolInput,
  tool_use_id: z.string().optional(),
  turn_id: z.string().optional(),
  model: z.string().optional(),
});

/** Claude Code's PostToolUse / PostToolUseFailure: the call's id is what names the request to withdraw. */
const ClaudeAnsweredSchema = z.looseObject({
  ...Base,
  hook_event_name: z.enum(ANSWERED_EVENTS),
  tool_name: z.string().min(1),
  tool_use_id: z.string().min(1).max(200),
});
export type AnsweredHookInput = z.infer<typeof ClaudeAnsweredSchema>;

export type ToolHookInput = z.infer<typeof ClaudeToolSchema> | z.infer<typeof CodexToolSchema>;
export type ElicitationHookInput = z.infer<typeof ClaudeElicitationSchema>;

export type ParsedHookInput =
  | { ok: true; kind: 'tool'; host: HostAgent; event: 'PreToolUse' | 'PermissionRequest'; input: ToolHookInput & { permission_suggestions?: Record<string, unknown>[] } }
  | { ok: true; kind: 'elicitation'; host: HostAgent; event: 'Elicitation'; input: ElicitationHookInput }
  | { ok: true; kind: 'answered'; host: HostAgent; event: AnsweredEvent; input: AnsweredHookInput }
  | { ok: false; issue: string };

/** `tool_input: must be an object, got string "x"`: the first problem, named by its field. */
function firstIssue(schema: z.ZodType, error: z.ZodError, raw: unknown): string {
  return first(fromZod(schema, error.issues, raw, { whole: 'stdin' }), 'stdin: does not match the hook input');
}

/** The host's stdin for `event`, checked; a mismatch names the field, so the one stderr line says what to fix. */
export function parseHookInput(host: HostAgent, event: HookEvent, raw: unknown): ParsedHookInput {
  if (event === 'Elicitation') {
    if (host !== 'claude-code') return { ok: false, issue: `Elicitation: ${host} has no Elicitation hook (only Claude Code does)` };
    const parsed = ClaudeElicitationSchema.safeParse(raw);
    return parsed.success ? { ok: true, kind: 'elicitation', host, event, input: parsed.data } : { ok: false, issue: firstIssue(ClaudeElicitationSchema, parsed.error, raw) };
  }
  if (isAnsweredEvent(event)) {
    if (host !== 'claude-code') return { ok: false, issue: `${event}: only Claude Code's is bridged (${host} shows its prompt after its hook answered)` };
    const parsed = ClaudeAnsweredSchema.safeParse(raw);
    if (!parsed.success) return { ok: false, issue: firstIssue(ClaudeAnsweredSchema, parsed.error, raw) };
    if (parsed.data.hook_event_name !== event) return { ok: false, issue: `hook_event_name: is "${parsed.data.hook_event_name}" but this hook was installed for ${event}` };
    return { ok: true, kind: 'answered', host, event, input: parsed.data };
  }
  const schema = host === 'claude-code' ? ClaudeToolSchema : CodexToolSchema;
  const parsed = schema.safeParse(raw);
  if (!parsed.success) return { ok: false, issue: firstIssue(schema, parsed.error, raw) };
  if (parsed.data.hook_event_name !== event) {
    return { ok: false, issue: `hook_event_name: is "${parsed.data.hook_event_name}" but this hook was installed for ${event}` };
  }
  return { ok: true, kind: 'tool', host, event, input: parsed.data };
}

// The pieces every host's stdin schema is made of (server/hook/hosts/): loose objects, since hosts add fields between
// releases and a field we do not read must never turn a prompt into a fallback; and the one way a mismatch is named.
import * as z from 'zod';
import { first, fromZod } from '../../shared/field-issues.js';
import type { HookEvent, ParsedHookInput, ToolPrompt } from './hosts/hook-host.js';

/** The fields Claude Code and Codex (and hosts modelled on them) put in every hook's stdin. */
export const SNAKE_BASE = {
  session_id: z.string(),
  cwd: z.string(),
  transcript_path: z.string().nullable().optional(),
  permission_mode: z.string().optional(),
};

export const ToolInputSchema = z.record(z.string(), z.unknown());

/** `tool_input: must be an object, got string "x"`: the first problem, named by its field. */
export function firstIssue(schema: z.ZodType, error: z.ZodError, raw: unknown): string {
  return first(fromZod(schema, error.issues, raw, { whole: 'stdin' }), 'stdin: does not match the hook input');
}

/** The stdin's event against the one the hook was installed for: a hook installed for one event never answers another. */
export function eventMismatch(stated: string, event: string): string | null {
  return stated === event ? null : `hook_event_name: is "${stated}" but this hook was installed for ${event}`;
}

/** The snake_case tool stdin Claude Code and Codex share, as the prompt every host's is turned into. */
interface SnakeToolInput {
  hook_event_name: string;
  session_id: string;
  cwd: string;
  tool_name: string;
  tool_input: Record<string, unknown>;
  transcript_path?: string | null | undefined;
  tool_use_id?: string | undefined;
}

/**
 * A snake_case tool stdin checked against `schema` and the event the hook was installed for; `extra` adds what that
 * host's stdin has besides (Claude Code's suggestions).
 */
export function snakeToolPrompt<T extends SnakeToolInput>(schema: z.ZodType<T>, event: HookEvent, raw: unknown, extra: (input: T) => Partial<ToolPrompt> = () => ({})): ParsedHookInput {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) return { ok: false, issue: firstIssue(schema, parsed.error, raw) };
  const input = parsed.data;
  const mismatch = eventMismatch(input.hook_event_name, event);
  if (mismatch) return { ok: false, issue: mismatch };
  const prompt: ToolPrompt = {
    sessionId: input.session_id,
    cwd: input.cwd,
    tool: input.tool_name,
    input: input.tool_input,
    ...(input.transcript_path !== undefined ? { transcriptPath: input.transcript_path } : {}),
    ...(input.tool_use_id !== undefined ? { toolUseId: input.tool_use_id } : {}),
    ...extra(input),
  };
  return { ok: true, kind: 'tool', event, prompt };
}

// The pieces every host's stdin schema is made of (server/hook/hosts/): loose objects, since hosts add fields between
// releases and a field we do not read must never turn a prompt into a fallback; and the one way a mismatch is named.
import * as z from 'zod';
import { first, fromZod } from '../../shared/field-issues.js';

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

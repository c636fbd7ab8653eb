// Gemini CLI (measured on 0.61.0 offline: ../shared/notes/more-hosts.md): hooks in settings.json (`hooks.<Event>[]`
// of `{matcher, hooks:[{type:"command", name, command, timeout}]}`, timeouts in milliseconds), in
// `$GEMINI_CLI_HOME/.gemini` or `~/.gemini`, and a project's `.gemini/settings.json` (a trusted folder's only).
// BeforeTool runs before its policy check, in the terminal and in `-p` alike. What its stdout can do:
// - `{"decision":"deny","reason":R}`: the tool does not run, and the model is told "Tool execution blocked: R";
// - `hookSpecificOutput.tool_input`: the tool runs with that input (the policy checks the new input);
// - anything else, an allow included, grants nothing: the policy decides (its own confirmation, or its rules).
// So a person's "allow" here lets Gemini CLI's policy decide, and their "deny" always holds. A hook that runs past its
// timeout decides nothing (the tool then runs if the policy allows it): the hook's own wait ends first.
import * as z from 'zod';
import type { PermissionRequest, PermissionResult } from '../../../shared/permission.js';
import { eventMismatch, firstIssue, ToolInputSchema } from '../hook-input.js';
import { decisionReason } from '../hook-output.js';
import { jsonInstalled, mergeJsonSettings, nothingOf, type JsonHookFormat } from '../hooks-settings.js';
import type { HookEvent, HookHost, HookOutput, ParsedHookInput } from './hook-host.js';

const EVENT = 'BeforeTool';

/** Its hooks' timeout is in milliseconds, and it names each hook in what it prints about them. */
const FORMAT: JsonHookFormat = { timeoutUnit: 'ms', name: 'elicitly' };

const BeforeToolSchema = z.looseObject({
  session_id: z.string(),
  cwd: z.string(),
  hook_event_name: z.literal(EVENT),
  transcript_path: z.string().nullable().optional(),
  timestamp: z.string().optional(),
  tool_name: z.string().min(1),
  tool_input: ToolInputSchema,
});

function parse(event: HookEvent, raw: unknown): ParsedHookInput {
  if (event !== EVENT) return { ok: false, issue: `${event}: not a Gemini CLI hook event the bridge handles (${EVENT})` };
  const parsed = BeforeToolSchema.safeParse(raw);
  if (!parsed.success) return { ok: false, issue: firstIssue(BeforeToolSchema, parsed.error, raw) };
  const input = parsed.data;
  const mismatch = eventMismatch(input.hook_event_name, event);
  if (mismatch) return { ok: false, issue: mismatch };
  return { ok: true, kind: 'tool', event, prompt: { sessionId: input.session_id, cwd: input.cwd, tool: input.tool_name, input: input.tool_input } };
}

function output(_request: PermissionRequest, result: PermissionResult): HookOutput | null {
  if (result.behavior === 'deny') return { decision: 'deny', reason: decisionReason(result) };
  if (result.updatedInput !== undefined) return { hookSpecificOutput: { hookEventName: EVENT, tool_input: result.updatedInput } };
  return null;
}

export const geminiCli: HookHost = {
  id: 'gemini-cli',
  name: 'Gemini CLI',
  binary: 'gemini',
  events: [EVENT],
  defaultEvents: [EVENT],
  answeredEvents: [],
  withCompanions: (events) => [...events],
  // Before every tool, read-only ones included: the ones that change something, and other MCP servers' tools.
  matcher: () => 'run_shell_command|replace|write_file|mcp_.*',
  configDir: { env: 'GEMINI_CLI_HOME', home: '.gemini', envHoldsHome: true },
  settingsFile: { user: 'settings.json', project: ['.gemini', 'settings.json'] },
  settings: async () => ({
    installed: (text) => jsonInstalled(text, 'gemini-cli', FORMAT),
    merge: (text, desired) => mergeJsonSettings(text, desired, FORMAT),
    unmerge: (text) => mergeJsonSettings(text, nothingOf(geminiCli), FORMAT),
  }),
  parse,
  shellTools: new Set(['run_shell_command']),
  editable: () => true,
  output,
  // With nothing on stdout it reads stderr as the hook's answer (and shows it as a message): an empty object says nothing.
  silence: {},
};

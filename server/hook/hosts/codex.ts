// Codex (0.171.0, its own generated hook schemas): hooks in config.toml (`[[hooks.<Event>]]`, kept in one marked
// block by hooks-codex-config.ts); PreToolUse can deny or run an edited input (an allow is "unsupported": Codex then
// runs its own approval), PermissionRequest is its prompt and runs no edited input. It draws its prompt only after
// its hook answered, so it has no event that says the person answered in the terminal.
import * as z from 'zod';
import type { PermissionRequest, PermissionResult } from '../../../shared/permission.js';
import { SNAKE_BASE, snakeToolPrompt, ToolInputSchema } from '../hook-input.js';
import { decisionReason, preToolUseOutput } from '../hook-output.js';
import type { HookEvent, HookHost, HookOutput, ParsedHookInput } from './hook-host.js';

const TOOL_EVENTS = ['PreToolUse', 'PermissionRequest'] as const;

/** Shell (`Bash`, `tool_input.command`), `apply_patch`, MCP tools (`mcp__server__tool`); `turn_id` and `model` besides. */
const ToolSchema = z.looseObject({
  ...SNAKE_BASE,
  hook_event_name: z.enum(TOOL_EVENTS),
  tool_name: z.string().min(1),
  tool_input: ToolInputSchema,
  tool_use_id: z.string().optional(),
  turn_id: z.string().optional(),
  model: z.string().optional(),
});

function parse(event: HookEvent, raw: unknown): ParsedHookInput {
  if (!(TOOL_EVENTS as readonly string[]).includes(event)) return { ok: false, issue: `${event}: not a Codex hook event the bridge handles (${TOOL_EVENTS.join(', ')})` };
  return snakeToolPrompt(ToolSchema, event, raw);
}

function output(request: PermissionRequest, result: PermissionResult): HookOutput | null {
  const allow = result.behavior === 'allow';
  const updatedInput = allow && request.editable ? result.updatedInput : undefined;
  if (request.event === 'PreToolUse') {
    // No "allow" in its PreToolUse (it answers "unsupported" and runs its own approval); an edited input it runs.
    if (allow && updatedInput === undefined) return null;
    return preToolUseOutput(result, updatedInput);
  }
  const decision: Record<string, unknown> = { behavior: result.behavior };
  if (!allow) decision.message = decisionReason(result);
  return { hookSpecificOutput: { hookEventName: 'PermissionRequest', decision } };
}

export const codex: HookHost = {
  id: 'codex',
  name: 'Codex',
  binary: 'codex',
  events: TOOL_EVENTS,
  defaultEvents: ['PermissionRequest'],
  answeredEvents: [],
  withCompanions: (events) => [...events],
  matcher: () => '*',
  configDir: { env: 'CODEX_HOME', home: '.codex' },
  settingsFile: { user: 'config.toml', project: ['.codex', 'config.toml'] },
  // The TOML parser comes with the installer only, never at start-up.
  async settings() {
    const toml = await import('../hooks-codex-config.js');
    return {
      installed: (text) => toml.codexInstalled(text, codex),
      merge: (text, desired) => toml.mergeCodexConfig(text, desired),
      unmerge: (text) => toml.unmergeCodexConfig(text, codex),
    };
  },
  installNote:
    'Codex runs new hooks only once you trust them: review them in Codex when it offers them, or give `codex exec` ' +
    '--dangerously-bypass-hook-trust. `codex exec` never asks for approval, so there only PreToolUse reaches you ' +
    '(--events PreToolUse,PermissionRequest installs both).',
  parse,
  shellTools: new Set(['Bash', 'exec_command', 'shell', 'local_shell', 'container.exec']),
  // Its PermissionRequest fails closed on an edited input; its PreToolUse runs one.
  editable: (event) => event === 'PreToolUse',
  output,
};

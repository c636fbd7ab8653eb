// GitHub Copilot CLI (measured on 1.0.102 offline, with its own model provider: ../shared/notes/more-hosts.md): hook
// files `{"version":1,"hooks":{"<event>":[{"type":"command","bash":CMD,"timeoutSec":N}]}}`, ours alone in
// `$COPILOT_HOME/hooks/elicitly.json` (or `~/.copilot`; they load without trusting a folder) or a repository's
// `.github/hooks/elicitly.json` (loaded only with `--trust-folder`). What its stdout decides:
// - permissionRequest (where it would ask): `{"behavior":"allow"}` runs the call; `{"behavior":"deny","message":M}`
//   does not, and the model is told "Permission denied by a PermissionRequest hook: M"; an edited input is ignored.
// - preToolUse (every call): `{"permissionDecision":"allow"}` runs it without asking, `modifiedArgs` with the new input;
//   "deny" with `permissionDecisionReason` R tells the model "Denied by preToolUse hook: R"; nothing defers to
//   permissionRequest.
// Printing nothing decides nothing: it then asks the person itself (and `-p`, where nobody can answer, refuses). A
// stdin carries no call id, and no event says the person answered in its own prompt.
import * as z from 'zod';
import { isObject } from '../../../shared/field-issues.js';
import type { PermissionRequest, PermissionResult } from '../../../shared/permission.js';
import { firstIssue, ToolInputSchema } from '../hook-input.js';
import { decisionReason } from '../hook-output.js';
import { hookEntry, isOurCommand, nothingOf, parseJsonSettings, type Desired, type Installed, type Merged } from '../hooks-settings.js';
import type { HookEvent, HookHost, HookOutput, HostSettings, ParsedHookInput } from './hook-host.js';

const EVENTS = ['preToolUse', 'permissionRequest'] as const;

const Base = { sessionId: z.string(), cwd: z.string(), timestamp: z.number().optional() };

const PreToolUseSchema = z.looseObject({ ...Base, toolName: z.string().min(1), toolArgs: ToolInputSchema });
const PermissionRequestSchema = z.looseObject({
  ...Base,
  hookName: z.literal('permissionRequest'),
  toolName: z.string().min(1),
  toolInput: ToolInputSchema,
});

function parse(event: HookEvent, raw: unknown): ParsedHookInput {
  if (event === 'preToolUse') {
    const parsed = PreToolUseSchema.safeParse(raw);
    if (!parsed.success) return { ok: false, issue: firstIssue(PreToolUseSchema, parsed.error, raw) };
    const { sessionId, cwd, toolName, toolArgs } = parsed.data;
    return { ok: true, kind: 'tool', event, prompt: { sessionId, cwd, tool: toolName, input: toolArgs } };
  }
  if (event === 'permissionRequest') {
    const parsed = PermissionRequestSchema.safeParse(raw);
    if (!parsed.success) return { ok: false, issue: firstIssue(PermissionRequestSchema, parsed.error, raw) };
    const { sessionId, cwd, toolName, toolInput } = parsed.data;
    return { ok: true, kind: 'tool', event, prompt: { sessionId, cwd, tool: toolName, input: toolInput } };
  }
  return { ok: false, issue: `${event}: not a Copilot CLI hook event the bridge handles (${EVENTS.join(', ')})` };
}

function output(request: PermissionRequest, result: PermissionResult): HookOutput {
  const allow = result.behavior === 'allow';
  if (request.event === 'preToolUse') {
    if (!allow) return { permissionDecision: 'deny', permissionDecisionReason: decisionReason(result) };
    return { permissionDecision: 'allow', ...(result.updatedInput !== undefined ? { modifiedArgs: result.updatedInput } : {}) };
  }
  return allow ? { behavior: 'allow' } : { behavior: 'deny', message: decisionReason(result) };
}

type Json = Record<string, unknown>;

/** Its hooks file, ours alone by name; one that is not a hooks file is refused, naming why. */
function parseFile(text: string | null): { ok: true; file: Json; hooks: Json } | { ok: false; why: string } {
  const parsed = parseJsonSettings(text);
  if (!parsed.ok) return parsed;
  const file = Object.keys(parsed.settings).length > 0 ? parsed.settings : { version: 1 };
  return { ok: true, file, hooks: isObject(file.hooks) ? { ...file.hooks } : {} };
}

function ours(entries: unknown): Json[] {
  return Array.isArray(entries) ? entries.filter((e): e is Json => isObject(e) && isOurCommand(e.bash, 'copilot-cli')) : [];
}

function installed(text: string | null): Installed[] {
  const parsed = parseFile(text);
  if (!parsed.ok) return [];
  return Object.entries(parsed.hooks).flatMap(([event, entries]) =>
    ours(entries).map((e) => ({ event, command: String(e.bash), timeout: typeof e.timeoutSec === 'number' ? e.timeoutSec : null })),
  );
}

/** The file with exactly `desired.events` of ours; an entry someone else put in it stays. */
function merge(text: string | null, desired: Desired): Merged {
  const parsed = parseFile(text);
  if (!parsed.ok) return parsed;
  const { hooks } = parsed;
  const changes: string[] = [];
  for (const event of EVENTS) {
    const entries = Array.isArray(hooks[event]) ? (hooks[event] as unknown[]) : [];
    const mine = ours(entries);
    const wanted = desired.events.includes(event) ? (({ command, timeout }) => ({ type: 'command', bash: command, timeoutSec: timeout }))(hookEntry(desired, event)) : null;
    if (wanted && mine.length === 1 && JSON.stringify(mine[0]) === JSON.stringify(wanted)) continue;
    if (!wanted && mine.length === 0) continue;
    const kept = entries.filter((e) => !(isObject(e) && isOurCommand(e.bash, 'copilot-cli')));
    if (wanted) kept.push(wanted);
    changes.push(wanted ? `${mine.length ? 'updated' : 'added'} ${event}: ${wanted.bash} (timeout ${wanted.timeoutSec} s)` : `removed ${event}`);
    if (kept.length > 0) hooks[event] = kept;
    else delete hooks[event];
  }
  if (changes.length === 0) return { ok: true, text: text ?? '', changes };
  return { ok: true, text: `${JSON.stringify({ ...parsed.file, version: parsed.file.version ?? 1, hooks }, null, 2)}\n`, changes };
}

const SETTINGS: HostSettings = { installed, merge, unmerge: (text) => merge(text, nothingOf(copilotCli)) };

export const copilotCli: HookHost = {
  id: 'copilot-cli',
  name: 'GitHub Copilot CLI',
  binary: 'copilot',
  events: EVENTS,
  defaultEvents: ['permissionRequest'],
  answeredEvents: [],
  withCompanions: (events) => [...events],
  // Its hook entries have no matcher: every tool call reaches the hook, which asks about the ones it is given.
  matcher: () => undefined,
  configDir: { env: 'COPILOT_HOME', home: '.copilot' },
  settingsFile: { user: 'hooks/elicitly.json', project: ['.github', 'hooks', 'elicitly.json'] },
  settings: async () => SETTINGS,
  installNote: 'Copilot CLI loads a repository\'s .github/hooks only in a folder you trust (--trust-folder); your own hooks load everywhere.',
  parse,
  shellTools: new Set(['bash', 'powershell']),
  // Its permissionRequest ignores an edited input; its preToolUse runs one (`modifiedArgs`).
  editable: (event) => event === 'preToolUse',
  output,
};

// OpenCode (measured on 1.18.33 under `opencode serve`: ../shared/notes/more-hosts.md): no command hooks. Its plugins'
// `permission.ask` hook is never called, so the bridge is a plugin of its own, `elicitly.js` in its plugin folder
// (`~/.config/opencode/plugin`, `$OPENCODE_CONFIG_DIR/plugin`, or a project's `.opencode/plugin`), which on each
// `permission.asked` event runs the hook command with the event on stdin and replies with what it prints:
// `{"reply":"once"}` runs the call; `{"reply":"reject","message":M}` does not, and the model is told "The user rejected
// permission to use this specific tool call with the following feedback: M". Printing nothing leaves OpenCode's own
// prompt as it is. When the prompt is answered in OpenCode (`permission.replied`), the plugin ends the hook, which
// withdraws its question. `opencode run` rejects every permission at once by itself: the bridge serves its TUI and
// `opencode serve`.
import * as z from 'zod';
import type { PermissionRequest, PermissionResult } from '../../../shared/permission.js';
import { firstIssue } from '../hook-input.js';
import { decisionReason } from '../hook-output.js';
import { hookEntry, isOurCommand, type Desired, type Installed, type Merged } from '../hooks-settings.js';
import type { HookEvent, HookHost, HookOutput, HostSettings, ParsedHookInput } from './hook-host.js';

const EVENT = 'permission.asked';

/** The event's properties, with the directory the plugin runs for. */
const AskedSchema = z.looseObject({
  id: z.string().min(1).max(200),
  sessionID: z.string(),
  /** What is asked: `bash`, `edit`, `external_directory`, … */
  permission: z.string().min(1),
  patterns: z.array(z.string()).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  tool: z.looseObject({ callID: z.string().optional() }).optional(),
  directory: z.string(),
});

function parse(event: HookEvent, raw: unknown): ParsedHookInput {
  if (event !== EVENT) return { ok: false, issue: `${event}: not an OpenCode event the bridge handles (${EVENT})` };
  const parsed = AskedSchema.safeParse(raw);
  if (!parsed.success) return { ok: false, issue: firstIssue(AskedSchema, parsed.error, raw) };
  const asked = parsed.data;
  // What it would run is in the metadata (`command` for bash); the patterns are what "always" would allow.
  const input = { ...(asked.metadata ?? {}), ...(asked.patterns ? { patterns: asked.patterns } : {}) };
  return {
    ok: true,
    kind: 'tool',
    event,
    prompt: { sessionId: asked.sessionID, cwd: asked.directory, tool: asked.permission, input, ...(asked.tool?.callID ? { toolUseId: asked.tool.callID } : {}) },
  };
}

function output(_request: PermissionRequest, result: PermissionResult): HookOutput {
  return result.behavior === 'allow' ? { reply: 'once' } : { reply: 'reject', message: decisionReason(result) };
}

/** The first line of the plugin: how `installed` knows the file is ours, and nothing else is overwritten. */
const MARK = '// Written by `elicitly-companion hooks install opencode`: it replaces this file, and `hooks uninstall opencode` removes it.';

/** The plugin: the hook command (`/bin/sh -c`, as every host runs one), its time limit, and the replies it may send. */
export function pluginText(command: string, timeoutSeconds: number): string {
  return `${MARK}
// It asks a person about OpenCode's permission requests (in the Elicitly extension) and replies with their answer.
import { spawn } from 'node:child_process';

const COMMAND = ${JSON.stringify(command)};
const TIMEOUT_SECONDS = ${timeoutSeconds};
const REPLIES = ['once', 'reject'];

/** The hook and the shell that runs it: a group of their own, ended together. */
const end = (child) => {
  try {
    process.kill(-child.pid, 'SIGTERM');
  } catch {
    child.kill('SIGTERM');
  }
};

export const Elicitly = async ({ client, directory }) => {
  /** requestID -> the hook asking about it */
  const asking = new Map();

  const ask = (request) =>
    new Promise((resolve) => {
      let out = '';
      let child;
      try {
        child = spawn('/bin/sh', ['-c', COMMAND], { stdio: ['pipe', 'pipe', 'ignore'], detached: true });
      } catch {
        resolve(null);
        return;
      }
      asking.set(request.id, child);
      // Its hook's own wait ends sooner; this bounds one that hangs.
      const timer = setTimeout(() => end(child), TIMEOUT_SECONDS * 1000);
      child.stdout.on('data', (chunk) => (out += chunk));
      child.stdin.on('error', () => undefined);
      child.on('error', () => {
        clearTimeout(timer);
        asking.delete(request.id);
        resolve(null);
      });
      child.on('close', () => {
        clearTimeout(timer);
        if (asking.get(request.id) === child) asking.delete(request.id);
        try {
          resolve(JSON.parse(out.trim() || '{}'));
        } catch {
          resolve(null);
        }
      });
      child.stdin.end(JSON.stringify({ ...request, directory }));
    });

  const decide = async (request) => {
    const decision = await ask(request);
    // No decision: OpenCode's own prompt stays.
    if (!decision || !REPLIES.includes(decision.reply)) return;
    const body = { reply: decision.reply };
    if (typeof decision.message === 'string' && decision.message) body.message = decision.message;
    // This route takes the message the model is told; the older one drops it.
    await client._client.post({ url: '/permission/{requestID}/reply', path: { requestID: request.id }, body, headers: { 'Content-Type': 'application/json' } });
  };

  return {
    event: async ({ event }) => {
      if (event.type === 'permission.replied') {
        // Answered in OpenCode (or by us): the hook's question is withdrawn.
        const child = asking.get(event.properties.requestID);
        if (child) {
          asking.delete(event.properties.requestID);
          end(child);
        }
        return;
      }
      if (event.type !== 'permission.asked') return;
      // Not awaited: a person may take minutes, and no event needs to wait for them.
      decide(event.properties).catch(() => undefined);
    },
  };
};
`;
}

function commandIn(text: string): { command: string; timeout: number | null } | null {
  if (!text.startsWith(MARK)) return null;
  const command = /^const COMMAND = (".*");$/m.exec(text)?.[1];
  const timeout = /^const TIMEOUT_SECONDS = (\d+);$/m.exec(text)?.[1];
  if (command === undefined) return null;
  const parsed: unknown = JSON.parse(command);
  return typeof parsed === 'string' && isOurCommand(parsed, 'opencode') ? { command: parsed, timeout: timeout === undefined ? null : Number(timeout) } : null;
}

function installed(text: string | null): Installed[] {
  const found = text === null ? null : commandIn(text);
  return found ? [{ event: EVENT, ...found }] : [];
}

/** The plugin file as wanted: written whole, or removed (null) when no event is wanted; a file not ours is refused. */
function merge(text: string | null, desired: Desired): Merged {
  if (text !== null && text.trim() !== '' && !text.startsWith(MARK)) {
    return { ok: false, why: 'was not written by elicitly-companion; move it (or name your plugin otherwise), nothing was changed' };
  }
  const wanted = desired.events.includes(EVENT) ? (({ command, timeout }) => pluginText(command, timeout))(hookEntry(desired, EVENT)) : null;
  const had = text !== null && text.trim() !== '';
  if (wanted === null) return had ? { ok: true, text: null, changes: [`removed ${EVENT} (the plugin file)`] } : { ok: true, text: text ?? '', changes: [] };
  if (text === wanted) return { ok: true, text, changes: [] };
  const { command, timeout } = hookEntry(desired, EVENT);
  return { ok: true, text: wanted, changes: [`${had ? 'updated' : 'added'} ${EVENT}: ${command} (timeout ${timeout} s)`] };
}

const SETTINGS: HostSettings = {
  installed,
  merge,
  unmerge: (text) => merge(text, { host: opencode, node: '', script: '', events: [], waitSeconds: 0, waitingDir: '' }),
};

export const opencode: HookHost = {
  id: 'opencode',
  name: 'OpenCode',
  binary: 'opencode',
  events: [EVENT],
  defaultEvents: [EVENT],
  answeredEvents: [],
  withCompanions: (events) => [...events],
  matcher: () => undefined,
  configDir: { env: 'OPENCODE_CONFIG_DIR', home: '.config/opencode' },
  settingsFile: { user: 'plugin/elicitly.js', project: ['.opencode', 'plugin', 'elicitly.js'] },
  settings: async () => SETTINGS,
  installNote: 'OpenCode loads the plugin when it next starts. `opencode run` rejects every permission request by itself: the plugin serves its TUI and `opencode serve`.',
  parse,
  shellTools: new Set(['bash']),
  editable: () => false,
  output,
};

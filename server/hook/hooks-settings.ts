// The hook entries in a host's settings, merged in and taken out without touching anyone else's: the events and the
// command both hosts share, and Claude Code's settings.json (`hooks.<Event>[].hooks[]`); Codex's config.toml is
// hooks-codex-config.ts. Pure text in, text out; an entry is ours when its command is `… hook --host <host> [--wait N]
// <Event>`.
import { isObject } from '../../shared/field-issues.js';
import type { HostAgent } from '../../shared/permission.js';
import { isAnsweredEvent, type HookEvent } from './hook-input.js';

export const HOST_EVENTS: Record<HostAgent, readonly HookEvent[]> = {
  'claude-code': ['PreToolUse', 'PermissionRequest', 'Elicitation', 'PostToolUse', 'PostToolUseFailure'],
  codex: ['PreToolUse', 'PermissionRequest'],
};
export const DEFAULT_EVENTS: Record<HostAgent, readonly HookEvent[]> = {
  'claude-code': ['PermissionRequest', 'Elicitation', 'PostToolUse', 'PostToolUseFailure'],
  codex: ['PermissionRequest'],
};

/**
 * The events installed along with another, whatever `--events` says: Claude Code draws its own prompt while the
 * PermissionRequest hook waits, and only PostToolUse / PostToolUseFailure tell that the person answered there.
 */
export function withCompanions(host: HostAgent, events: readonly HookEvent[]): HookEvent[] {
  const all = [...events];
  if (host === 'claude-code' && events.includes('PermissionRequest')) {
    for (const event of ['PostToolUse', 'PostToolUseFailure'] as const) if (!all.includes(event)) all.push(event);
  }
  return all;
}

/** A PostToolUse hook only withdraws a request: its host gives it this long. */
export const ANSWERED_TIMEOUT_SECONDS = 10;
export const DEFAULT_WAIT_SECONDS = 110;
/** The host kills a hook at its timeout; the hook's own wait ends this much earlier, so it always answers first. */
export const TIMEOUT_MARGIN_SECONDS = 10;

/** POSIX shell quoting: both hosts run a hook's command through a shell. */
export function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * The command and timeout of one of our hooks. A PostToolUse hook runs after every tool call, so its command starts Node
 * only while a prompt is waited on (`waiting-prompts.ts`): an empty folder costs a `ls`, not a process.
 */
export function hookEntry(desired: Pick<Desired, 'node' | 'script' | 'host' | 'waitSeconds' | 'waitingDir'>, event: HookEvent): { command: string; timeout: number } {
  const node = [desired.node, desired.script].map(shellQuote).join(' ');
  if (isAnsweredEvent(event)) {
    return { command: `[ -z "$(ls -A ${shellQuote(desired.waitingDir)} 2>/dev/null)" ] || ${node} hook --host ${desired.host} ${event}`, timeout: ANSWERED_TIMEOUT_SECONDS };
  }
  return { command: `${node} hook --host ${desired.host} --wait ${desired.waitSeconds} ${event}`, timeout: desired.waitSeconds + TIMEOUT_MARGIN_SECONDS };
}

const OURS = /\shook --host (claude-code|codex)(?: --wait (\d+))? (PreToolUse|PermissionRequest|Elicitation|PostToolUse|PostToolUseFailure)$/;

export function isOurCommand(command: unknown, host: HostAgent): boolean {
  return typeof command === 'string' && OURS.exec(command)?.[1] === host;
}

export interface Installed {
  event: HookEvent;
  command: string;
  timeout: number | null;
}

export type Merged = { ok: true; text: string; changes: string[] } | { ok: false; why: string };

export interface Desired {
  host: HostAgent;
  node: string;
  script: string;
  events: readonly HookEvent[];
  waitSeconds: number;
  /** The state dir's folder of waited-on prompts, which the PostToolUse hooks' guard looks at. */
  waitingDir: string;
}

/**
 * Which tools a tool event is asked for. Claude Code's PreToolUse runs before every tool, read-only ones included, so it
 * is narrowed to the ones that change something; its PermissionRequest runs only where Claude Code would prompt.
 */
export function matcher(host: HostAgent, event: HookEvent): string | undefined {
  if (event === 'Elicitation') return undefined;
  if (host === 'claude-code' && event === 'PreToolUse') return 'Bash|Edit|MultiEdit|Write|NotebookEdit|mcp__.*';
  return '*';
}

type Json = Record<string, unknown>;

function entry(desired: Desired, event: HookEvent): Json {
  return { type: 'command', ...hookEntry(desired, event) };
}

/** Our entries taken out of one event's groups; a group left with no hook is dropped with them. */
function withoutOurs(groups: unknown[], host: HostAgent): { groups: unknown[]; removed: number } {
  let removed = 0;
  const kept: unknown[] = [];
  for (const group of groups) {
    if (!isObject(group) || !Array.isArray(group.hooks)) {
      kept.push(group);
      continue;
    }
    const hooks = group.hooks.filter((h) => !(isObject(h) && isOurCommand(h.command, host)));
    removed += group.hooks.length - hooks.length;
    if (hooks.length === group.hooks.length) kept.push(group);
    else if (hooks.length > 0) kept.push({ ...group, hooks });
  }
  return { groups: kept, removed };
}

function parseSettings(text: string | null): { ok: true; settings: Json } | { ok: false; why: string } {
  if (text === null || text.trim() === '') return { ok: true, settings: {} };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return { ok: false, why: `is not valid JSON (${error instanceof Error ? error.message : String(error)}); fix or move it, nothing was changed` };
  }
  if (!isObject(parsed)) return { ok: false, why: 'is not a JSON object; nothing was changed' };
  if (parsed.hooks !== undefined && !isObject(parsed.hooks)) return { ok: false, why: '"hooks" is not an object; nothing was changed' };
  return { ok: true, settings: parsed };
}

const serialize = (settings: Json) => `${JSON.stringify(settings, null, 2)}\n`;

/** The installed entries of `host` in a Claude Code settings.json. */
export function claudeInstalled(text: string | null, host: HostAgent = 'claude-code'): Installed[] {
  const parsed = parseSettings(text);
  if (!parsed.ok || !isObject(parsed.settings.hooks)) return [];
  const out: Installed[] = [];
  for (const [event, groups] of Object.entries(parsed.settings.hooks)) {
    if (!Array.isArray(groups)) continue;
    for (const group of groups) {
      if (!isObject(group) || !Array.isArray(group.hooks)) continue;
      for (const h of group.hooks) {
        if (isObject(h) && isOurCommand(h.command, host)) out.push({ event: event as HookEvent, command: String(h.command), timeout: typeof h.timeout === 'number' ? h.timeout : null });
      }
    }
  }
  return out;
}

/**
 * Claude Code's settings.json with exactly `desired.events` hooked to this install: an entry already as wanted stays
 * where it is, a stale one (another wait, another path, an event no longer wanted) is replaced or removed, and every
 * other key, hook and group is left as it was.
 */
export function mergeClaudeSettings(text: string | null, desired: Desired): Merged {
  const parsed = parseSettings(text);
  if (!parsed.ok) return parsed;
  const settings = parsed.settings;
  const hooks: Json = isObject(settings.hooks) ? { ...settings.hooks } : {};
  const changes: string[] = [];
  for (const event of HOST_EVENTS[desired.host]) {
    const groups = Array.isArray(hooks[event]) ? (hooks[event] as unknown[]) : [];
    const wanted = desired.events.includes(event) ? entry(desired, event) : null;
    const ours = claudeInstalled(JSON.stringify({ hooks: { [event]: groups } }), desired.host);
    const current = ours[0];
    if (wanted && ours.length === 1 && current && current.command === wanted.command && current.timeout === wanted.timeout) continue;
    if (!wanted && ours.length === 0) continue;
    const { groups: kept } = withoutOurs(groups, desired.host);
    if (wanted) {
      const m = matcher(desired.host, event);
      kept.push({ ...(m !== undefined ? { matcher: m } : {}), hooks: [wanted] });
      changes.push(`${ours.length ? 'updated' : 'added'} ${event}: ${String(wanted.command)} (timeout ${String(wanted.timeout)} s)`);
    } else {
      changes.push(`removed ${event}`);
    }
    if (kept.length > 0) hooks[event] = kept;
    else delete hooks[event];
  }
  if (changes.length === 0) return { ok: true, text: text ?? '', changes };
  const next: Json = { ...settings };
  if (Object.keys(hooks).length > 0) next.hooks = hooks;
  else delete next.hooks;
  return { ok: true, text: serialize(next), changes };
}

/** Claude Code's settings.json without this install's entries; everything else as it was. */
export function unmergeClaudeSettings(text: string | null, host: HostAgent = 'claude-code'): Merged {
  return mergeClaudeSettings(text, { host, node: '', script: '', events: [], waitSeconds: 0, waitingDir: '' });
}

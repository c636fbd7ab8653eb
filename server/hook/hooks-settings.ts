// The hook entries in a host's settings, merged in and taken out without touching anyone else's: the command every
// host runs, and the JSON settings files whose hooks are `hooks.<Event>[].hooks[]` (Claude Code's settings.json and the
// like); Codex's config.toml is hooks-codex-config.ts. Pure text in, text out; an entry is ours when its command is
// `… hook --host <host> [--wait N] <Event>`.
import { isObject } from '../../shared/field-issues.js';
import type { HookEvent, HookHost } from './hosts/hook-host.js';

/** A PostToolUse hook only withdraws a request: its host gives it this long. */
export const ANSWERED_TIMEOUT_SECONDS = 10;
export const DEFAULT_WAIT_SECONDS = 110;
/** The host kills a hook at its timeout; the hook's own wait ends this much earlier, so it always answers first. */
export const TIMEOUT_MARGIN_SECONDS = 10;

/** POSIX shell quoting: the hosts run a hook's command through a shell. */
export function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * The command and timeout of one of our hooks. A PostToolUse hook runs after every tool call, so its command starts Node
 * only while a prompt is waited on (`waiting-prompts.ts`): an empty folder costs a `ls`, not a process.
 */
export function hookEntry(desired: Pick<Desired, 'node' | 'script' | 'host' | 'waitSeconds' | 'waitingDir' | 'env'>, event: HookEvent): { command: string; timeout: number } {
  const assignments = Object.entries(desired.env ?? {}).map(([name, value]) => `${name}=${shellQuote(value)} `).join('');
  const node = assignments + [desired.node, desired.script].map(shellQuote).join(' ');
  const host = desired.host.id;
  if (desired.host.answeredEvents.includes(event)) {
    return { command: `[ -z "$(ls -A ${shellQuote(desired.waitingDir)} 2>/dev/null)" ] || ${node} hook --host ${host} ${event}`, timeout: ANSWERED_TIMEOUT_SECONDS };
  }
  return { command: `${node} hook --host ${host} --wait ${desired.waitSeconds} ${event}`, timeout: desired.waitSeconds + TIMEOUT_MARGIN_SECONDS };
}

const OURS = /\shook --host ([a-z][a-z0-9-]*)(?: --wait (\d+))? ([A-Za-z][A-Za-z0-9._-]*)$/;

export function isOurCommand(command: unknown, host: string): boolean {
  return typeof command === 'string' && OURS.exec(command)?.[1] === host;
}

/** The script of one of our commands: the word before `hook --host`, whatever comes first (node, or the guard and node). */
export function scriptOf(command: string): string | undefined {
  return /('[^']*'|\S+) hook --host \S+(?: --wait \d+)? \S+$/.exec(command)?.[1]?.replace(/^'|'$/g, '');
}

export interface Installed {
  event: HookEvent;
  command: string;
  /** In seconds, whatever unit the file keeps. */
  timeout: number | null;
}

/** A settings file's new text, or null: the file goes (a file that is ours alone, with nothing left in it). */
export type Merged = { ok: true; text: string | null; changes: string[] } | { ok: false; why: string };

export interface Desired {
  host: HookHost;
  node: string;
  script: string;
  events: readonly HookEvent[];
  waitSeconds: number;
  /** The state dir's folder of waited-on prompts, which the PostToolUse hooks' guard looks at. */
  waitingDir: string;
  /** Variables set in the command itself (ELICITLY_PORT, ELICITLY_STATE_DIR), so the hook reaches this hub. */
  env?: Readonly<Record<string, string>>;
}

type Json = Record<string, unknown>;

/**
 * How a host's JSON settings write one hook: its timeout in seconds (Claude Code) or milliseconds (Gemini CLI), and a
 * `name` where the host shows one.
 */
export interface JsonHookFormat {
  timeoutUnit: 's' | 'ms';
  name?: string;
}

export const SECONDS: JsonHookFormat = { timeoutUnit: 's' };

function entry(desired: Desired, event: HookEvent, format: JsonHookFormat): Json {
  const { command, timeout } = hookEntry(desired, event);
  return { type: 'command', ...(format.name !== undefined ? { name: format.name } : {}), command, timeout: format.timeoutUnit === 'ms' ? timeout * 1000 : timeout };
}

/** Our entries taken out of one event's groups; a group left with no hook is dropped with them. */
function withoutOurs(groups: unknown[], host: string): { groups: unknown[]; removed: number } {
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

/** A JSON settings file as an object (none yet: empty); one that is not, or whose `hooks` is not an object, is refused. */
export function parseJsonSettings(text: string | null): { ok: true; settings: Json } | { ok: false; why: string } {
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

function ourEntries(hooks: Json, host: string): { event: HookEvent; hook: Json }[] {
  const out: { event: HookEvent; hook: Json }[] = [];
  for (const [event, groups] of Object.entries(hooks)) {
    if (!Array.isArray(groups)) continue;
    for (const group of groups) {
      if (!isObject(group) || !Array.isArray(group.hooks)) continue;
      for (const h of group.hooks) if (isObject(h) && isOurCommand(h.command, host)) out.push({ event, hook: h });
    }
  }
  return out;
}

/** The installed entries of `host` in a JSON settings file. */
export function jsonInstalled(text: string | null, host: string, format: JsonHookFormat = SECONDS): Installed[] {
  const parsed = parseJsonSettings(text);
  if (!parsed.ok || !isObject(parsed.settings.hooks)) return [];
  return ourEntries(parsed.settings.hooks, host).map(({ event, hook }) => {
    const timeout = typeof hook.timeout === 'number' ? (format.timeoutUnit === 'ms' ? hook.timeout / 1000 : hook.timeout) : null;
    return { event, command: String(hook.command), timeout };
  });
}

/**
 * A JSON settings file with exactly `desired.events` hooked to this install: an entry already as wanted stays where it
 * is, a stale one (another wait, another path, an event no longer wanted) is replaced or removed, and every other key,
 * hook and group is left as it was.
 */
export function mergeJsonSettings(text: string | null, desired: Desired, format: JsonHookFormat = SECONDS): Merged {
  const parsed = parseJsonSettings(text);
  if (!parsed.ok) return parsed;
  const settings = parsed.settings;
  const hooks: Json = isObject(settings.hooks) ? { ...settings.hooks } : {};
  const changes: string[] = [];
  const host = desired.host.id;
  for (const event of desired.host.events) {
    const groups = Array.isArray(hooks[event]) ? (hooks[event] as unknown[]) : [];
    const wanted = desired.events.includes(event) ? entry(desired, event, format) : null;
    const ours = ourEntries({ [event]: groups }, host);
    if (wanted && ours.length === 1 && JSON.stringify(ours[0]?.hook) === JSON.stringify(wanted)) continue;
    if (!wanted && ours.length === 0) continue;
    const { groups: kept } = withoutOurs(groups, host);
    if (wanted) {
      const m = desired.host.matcher(event);
      kept.push({ ...(m !== undefined ? { matcher: m } : {}), hooks: [wanted] });
      changes.push(`${ours.length ? 'updated' : 'added'} ${event}: ${String(wanted.command)} (timeout ${hookEntry(desired, event).timeout} s)`);
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

/** A desire for none of this install's entries: what an uninstall merges. */
export function nothingOf(host: HookHost): Desired {
  return { host, node: '', script: '', events: [], waitSeconds: 0, waitingDir: '' };
}

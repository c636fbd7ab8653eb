// What the hook bridge knows of one agent host: everything host-specific is one object of this interface, in one
// module (`claude-code.ts`, `codex.ts`, …), and the hosts are registered as data (`registry.ts`). The rest of
// server/hook/ (the hook command, the request a person reviews, the installer) is the same for every host.
import type { AskResult } from '../../../shared/ask-input.js';
import type { PermissionRequest, PermissionResult } from '../../../shared/permission.js';
import type { Desired, Installed, Merged } from '../hooks-settings.js';

/** A host's hook event, by the host's own name for it (`PermissionRequest`, `BeforeTool`). */
export type HookEvent = string;

/** The JSON a hook prints for its host. */
export type HookOutput = Record<string, unknown>;

/**
 * A tool call a host asks about, the same for every host whatever its stdin looked like: the session, the folder, the
 * tool as the host names it and its input as the host would run it.
 */
export interface ToolPrompt {
  sessionId: string;
  cwd: string;
  tool: string;
  input: Record<string, unknown>;
  /** The host's transcript, where it names the call (Claude Code's PermissionRequest has no call id of its own). */
  transcriptPath?: string | null;
  /** The call's id, when the host's stdin has one. */
  toolUseId?: string;
  /** The host's own "always allow" suggestions (Claude Code's `permission_suggestions`), returned verbatim when chosen. */
  suggestions?: Record<string, unknown>[];
}

/** Another MCP server's form, before the host draws its dialog (Claude Code's `Elicitation`). */
export interface ElicitationPrompt {
  sessionId: string;
  cwd: string;
  server: string;
  message: string;
  mode?: string;
  requestedSchema?: unknown;
}

/**
 * The host's stdin, checked: a tool call to ask about, another server's form, or the news that the host ran a call
 * (the person answered its prompt in the terminal). A mismatch names the field, so the one stderr line says what to fix.
 */
export type ParsedHookInput =
  | { ok: true; kind: 'tool'; event: HookEvent; prompt: ToolPrompt }
  | { ok: true; kind: 'elicitation'; event: HookEvent; prompt: ElicitationPrompt }
  | { ok: true; kind: 'answered'; event: HookEvent; sessionId: string; toolUseId: string }
  | { ok: false; issue: string };

/** `hooks install --scope`: the person's own settings, or the project's (shared with whoever clones it). */
export type Scope = 'user' | 'project';

/** Where the hosts keep their settings: each host's user folder by its id (from its variable or HOME), and the cwd. */
export interface HostDirs {
  user: Readonly<Record<string, string>>;
  cwd: string;
}

/** Reading and changing a host's settings file: pure text in, text out (the installer does the file work). */
export interface HostSettings {
  installed(text: string | null): Installed[];
  merge(text: string | null, desired: Desired): Merged;
  unmerge(text: string | null): Merged;
}

export interface HookHost {
  /** What `hook --host` and `hooks install` name, and what rules match as the agent. */
  id: string;
  /** The host as a person knows it: every surface shows this (the request carries it). */
  name: string;
  /** Its command, as found on PATH (`hooks status` asks it for `--version`). */
  binary: string;
  /** Every event the bridge handles for this host, and those installed when `--events` names none. */
  events: readonly HookEvent[];
  defaultEvents: readonly HookEvent[];
  /** The events installed along with `events` whatever `--events` says (the guards that withdraw a prompt). */
  withCompanions(events: readonly HookEvent[]): HookEvent[];
  /** Events that only say a call ran: their hook starts Node only while a prompt is waited on. */
  answeredEvents: readonly HookEvent[];
  /** Which tools an event is asked for (the settings' matcher); undefined: the event takes none. */
  matcher(event: HookEvent): string | undefined;
  /**
   * The user settings folder: `$<env>` when set (`$<env>/<home>` when the variable names a home, `envHoldsHome`),
   * else `~/<home>`; the file in it, and the file in a project.
   */
  configDir: { env: string; home: string; envHoldsHome?: boolean };
  settingsFile: { user: string; project: readonly string[] };
  /** Loaded by the installer only (a parser may come with it). */
  settings(): Promise<HostSettings>;
  /** Said after an install that added hooks, when the host needs the person to do something before it runs them. */
  installNote?: string;
  /** The stdin of `event`, checked. */
  parse(event: HookEvent, raw: unknown): ParsedHookInput;
  /** Tools whose input is a shell command (`command`, or `cmd`). */
  shellTools: ReadonlySet<string>;
  /** Whether the host runs an edited input when the hook answers `event`. */
  editable(event: HookEvent): boolean;
  /** The decision as the host reads it on stdout; null: print nothing (the host goes on as if no hook answered). */
  output(request: PermissionRequest, result: PermissionResult, alwaysThisSession: boolean): HookOutput | null;
  /** What to print when the hook decides nothing, for a host that reads an empty stdout some other way. */
  silence?: HookOutput;
  /** The answer to another server's form, for a host that bridges them. */
  elicitationOutput?(result: AskResult): HookOutput | null;
  /** The id of the call a prompt is about when the stdin has none (Claude Code's transcript), so a guard can withdraw it. */
  findToolUseId?(event: HookEvent, prompt: ToolPrompt): Promise<string | null>;
}

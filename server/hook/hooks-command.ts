// `elicitly-companion hooks install|uninstall|status`: puts this install's hook command into a host's settings, takes it
// out, or says where it is. What it changed is printed, line by line, with the backup it made, and only once it is
// written: a refusal (exit 1) says why and leaves every file as it was.
import { existsSync } from 'node:fs';
import { readSettings, removeSettings, resolveSettings, settingsPath, writeSettings } from './hooks-files.js';
import { scriptOf, type Merged } from './hooks-settings.js';
import type { HookEvent, HookHost, HostDirs, Scope } from './hosts/hook-host.js';
import { HOOK_HOSTS } from './hosts/registry.js';

export type HooksAction =
  | { kind: 'install'; host: HookHost; scope: Scope; events: HookEvent[]; waitSeconds: number }
  | { kind: 'uninstall'; host: HookHost; scope: Scope }
  | { kind: 'status' };

export interface HooksCommandOptions {
  action: HooksAction;
  dirs: HostDirs;
  /** This install's node and main.js, written into the hook command. */
  node: string;
  script: string;
  /** The state dir's folder of waited-on prompts (`waiting-prompts.ts`), written into the PostToolUse hooks' guard. */
  waitingDir: string;
  /** Written into the hook command (config's `hookEnv`). */
  env?: Readonly<Record<string, string>>;
  /** What `hooks status` finds beyond the files: each host's version on PATH, and whether a hook would reach a hub. */
  probe?: StatusProbe;
}

export interface StatusProbe {
  /** The host's `--version` line, or null when it is not on PATH (or does not answer in time). */
  version(host: HookHost): Promise<string | null>;
  /** One line: the hub a hook would reach now, or what happens when there is none. */
  hub(): Promise<string>;
}

export type HooksCommandEnd = { code: number; text: string };

const SCOPES: readonly Scope[] = ['user', 'project'];

function change(host: HookHost, path: string, projectDir: string | undefined, merge: (text: string | null) => Merged): HooksCommandEnd {
  const file = resolveSettings(path, projectDir);
  if (!file.ok) return { code: 1, text: `${file.why}; nothing was changed\n` };
  const merged = merge(readSettings(file));
  if (!merged.ok) return { code: 1, text: `${path} ${merged.why}\n` };
  if (merged.changes.length === 0) return { code: 0, text: `${path}: already as wanted, nothing changed\n` };
  const backup = merged.text === null ? removeSettings(file) : writeSettings(file, merged.text);
  const lines = [`${path}:`];
  if (file.linked) lines.push(`  written through the symbolic link to ${file.target}`);
  lines.push(...merged.changes.map((c) => `  ${c}`));
  lines.push(backup ? `  backup of the previous file: ${backup}` : '  (a new file: nothing to back up)');
  if (host.installNote && merged.changes.some((c) => !c.startsWith('removed'))) lines.push(`  ${host.installNote}`);
  return { code: 0, text: `${lines.join('\n')}\n` };
}

export async function runHooksCommand(options: HooksCommandOptions): Promise<HooksCommandEnd> {
  const { action, dirs } = options;
  if (action.kind === 'status') return { code: 0, text: await status(dirs, options.probe) };
  const { host } = action;
  const path = settingsPath(host, action.scope, dirs);
  if (path === undefined) return { code: 2, text: `cannot tell where ${host.id} keeps its ${action.scope} settings: HOME is not set (nor ${host.configDir.env})\n` };
  // A project's settings are written only inside the project (hooks-files.ts says why).
  const projectDir = action.scope === 'project' ? dirs.cwd : undefined;
  const settings = await host.settings();
  if (action.kind === 'uninstall') return change(host, path, projectDir, (text) => settings.unmerge(text));
  const desired = { host, node: options.node, script: options.script, events: host.withCompanions(action.events), waitSeconds: action.waitSeconds, waitingDir: options.waitingDir, ...(options.env ? { env: options.env } : {}) };
  const end = change(host, path, projectDir, (text) => settings.merge(text, desired));
  // An npx run lives in a cache that is cleaned now and then: the hook would then point at nothing.
  const warning = /[\\/]_npx[\\/]/.test(options.script)
    ? `warning: ${options.script} is in npx's cache, which npm may clean; install elicitly-companion (npm i -g elicitly-companion) and run this again from there\n`
    : '';
  return { code: end.code, text: end.text + warning };
}

async function status(dirs: HostDirs, probe: StatusProbe | undefined): Promise<string> {
  const lines: string[] = probe ? [`hub: ${await probe.hub()}`] : [];
  const versions = probe ? await Promise.all(HOOK_HOSTS.map((host) => probe.version(host))) : [];
  for (const [i, host] of HOOK_HOSTS.entries()) {
    const settings = await host.settings();
    if (probe) lines.push(`${host.id}: ${versions[i] === null ? `${host.name} not found (no \`${host.binary}\` on PATH)` : `${host.name} ${versions[i]}`}`);
    for (const scope of SCOPES) {
      const path = settingsPath(host, scope, dirs);
      if (path === undefined) {
        lines.push(`${host.id} (${scope}): unknown location (HOME is not set)`);
        continue;
      }
      const file = resolveSettings(path);
      if (!file.ok) {
        lines.push(`${host.id} (${scope}): ${file.why}`);
        continue;
      }
      let text: string | null;
      try {
        text = readSettings(file);
      } catch (error) {
        lines.push(`${host.id} (${scope}): ${path}: cannot be read (${error instanceof Error ? error.message : String(error)})`);
        continue;
      }
      const ours = settings.installed(text);
      if (ours.length === 0) {
        lines.push(`${host.id} (${scope}): not installed (${path}${text === null ? ', no such file' : ''})`);
        continue;
      }
      lines.push(`${host.id} (${scope}): installed in ${path}`);
      for (const hook of ours) {
        const script = scriptOf(hook.command);
        const missing = script !== undefined && !existsSync(script) ? ` (missing: ${script}; run hooks install again)` : '';
        lines.push(`  ${hook.event}: timeout ${hook.timeout ?? '?'} s${missing}`);
      }
    }
  }
  return `${lines.join('\n')}\n`;
}

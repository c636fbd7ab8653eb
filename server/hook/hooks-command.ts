// `elicitly-companion hooks install|uninstall|status`: puts this install's hook command into a host's settings, takes it
// out, or says where it is. What it changed is printed, line by line, with the backup it made, and only once it is
// written: a refusal (exit 1) says why and leaves every file as it was.
import { existsSync } from 'node:fs';
import type { HostAgent } from '../../shared/permission.js';
import type { HookEvent } from './hook-input.js';
import { codexInstalled, mergeCodexConfig, unmergeCodexConfig } from './hooks-codex-config.js';
import { readSettings, resolveSettings, settingsPath, writeSettings, type HostDirs, type Scope } from './hooks-files.js';
import { claudeInstalled, mergeClaudeSettings, unmergeClaudeSettings, withCompanions, type Installed, type Merged } from './hooks-settings.js';

export type HooksAction =
  | { kind: 'install'; host: HostAgent; scope: Scope; events: HookEvent[]; waitSeconds: number }
  | { kind: 'uninstall'; host: HostAgent; scope: Scope }
  | { kind: 'status' };

export interface HooksCommandOptions {
  action: HooksAction;
  dirs: HostDirs;
  /** This install's node and main.js, written into the hook command. */
  node: string;
  script: string;
  /** The state dir's folder of waited-on prompts (`waiting-prompts.ts`), written into the PostToolUse hooks' guard. */
  waitingDir: string;
}

export type HooksCommandEnd = { code: number; text: string };

const HOSTS: readonly HostAgent[] = ['claude-code', 'codex'];
const SCOPES: readonly Scope[] = ['user', 'project'];

function installed(host: HostAgent, text: string | null): Installed[] {
  return host === 'claude-code' ? claudeInstalled(text) : codexInstalled(text);
}

function change(host: HostAgent, path: string, projectDir: string | undefined, merge: (text: string | null) => Merged): HooksCommandEnd {
  const file = resolveSettings(path, projectDir);
  if (!file.ok) return { code: 1, text: `${file.why}; nothing was changed\n` };
  const merged = merge(readSettings(file));
  if (!merged.ok) return { code: 1, text: `${path} ${merged.why}\n` };
  if (merged.changes.length === 0) return { code: 0, text: `${path}: already as wanted, nothing changed\n` };
  const backup = writeSettings(file, merged.text);
  const lines = [`${path}:`];
  if (file.linked) lines.push(`  written through the symbolic link to ${file.target}`);
  lines.push(...merged.changes.map((c) => `  ${c}`));
  lines.push(backup ? `  backup of the previous file: ${backup}` : '  (a new file: nothing to back up)');
  if (host === 'codex' && merged.changes.some((c) => !c.startsWith('removed'))) lines.push('  Codex asks you to review and trust new hooks before it runs them: accept them at its next start.');
  return { code: 0, text: `${lines.join('\n')}\n` };
}

export function runHooksCommand(options: HooksCommandOptions): HooksCommandEnd {
  const { action, dirs } = options;
  if (action.kind === 'status') return { code: 0, text: status(dirs) };
  const path = settingsPath(action.host, action.scope, dirs);
  if (path === undefined) return { code: 2, text: `cannot tell where ${action.host} keeps its ${action.scope} settings: HOME is not set (nor CLAUDE_CONFIG_DIR / CODEX_HOME)\n` };
  // A project's settings are written only inside the project (hooks-files.ts says why).
  const projectDir = action.scope === 'project' ? dirs.cwd : undefined;
  if (action.kind === 'uninstall') return change(action.host, path, projectDir, (text) => (action.host === 'claude-code' ? unmergeClaudeSettings(text) : unmergeCodexConfig(text)));
  const desired = { host: action.host, node: options.node, script: options.script, events: withCompanions(action.host, action.events), waitSeconds: action.waitSeconds, waitingDir: options.waitingDir };
  const end = change(action.host, path, projectDir, (text) => (action.host === 'claude-code' ? mergeClaudeSettings(text, desired) : mergeCodexConfig(text, desired)));
  // An npx run lives in a cache that is cleaned now and then: the hook would then point at nothing.
  const warning = /[\\/]_npx[\\/]/.test(options.script)
    ? `warning: ${options.script} is in npx's cache, which npm may clean; install elicitly-companion (npm i -g elicitly-companion) and run this again from there\n`
    : '';
  return { code: end.code, text: end.text + warning };
}

function status(dirs: HostDirs): string {
  const lines: string[] = [];
  for (const host of HOSTS) {
    for (const scope of SCOPES) {
      const path = settingsPath(host, scope, dirs);
      if (path === undefined) {
        lines.push(`${host} (${scope}): unknown location (HOME is not set)`);
        continue;
      }
      const file = resolveSettings(path);
      if (!file.ok) {
        lines.push(`${host} (${scope}): ${file.why}`);
        continue;
      }
      let text: string | null;
      try {
        text = readSettings(file);
      } catch (error) {
        lines.push(`${host} (${scope}): ${path}: cannot be read (${error instanceof Error ? error.message : String(error)})`);
        continue;
      }
      const ours = installed(host, text);
      if (ours.length === 0) {
        lines.push(`${host} (${scope}): not installed (${path}${text === null ? ', no such file' : ''})`);
        continue;
      }
      lines.push(`${host} (${scope}): installed in ${path}`);
      for (const hook of ours) {
        // The script is the word before `hook --host`, whatever comes first (node, or the PostToolUse guard and node).
        const script = /('[^']*'|\S+) hook --host \S+(?: --wait \d+)? \S+$/.exec(hook.command)?.[1]?.replace(/^'|'$/g, '');
        const missing = script !== undefined && !existsSync(script) ? ` (missing: ${script}; run hooks install again)` : '';
        lines.push(`  ${hook.event}: timeout ${hook.timeout ?? '?'} s${missing}`);
      }
    }
  }
  return `${lines.join('\n')}\n`;
}

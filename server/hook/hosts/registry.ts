// The agent hosts whose prompts the hook bridges, as data: adding a host is its module here and its tests.
import { claudeCode } from './claude-code.js';
import { codex } from './codex.js';
import { copilotCli } from './copilot-cli.js';
import { geminiCli } from './gemini-cli.js';
import { opencode } from './opencode.js';
import type { HookHost } from './hook-host.js';

export const HOOK_HOSTS: readonly HookHost[] = [claudeCode, codex, geminiCli, copilotCli, opencode];

export const HOST_IDS: readonly string[] = HOOK_HOSTS.map((host) => host.id);

export function hookHost(id: string): HookHost | undefined {
  return HOOK_HOSTS.find((host) => host.id === id);
}

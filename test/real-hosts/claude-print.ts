import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BASE_ENV, makeSandbox, runHost, type HostRun, type Sandbox } from './host-process.js';

export const CLAUDE_VERSION = '2.1.332';
const API_KEY = 'sk-ant-mock-real-hosts-000000000000';

export interface ClaudeSandbox extends Sandbox {
  /** CLAUDE_CONFIG_DIR (this version keeps its .claude.json inside it). */
  config: string;
}

/**
 * A throw-away HOME and CLAUDE_CONFIG_DIR, seeded so Claude Code asks nothing of its own before the prompt: onboarding
 * done, the mock's API key approved (it stores the key's last 20 characters), the project's folder trusted.
 */
export function claudeSandbox(): ClaudeSandbox {
  const base = makeSandbox('claude');
  const config = join(base.home, '.claude');
  mkdirSync(config, { recursive: true });
  const seed = {
    hasCompletedOnboarding: true,
    lastOnboardingVersion: CLAUDE_VERSION,
    theme: 'dark',
    customApiKeyResponses: { approved: [API_KEY.slice(-20)], rejected: [] },
    projects: { [base.work]: { allowedTools: [], hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true } },
  };
  writeFileSync(join(config, '.claude.json'), JSON.stringify(seed, null, 2));
  return { ...base, config };
}

/** Claude Code's environment: the mock as its API, no traffic elsewhere, and the companion's port and state dir for the hook it runs. */
export function claudeEnv(sandbox: ClaudeSandbox, apiUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    ...BASE_ENV,
    HOME: sandbox.home,
    CLAUDE_CONFIG_DIR: sandbox.config,
    ANTHROPIC_BASE_URL: apiUrl,
    ANTHROPIC_API_KEY: API_KEY,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_ERROR_REPORTING: '1',
    // MCP tools in `tools` directly, not deferred behind a ToolSearch round the mock would have to play.
    ENABLE_TOOL_SEARCH: 'false',
    ...extra,
  };
}

export interface ClaudePrint extends HostRun {
  /** The stream-json lines it printed, each with `at`: when it arrived. */
  events: (Record<string, unknown> & { at: number })[];
  /** The closing `result` event. */
  result: Record<string, unknown> | undefined;
}

/** `claude -p go --output-format stream-json --verbose …` in the sandbox's project, bounded. */
export async function claudePrint(bin: string, sandbox: ClaudeSandbox, env: Record<string, string>, args: readonly string[], timeoutMs = 90_000): Promise<ClaudePrint> {
  const run = await runHost(bin, ['-p', 'go', '--output-format', 'stream-json', '--verbose', ...args], { cwd: sandbox.work, env, timeoutMs });
  const events: ClaudePrint['events'] = [];
  for (const { at, line } of run.lines) {
    if (!line.trim().startsWith('{')) continue;
    try {
      events.push({ ...(JSON.parse(line) as Record<string, unknown>), at });
    } catch {
      // a partial line from a killed run
    }
  }
  return { ...run, events, result: events.findLast((e) => e.type === 'result') };
}

export interface HookCall {
  event: string;
  /** What the hook printed: the decision the host read. */
  stdout: string;
  exitCode: unknown;
  /** From the host's hook_started to its hook_response, as they arrived on the stream (needs --include-hook-events). */
  ms: number;
}

/** The hook calls the host reported (`--include-hook-events`), paired start to response. */
export function hookCalls(run: ClaudePrint): HookCall[] {
  const started = new Map(run.events.filter((e) => e.subtype === 'hook_started').map((e) => [e.hook_id, e.at]));
  return run.events
    .filter((e) => e.subtype === 'hook_response')
    .map((e) => ({ event: String(e.hook_event), stdout: String(e.stdout ?? ''), exitCode: e.exit_code, ms: e.at - (started.get(e.hook_id) ?? e.at) }));
}

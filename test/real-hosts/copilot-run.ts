import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BASE_ENV, makeSandbox, runHost, type HostRun, type Sandbox } from './host-process.js';
import type { MockChatCompletions, ToolResultSeen } from './mock-chat-completions.js';
import type { LoggedRequest } from './mock-http.js';

const API_KEY = 'sk-mock-real-hosts';
/** A well-known model id: the CLI takes its tool support and token limits from it, and sends it as `model`. */
export const COPILOT_MODEL = 'gpt-4.1';

export interface CopilotSandbox extends Sandbox {
  /** COPILOT_HOME: config, session state, logs, and `hooks/*.json`, the user hooks (they load without trusting the folder). */
  copilotHome: string;
}

/**
 * The unpacked CLI (~235 MB, unpacked by the npm loader on its first run, ~1 s) is kept out of the throw-away HOMEs
 * so that one copy serves every run: $COPILOT_CACHE_HOME when the test's environment sets it, else
 * `$ELICITLY_HOSTS_DIR/copilot-cache` next to the installed hosts, else `<os tmpdir>/elicitly-copilot-cache`.
 */
export function copilotCacheHome(): string {
  const hosts = process.env.ELICITLY_HOSTS_DIR;
  return process.env.COPILOT_CACHE_HOME ?? (hosts ? join(hosts, 'copilot-cache') : join(tmpdir(), 'elicitly-copilot-cache'));
}

/** A throw-away HOME and COPILOT_HOME (`<root>/copilot-home`), where `hooks install copilot-cli` writes its hooks file. */
export function copilotSandbox(): CopilotSandbox {
  const base = makeSandbox('copilot');
  const copilotHome = join(base.root, 'copilot-home');
  mkdirSync(copilotHome, { recursive: true, mode: 0o700 });
  return { ...base, copilotHome };
}

/**
 * The CLI's environment: the mock as its own model provider (BYOK: no GitHub sign-in), offline (no auth, telemetry,
 * web tools, GitHub MCP server or update check), nothing of the test's env. The hooks it runs get this env too.
 */
export function copilotEnv(sandbox: CopilotSandbox, apiUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    ...BASE_ENV,
    HOME: sandbox.home,
    COPILOT_HOME: sandbox.copilotHome,
    COPILOT_CACHE_HOME: copilotCacheHome(),
    COPILOT_PROVIDER_BASE_URL: apiUrl,
    COPILOT_PROVIDER_API_KEY: API_KEY,
    COPILOT_MODEL,
    COPILOT_OFFLINE: 'true',
    COPILOT_AUTO_UPDATE: 'false',
    NO_COLOR: '1',
    ...extra,
  };
}

export interface CopilotRun extends HostRun {
  /** The requests the mock received during this run. */
  requests: LoggedRequest[];
  /** The tool messages the main requests of this run carried: what the model was told. */
  toolResults: ToolResultSeen[];
}

/** `copilot -p <prompt> --output-format json …args` in the sandbox's project (or `cwd`), bounded; with the mock's record of the run. */
export async function copilotPrompt(
  bin: string,
  sandbox: CopilotSandbox,
  mock: MockChatCompletions,
  options: { prompt?: string; args?: readonly string[]; env?: Record<string, string>; cwd?: string; timeoutMs?: number } = {},
): Promise<CopilotRun> {
  const fromRequest = mock.requests.length;
  const fromResult = mock.toolResults.length;
  const run = await runHost(bin, ['-p', options.prompt ?? 'go', '--output-format', 'json', ...(options.args ?? [])], {
    cwd: options.cwd ?? sandbox.work,
    env: copilotEnv(sandbox, mock.url, options.env),
    timeoutMs: options.timeoutMs ?? 90_000,
  });
  return { ...run, requests: mock.requests.slice(fromRequest), toolResults: mock.toolResults.slice(fromResult) };
}

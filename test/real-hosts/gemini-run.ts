import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BASE_ENV, makeSandbox, runHost, type HostRun, type Sandbox } from './host-process.js';
import type { FunctionResponseSeen, MockGeminiApi } from './mock-gemini-api.js';
import type { LoggedRequest } from './mock-http.js';

const API_KEY = 'test';

/** One command hook of a `settings.json` event: `timeout` is in ms (default 60000), `env` is added after the CLI's own. */
export interface GeminiCommandHook {
  type: 'command';
  command: string;
  name?: string;
  timeout?: number;
  env?: Record<string, string>;
}

/** `settings.json` `hooks`: each event (BeforeTool, Notification, …) a list of matchers, each with its hooks. */
export type GeminiHooks = Record<string, { matcher?: string; sequential?: boolean; hooks: GeminiCommandHook[] }[]>;

/**
 * The policy for `run_shell_command`: a rule with that decision, none at all (null: headless, the tool is then not even
 * offered to the model), or a whole TOML file of the caller's.
 */
export type GeminiPolicy = 'allow' | 'ask_user' | 'deny' | null | { toml: string };

export interface GeminiSandbox extends Sandbox {
  /** $HOME/.gemini: settings.json, and what the CLI writes (projects.json, tmp/<project>/chats, …). */
  geminiDir: string;
  /** The file passed with --policy, or null when no policy was asked for. */
  policyFile: string | null;
}

/** A policy rule for `run_shell_command`, TOML. */
export function shellPolicy(decision: 'allow' | 'ask_user' | 'deny'): string {
  return ['[[rule]]', 'toolName = "run_shell_command"', `decision = "${decision}"`, 'priority = 100', ''].join('\n');
}

/**
 * A throw-away HOME whose user settings make the CLI talk to the mock without asking anything: the API-key auth type
 * (the base URL alone selects the `gateway` type, which `-p` refuses, exit 41), no usage statistics, no auto update, and
 * the caller's hooks. `settings` is merged over the top level of those.
 */
export function geminiSandbox(options: { hooks?: GeminiHooks; policy?: GeminiPolicy; settings?: Record<string, unknown> } = {}): GeminiSandbox {
  const base = makeSandbox('gemini');
  const geminiDir = join(base.home, '.gemini');
  mkdirSync(geminiDir, { recursive: true });
  const settings = {
    security: { auth: { selectedType: 'gemini-api-key' } },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
    hooks: options.hooks ?? {},
    ...options.settings,
  };
  writeFileSync(join(geminiDir, 'settings.json'), JSON.stringify(settings, null, 2));
  const policy = options.policy === undefined ? 'allow' : options.policy;
  let policyFile: string | null = null;
  if (policy !== null) {
    policyFile = join(base.root, 'policy.toml');
    writeFileSync(policyFile, typeof policy === 'string' ? shellPolicy(policy) : policy.toml);
  }
  return { ...base, geminiDir, policyFile };
}

/** The CLI's environment: the mock as its API, the workspace trusted (else `-p` exits 55), nothing of the test's env. */
export function geminiEnv(sandbox: GeminiSandbox, apiUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    ...BASE_ENV,
    HOME: sandbox.home,
    GOOGLE_GEMINI_BASE_URL: apiUrl,
    GEMINI_API_KEY: API_KEY,
    GEMINI_CLI_TRUST_WORKSPACE: 'true',
    ...extra,
  };
}

export interface GeminiRun extends HostRun {
  /** The requests the mock received during this run. */
  requests: LoggedRequest[];
  /** The functionResponses the main requests of this run carried: what the model was told. */
  functionResponses: FunctionResponseSeen[];
}

/** `gemini -p <prompt> [--policy FILE] …args` in the sandbox's project (or `cwd`), bounded; with the mock's record of the run. */
export async function geminiPrompt(
  bin: string,
  sandbox: GeminiSandbox,
  mock: MockGeminiApi,
  options: { prompt?: string; args?: readonly string[]; env?: Record<string, string>; cwd?: string; timeoutMs?: number } = {},
): Promise<GeminiRun> {
  const fromRequest = mock.requests.length;
  const fromResponse = mock.functionResponses.length;
  const policy = sandbox.policyFile ? ['--policy', sandbox.policyFile] : [];
  const run = await runHost(bin, ['-p', options.prompt ?? 'go', ...policy, ...(options.args ?? [])], {
    cwd: options.cwd ?? sandbox.work,
    env: geminiEnv(sandbox, mock.url, options.env),
    timeoutMs: options.timeoutMs ?? 90_000,
  });
  return { ...run, requests: mock.requests.slice(fromRequest), functionResponses: mock.functionResponses.slice(fromResponse) };
}

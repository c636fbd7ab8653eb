import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BASE_ENV, makeSandbox, runHost, type HostRun, type Sandbox } from './host-process.js';

export interface CodexSandbox extends Sandbox {
  /** CODEX_HOME: its config.toml names the mock as the model provider. */
  codexHome: string;
}

const toml = (s: string) => JSON.stringify(s);

/**
 * A throw-away HOME and CODEX_HOME whose config.toml points Codex at the mock Responses API. The daemon is off: on by
 * default in 0.171.0, it copies ~420 MB of binaries into CODEX_HOME and leaves `codex app-server` processes behind.
 */
export function codexSandbox(apiUrl: string): CodexSandbox {
  const base = makeSandbox('codex');
  const codexHome = join(base.home, '.codex');
  mkdirSync(codexHome, { recursive: true });
  const config = [
    'model = "mock-model"',
    'model_provider = "mock"',
    '',
    '[model_providers.mock]',
    'name = "mock"',
    `base_url = ${toml(`${apiUrl}/v1`)}`,
    'wire_api = "responses"',
    'env_key = "MOCK_API_KEY"',
    '',
    '[features]',
    'daemon_auto_start = false',
    '',
  ].join('\n');
  writeFileSync(join(codexHome, 'config.toml'), config);
  return { ...base, codexHome };
}

export function codexEnv(sandbox: CodexSandbox, extra: Record<string, string> = {}): Record<string, string> {
  return { ...BASE_ENV, HOME: sandbox.home, CODEX_HOME: sandbox.codexHome, MOCK_API_KEY: 'sk-mock-real-hosts', ...extra };
}

/** `codex exec --skip-git-repo-check --json … go` in the sandbox's project, bounded. */
export function codexExec(bin: string, sandbox: CodexSandbox, env: Record<string, string>, args: readonly string[], timeoutMs = 90_000): Promise<HostRun> {
  return runHost(bin, ['exec', '--skip-git-repo-check', '--json', ...args, 'go'], { cwd: sandbox.work, env, timeoutMs });
}

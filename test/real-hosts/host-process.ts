import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface HostRun {
  /** Null when it was killed. */
  code: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  stdout: string;
  /** Each complete stdout line with when it arrived (ms since the epoch): the host's event stream, timed. */
  lines: { at: number; line: string }[];
  stderr: string;
  ms: number;
}

const GRACE_MS = 3000;

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: the group is gone already.
  }
}

/**
 * Runs a host (claude, codex) to its end in a process group of its own, bounded by `timeoutMs`. Whatever it started
 * and left behind (an MCP server, a hook still running, a shell) is in that group and is killed by the group's id,
 * the host's own pid, when it ends: nothing outlives a test, and nothing outside it is touched.
 */
export function runHost(bin: string, args: readonly string[], options: { cwd: string; env: Record<string, string>; timeoutMs: number; stdin?: string }): Promise<HostRun> {
  const started = Date.now();
  const child = spawn(bin, args, { cwd: options.cwd, env: options.env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  let stdout = '';
  let stderr = '';
  const lines: HostRun['lines'] = [];
  let partial = '';
  child.stdout.on('data', (d: Buffer) => {
    const text = d.toString('utf8');
    stdout += text;
    const parts = (partial + text).split('\n');
    partial = parts.pop() ?? '';
    const at = Date.now();
    for (const line of parts) lines.push({ at, line });
  });
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
  child.stdin.on('error', () => undefined);
  child.stdin.end(options.stdin ?? '');
  let timedOut = false;
  const pid = child.pid;
  const timer = setTimeout(() => {
    timedOut = true;
    if (pid === undefined) return;
    killGroup(pid, 'SIGTERM');
    setTimeout(() => killGroup(pid, 'SIGKILL'), GRACE_MS).unref();
  }, options.timeoutMs);
  return new Promise((resolve) => {
    child.once('error', (error) => {
      clearTimeout(timer);
      resolve({ code: null, signal: null, timedOut, stdout, lines, stderr: `${stderr}${String(error)}`, ms: Date.now() - started });
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (pid !== undefined) killGroup(pid, 'SIGKILL');
      resolve({ code, signal, timedOut, stdout, lines, stderr, ms: Date.now() - started });
    });
  });
}

/** A throw-away tree for one host run: its HOME, the project it works in, the companion's state dir. */
export interface Sandbox {
  root: string;
  home: string;
  work: string;
  state: string;
  remove: () => void;
}

export function makeSandbox(prefix: string): Sandbox {
  const root = mkdtempSync(join(tmpdir(), `elicitly-${prefix}-`));
  const sandbox = { root, home: join(root, 'home'), work: join(root, 'work'), state: join(root, 'state'), remove: () => rmSync(root, { recursive: true, force: true }) };
  for (const dir of [sandbox.home, sandbox.work, sandbox.state]) mkdirSync(dir, { recursive: true, mode: 0o700 });
  return sandbox;
}

/** PATH for the host and the shell commands it runs; nothing else of the test's environment leaks in. */
export const BASE_ENV = { PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin', LANG: 'C.UTF-8', TERM: 'dumb' } as const;

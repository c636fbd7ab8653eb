import { execFile } from 'node:child_process';

export interface CommandRun {
  /** The exit code; -1 when the process was killed (timeout) or could not start. */
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end, bounded by `timeout`, and resolves with how it ended: a failing exit is a result here. */
export function runCommand(command: string, args: readonly string[], options: { cwd?: string; env?: Record<string, string>; timeout?: number } = {}): Promise<CommandRun> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd: options.cwd, env: { ...process.env, ...options.env }, timeout: options.timeout ?? 60_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr });
    });
  });
}

// Which host prompts a hook is waiting on now, as one empty-or-not folder in the state dir: the shell guard of Claude
// Code's PostToolUse hooks looks at it before starting Node at all, so a tool call costs a process only while a prompt
// waits. A mark is the request's id, holding the pid of the hook that waits on it.
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { alive } from '../file-lock.js';

/** The folder, in the state dir; `hooks install` writes its path into the PostToolUse hooks' guard. */
export function waitingDir(stateDir: string): string {
  return join(stateDir, 'waiting-prompts');
}

/**
 * The request id of the prompt for one tool call, the same from the PermissionRequest hook (which found the call's id in
 * the transcript) and from the PostToolUse hook of that call: a base64url digest, never the host's own strings.
 */
export function promptRequestId(host: string, sessionId: string, toolUseId: string): string {
  return `el_p${createHash('sha256').update(`${host}\u0000${sessionId}\u0000${toolUseId}`).digest('base64url').slice(0, 22)}`;
}

const SAFE = /^el_[A-Za-z0-9_-]{1,60}$/;

export class WaitingPrompts {
  constructor(private readonly dir: string) {}

  /** Marks `id` as waited on by this process; false when it could not be (the guard then simply runs less). */
  mark(id: string, pid = process.pid): boolean {
    if (!SAFE.test(id)) return false;
    try {
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      writeFileSync(join(this.dir, id), String(pid), { mode: 0o600 });
      return true;
    } catch {
      return false;
    }
  }

  unmark(id: string): void {
    if (SAFE.test(id)) rmSync(join(this.dir, id), { force: true });
  }

  /** Whether a live hook waits on `id`; a mark whose hook died (SIGKILL leaves it) is removed on the way. */
  waiting(id: string): boolean {
    if (!SAFE.test(id)) return false;
    const pid = this.pidOf(id);
    if (pid === null) return false;
    if (alive(pid)) return true;
    this.unmark(id);
    return false;
  }

  /** Removes every mark whose hook is gone, so a killed hook does not keep the guard open for good. */
  sweep(): void {
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return;
    }
    for (const name of names) {
      const pid = this.pidOf(name);
      if (pid === null || !alive(pid)) rmSync(join(this.dir, name), { force: true });
    }
  }

  private pidOf(id: string): number | null {
    try {
      const pid = Number(readFileSync(join(this.dir, id), 'utf8'));
      return Number.isInteger(pid) && pid > 0 ? pid : null;
    } catch {
      return null;
    }
  }
}

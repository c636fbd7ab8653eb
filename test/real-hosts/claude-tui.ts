import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ClaudeSandbox } from './claude-print.js';
import { shellQuote } from '../../server/hook/hooks-settings.js';

/**
 * Claude Code's interactive terminal, for real: `claude` in a private tmux server (`-L` a socket of its own, `-f
 * /dev/null`: never the person's tmux or its config), its screen read with capture-pane and keys sent with send-keys.
 * This is where a person answers a permission prompt in the terminal while our hook waits (print mode draws none).
 */
export class ClaudeTui {
  private constructor(
    private readonly socket: string,
    private readonly session: string,
  ) {}

  /** Starts `claude --permission-mode default …` in the sandbox's project; resolves once its input box is drawn. */
  static async start(bin: string, sandbox: ClaudeSandbox, env: Record<string, string>, args: readonly string[] = []): Promise<ClaudeTui> {
    const socket = `elicitly-tui-${process.pid}-${randomBytes(4).toString('hex')}`;
    const launch = join(sandbox.root, `launch-${socket}.sh`);
    const exports = Object.entries({ ...env, TERM: 'xterm-256color' }).map(([k, v]) => `export ${k}=${shellQuote(v)}`);
    // Interactive mode's default is "auto" in this version, whose classifier calls the API: "default" draws the prompt.
    writeFileSync(launch, ['#!/bin/bash', `cd ${shellQuote(sandbox.work)} || exit 1`, ...exports, `exec ${[bin, '--permission-mode', 'default', ...args].map(shellQuote).join(' ')}`, ''].join('\n'), { mode: 0o700 });
    const tui = new ClaudeTui(socket, 'claude');
    // A clean environment for the tmux server itself: only the launch script's exports reach claude.
    execFileSync('tmux', ['-L', socket, '-f', '/dev/null', 'new-session', '-d', '-s', tui.session, '-x', '200', '-y', '50', `bash --noprofile --norc ${shellQuote(launch)}`], {
      env: { PATH: env.PATH ?? '/usr/bin:/bin', HOME: sandbox.home },
    });
    await tui.waitFor(/^(❯|>)/m, 40_000, 'the input box');
    return tui;
  }

  private tmux(...args: string[]): string {
    return execFileSync('tmux', ['-L', this.socket, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  }

  alive(): boolean {
    try {
      this.tmux('has-session', '-t', this.session);
      return true;
    } catch {
      return false;
    }
  }

  screen(): string {
    try {
      return this.tmux('capture-pane', '-p', '-t', this.session);
    } catch {
      return '';
    }
  }

  /** Waits (bounded) for the screen to match; fails with the screen as it is. */
  async waitFor(pattern: RegExp, timeoutMs: number, what: string): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (pattern.test(this.screen())) return;
      if (!this.alive()) throw new Error(`claude ended while waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
    throw new Error(`no ${what} on Claude Code's screen within ${timeoutMs} ms; the screen:\n${this.screen()}`);
  }

  keys(...names: string[]): void {
    for (const name of names) this.tmux('send-keys', '-t', this.session, name);
  }

  /**
   * Answers a dialog with a key, as a person would: pressed again while the dialog stays on the screen, up to `tries`
   * times a second apart. Claude Code 2.1.332 can drop an Enter that reaches a permission dialog as soon as it is drawn
   * (measured on 2026-12-05: the dialog still there 4 s after the key and no tool run, in 4 runs of 4 and on 8ae5c99 too;
   * the second Enter, a second later, taken at once; Escape always taken at once). Resolves with the number
   * of presses it took and when the one it took was sent.
   */
  async answer(key: string, dialog: RegExp, what: string, tries = 5): Promise<{ presses: number; pressedAt: number }> {
    for (let press = 1; press <= tries; press++) {
      const pressedAt = Date.now();
      this.keys(key);
      const deadline = pressedAt + 1000;
      while (Date.now() < deadline) {
        if (!dialog.test(this.screen())) return { presses: press, pressedAt };
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    throw new Error(`${what} still on Claude Code's screen after ${tries} presses of ${key}; the screen:\n${this.screen()}`);
  }

  type(text: string): void {
    this.tmux('send-keys', '-t', this.session, '-l', text);
  }

  /** The prompt typed and sent, as a person would. */
  async prompt(text: string): Promise<void> {
    this.type(text);
    await new Promise((resolve) => setTimeout(resolve, 300));
    this.keys('Enter');
  }

  /** /exit, then the private tmux server killed whatever is left (bounded). */
  async stop(): Promise<void> {
    if (!this.alive()) return;
    try {
      this.keys('Escape');
      await new Promise((resolve) => setTimeout(resolve, 300));
      this.type('/exit');
      this.keys('Enter');
      for (let i = 0; i < 20 && this.alive(); i++) await new Promise((resolve) => setTimeout(resolve, 250));
    } finally {
      try {
        this.tmux('kill-server');
      } catch {
        // Already gone.
      }
    }
  }
}

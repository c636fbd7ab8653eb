import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { waitingDir } from '../../server/hook/waiting-prompts.js';
import { decodeLine } from '../../server/store/journal-line.js';
import type { ScriptedExtension } from '../helpers/scripted-extension.js';
import { claudeEnv, claudeSandbox, type ClaudeSandbox } from './claude-print.js';
import { ClaudeTui } from './claude-tui.js';
import { RunningHub, hooksInstall, nextPending } from './companion.js';
import { CLAUDE, hostSuite } from './host-bins.js';
import { MockMessagesApi, type MessagesTurn } from './mock-messages-api.js';

// Finding 5 of issue 32, with the real Claude Code 2.1.332 in its own terminal (tmux): it draws its permission prompt
// while our PermissionRequest hook waits for the person in the extension, and the first answer wins. Measured there: a
// "Yes" in the terminal tells the hook nothing (no signal), a "No" or Escape ends it with SIGTERM. Either way the
// question must leave the inbox at once: nobody is asking it any more.

const bash = (command: string): MessagesTurn => ({ toolUse: { name: 'Bash', input: { command, description: 'write a file' } } });

/** The journal's last word on a request: its status as stored (each line is a checksum and a whole record). */
function storedStatus(state: string, id: string): string | undefined {
  let status: string | undefined;
  for (const line of readFileSync(join(state, 'requests.jsonl'), 'utf8').split('\n')) {
    const decoded = decodeLine(line);
    if (!decoded.ok) continue;
    const record = decoded.value as { id?: unknown; status?: unknown };
    if (record.id === id && typeof record.status === 'string') status = record.status;
  }
  return status;
}

describe.skipIf(!CLAUDE.found)(hostSuite('a prompt answered in Claude Code\'s own terminal leaves the inbox', CLAUDE), () => {
  let sandbox: ClaudeSandbox;
  let hub: RunningHub;
  let ext: ScriptedExtension;
  const closers: (() => Promise<void> | void)[] = [];

  beforeEach(async () => {
    sandbox = claudeSandbox();
    closers.push(() => sandbox.remove());
    hub = await RunningHub.start(sandbox.state, sandbox.home);
    closers.push(() => hub.stop());
    await hooksInstall('claude-code', ['--scope', 'project'], { cwd: sandbox.work, env: { HOME: sandbox.home, CLAUDE_CONFIG_DIR: sandbox.config, ELICITLY_STATE_DIR: sandbox.state } });
    ext = await hub.connectExtension();
    closers.push(() => ext.close());
  });

  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });

  async function terminal(turns: MessagesTurn[]): Promise<ClaudeTui> {
    const api = await MockMessagesApi.start(turns);
    closers.push(() => api.close());
    const tui = await ClaudeTui.start(CLAUDE.bin, sandbox, claudeEnv(sandbox, api.url, hub.env));
    closers.push(() => tui.stop());
    await tui.prompt('go');
    return tui;
  }

  /**
   * The waiting hooks' marks. The folder is made by the first mark: a hook that Claude Code ended before it marked (an
   * Escape pressed as the prompt appears) leaves none, which is no mark.
   */
  const marks = (): string[] => (existsSync(waitingDir(sandbox.state)) ? readdirSync(waitingDir(sandbox.state)) : []);

  it('finding 5: "Yes" in the terminal withdraws the request at once (its PostToolUse hook), and the waiting hook ends with it', async () => {
    const tui = await terminal([bash('touch terminal-yes.txt && echo yes-ran'), { echo: true }]);
    const request = await nextPending(ext, 60_000);
    expect(request.request).toMatchObject({ kind: 'permission', command: 'touch terminal-yes.txt && echo yes-ran' });
    await tui.waitFor(/Do you want to proceed\?/, 30_000, 'the permission prompt');
    // While it waits, the hook's prompt is marked for the PostToolUse guard.
    expect(readdirSync(waitingDir(sandbox.state))).toEqual([request.elicitationId]);
    const { presses, pressedAt } = await tui.answer('Enter', /Do you want to proceed\?/, 'the permission prompt');
    const removed = await ext.notice('request.removed', (p) => p.elicitationId === request.elicitationId, 15_000);
    console.log(`real-hosts: claude (terminal), "Yes": the request left the inbox ${Date.now() - pressedAt} ms after the key (pressed ${presses}×)`);
    expect(removed.status).toBe('canceled');
    expect(storedStatus(sandbox.state, request.elicitationId)).toBe('canceled');
    await tui.waitFor(/MOCK_ECHO/, 30_000, 'the model seeing the result');
    expect(existsSync(join(sandbox.work, 'terminal-yes.txt'))).toBe(true);
    // The hook that waited ended with its request: its mark is gone, so the guard starts no Node for the next tools.
    for (let i = 0; i < 50 && marks().length > 0; i++) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(marks()).toEqual([]);
  });

  it('finding 5: "No" (Escape) in the terminal: Claude Code ends the hook and its request is withdrawn at once', async () => {
    const tui = await terminal([bash('touch terminal-no.txt'), { echo: true }]);
    const request = await nextPending(ext, 60_000);
    await tui.waitFor(/Do you want to proceed\?/, 30_000, 'the permission prompt');
    const { presses, pressedAt } = await tui.answer('Escape', /Do you want to proceed\?/, 'the permission prompt');
    const removed = await ext.notice('request.removed', (p) => p.elicitationId === request.elicitationId, 10_000);
    console.log(`real-hosts: claude (terminal), Escape: the request left the inbox ${Date.now() - pressedAt} ms after the key (pressed ${presses}×)`);
    expect(removed.status).toBe('canceled');
    expect(existsSync(join(sandbox.work, 'terminal-no.txt'))).toBe(false);
    for (let i = 0; i < 50 && marks().length > 0; i++) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(marks()).toEqual([]);
  });
});

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RequestView } from '../../shared/review-request.js';
import type { ScriptedExtension } from '../helpers/scripted-extension.js';
import { codexEnv, codexExec, codexSandbox, type CodexSandbox } from './codex-exec.js';
import { RunningHub, decide, hooksInstall, nextPending } from './companion.js';
import { CODEX, hostSuite } from './host-bins.js';
import type { HostRun } from './host-process.js';
import { MockResponsesApi } from './mock-responses-api.js';

// Codex 0.171.0 itself (`codex exec`), played by the mock Responses API, with the PreToolUse hook `elicitly-companion
// hooks install codex --events PreToolUse` writes into CODEX_HOME/config.toml: a shell write the model asks for waits
// for the person in the (scripted) extension. `codex exec` never shows a prompt of its own, so PreToolUse is the event
// that bridges it (PermissionRequest is the TUI's). Hooks need --dangerously-bypass-hook-trust, or Codex wants them
// reviewed first; the sandbox is bypassed so an allowed write can land in the throw-away project.

const CODEX_ARGS = ['--dangerously-bypass-hook-trust', '--dangerously-bypass-approvals-and-sandbox'];

describe.skipIf(!CODEX.found)(hostSuite("Codex's shell commands answered in the extension", CODEX), () => {
  let api: MockResponsesApi;
  let sandbox: CodexSandbox;
  let hub: RunningHub;
  let ext: ScriptedExtension;
  const closers: (() => Promise<void> | void)[] = [];

  async function start(cmd: string): Promise<void> {
    api = await MockResponsesApi.start([{ call: { name: 'exec_command', arguments: { cmd } } }, { echo: true }]);
    closers.push(() => api.close());
    sandbox = codexSandbox(api.url);
    closers.push(() => sandbox.remove());
    hub = await RunningHub.start(sandbox.state, sandbox.home);
    closers.push(() => hub.stop());
    await hooksInstall('codex', ['--events', 'PreToolUse'], { cwd: sandbox.work, env: { HOME: sandbox.home, CODEX_HOME: sandbox.codexHome } });
    const config = readFileSync(join(sandbox.codexHome, 'config.toml'), 'utf8');
    expect(config).toContain('# >>> elicitly-companion hooks');
    expect(config).toMatch(/\[\[hooks\.PreToolUse\]\]/);
    ext = await hub.connectExtension();
    closers.push(() => ext.close());
  }

  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });

  function expectPermission(request: RequestView, command: string): void {
    expect(request.kind).toBe('permission');
    expect(request.request).toMatchObject({ kind: 'permission', host: 'codex', event: 'PreToolUse', command, cwd: sandbox.work });
    expect(request.message).toBe('Codex wants to run a command');
  }

  function report(name: string, run: HostRun, decidedAfterMs: number): void {
    console.log(`real-hosts: codex exec, ${name}: run ${run.ms} ms; the request reached the extension ${decidedAfterMs} ms after the run started`);
  }

  it('an exec_command write the person approves runs, and the model sees its output', async () => {
    await start('touch approved.txt && echo approved-ran');
    const started = Date.now();
    const running = codexExec(CODEX.bin, sandbox, codexEnv(sandbox, hub.env), CODEX_ARGS);
    const request = await nextPending(ext, 60_000);
    const reached = Date.now() - started;
    expectPermission(request, 'touch approved.txt && echo approved-ran');
    await decide(ext, request, 'approved');
    const run = await running;
    report('approved', run, reached);
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(join(sandbox.work, 'approved.txt'))).toBe(true);
    expect(api.outputs).toEqual([expect.objectContaining({ text: expect.stringContaining('approved-ran') })]);
  });

  it('an exec_command write the person denies with a reason does not run; the model sees the reason', async () => {
    await start('touch denied.txt');
    const started = Date.now();
    const running = codexExec(CODEX.bin, sandbox, codexEnv(sandbox, hub.env), CODEX_ARGS);
    const request = await nextPending(ext, 60_000);
    const reached = Date.now() - started;
    expectPermission(request, 'touch denied.txt');
    await decide(ext, request, 'rejected', { comment: 'not on a Friday' });
    const run = await running;
    report('denied', run, reached);
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(join(sandbox.work, 'denied.txt'))).toBe(false);
    expect(api.outputs).toEqual([expect.objectContaining({ text: expect.stringMatching(/blocked by PreToolUse hook.*not on a Friday/) })]);
  });
});

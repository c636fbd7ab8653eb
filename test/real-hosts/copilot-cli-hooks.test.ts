import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RequestView } from '../../shared/review-request.js';
import type { ScriptedExtension } from '../helpers/scripted-extension.js';
import { RunningHub, createdSoFar, decide, hooksInstall, nextPending } from './companion.js';
import { copilotPrompt, copilotSandbox, type CopilotRun, type CopilotSandbox } from './copilot-run.js';
import { COPILOT, hostSuite } from './host-bins.js';
import { MockChatCompletions } from './mock-chat-completions.js';

// GitHub Copilot CLI 1.0.102 itself (`copilot -p`), with its own model provider pointed at a mock of the Chat
// Completions API (no GitHub sign-in: COPILOT_OFFLINE), and the permissionRequest hook `elicitly-companion hooks
// install copilot-cli` writes into $COPILOT_HOME/hooks/elicitly.json: a shell command the model asks for waits for the
// person in the (scripted) extension. In `-p` nobody can answer Copilot's own prompt, so a call the hook does not decide
// is refused there: that is "the host's own prompt" in these tests.

describe.skipIf(!COPILOT.found)(hostSuite("GitHub Copilot CLI's shell commands answered in the extension", COPILOT), () => {
  let api: MockChatCompletions;
  let sandbox: CopilotSandbox;
  let hub: RunningHub;
  const closers: (() => Promise<void> | void)[] = [];

  async function start(command: string, installArgs: readonly string[] = []): Promise<void> {
    api = await MockChatCompletions.shell(command);
    closers.push(() => api.close());
    sandbox = copilotSandbox();
    closers.push(() => sandbox.remove());
    hub = await RunningHub.start(sandbox.state, sandbox.home);
    closers.push(() => hub.stop());
    await hooksInstall('copilot-cli', installArgs, { cwd: sandbox.work, env: { HOME: sandbox.home, COPILOT_HOME: sandbox.copilotHome } });
    const file = JSON.parse(readFileSync(join(sandbox.copilotHome, 'hooks', 'elicitly.json'), 'utf8')) as { version: number; hooks: Record<string, { bash: string; timeoutSec: number }[]> };
    expect(file.version).toBe(1);
    const events = installArgs.includes('preToolUse') ? ['preToolUse'] : ['permissionRequest'];
    expect(Object.keys(file.hooks)).toEqual(events);
    expect(file.hooks[events[0]!]).toEqual([expect.objectContaining({ type: 'command', timeoutSec: 120 })]);
  }

  async function extension(): Promise<ScriptedExtension> {
    const ext = await hub.connectExtension();
    closers.push(() => ext.close());
    return ext;
  }

  const copilot = (mock = api) => copilotPrompt(COPILOT.bin, sandbox, mock, { env: hub.env });

  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });

  function expectPermission(request: RequestView, command: string, event = 'permissionRequest'): void {
    expect(request.kind).toBe('permission');
    expect(request.request).toMatchObject({ kind: 'permission', host: 'copilot-cli', hostName: 'GitHub Copilot CLI', event, tool: 'bash', command, cwd: sandbox.work });
    expect(request.message).toBe('GitHub Copilot CLI wants to run a command');
  }

  function report(name: string, run: CopilotRun): void {
    console.log(`real-hosts: copilot -p, ${name}: run ${run.ms} ms`);
  }

  it('a command the person allows runs, and the model sees its output', async () => {
    await start('touch approved.txt && echo approved-ran');
    const ext = await extension();
    const running = copilot();
    const request = await nextPending(ext, 60_000);
    expectPermission(request, 'touch approved.txt && echo approved-ran');
    // Its permissionRequest runs no edited input: the review says so instead of offering an editor.
    expect(request.request).toMatchObject({ editable: false });
    await decide(ext, request, 'approved');
    const run = await running;
    report('allowed', run);
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(join(sandbox.work, 'approved.txt'))).toBe(true);
    expect(run.toolResults).toEqual([expect.objectContaining({ content: expect.stringContaining('approved-ran') })]);
  });

  it('a command the person denies with a reason does not run; the model is told the reason', async () => {
    await start('touch denied.txt');
    const ext = await extension();
    const running = copilot();
    const request = await nextPending(ext, 60_000);
    expectPermission(request, 'touch denied.txt');
    await decide(ext, request, 'rejected', { comment: 'not on a Friday' });
    const run = await running;
    report('denied', run);
    expect(existsSync(join(sandbox.work, 'denied.txt'))).toBe(false);
    expect(run.toolResults).toEqual([expect.objectContaining({ content: expect.stringContaining('Permission denied by a PermissionRequest hook: not on a Friday') })]);
  });

  it('with preToolUse, the command the person edited is the one that runs', async () => {
    await start('touch asked.txt', ['--events', 'preToolUse']);
    const ext = await extension();
    const running = copilot();
    const request = await nextPending(ext, 60_000);
    expectPermission(request, 'touch asked.txt', 'preToolUse');
    await decide(ext, request, 'approved', { values: { updatedInput: { command: 'touch edited.txt' } } });
    const run = await running;
    report('edited (preToolUse)', run);
    expect(existsSync(join(sandbox.work, 'asked.txt'))).toBe(false);
    expect(existsSync(join(sandbox.work, 'edited.txt'))).toBe(true);
  });

  it('"always allow" saved with a decision: the next matching command is decided by the rule, never asked', async () => {
    await start('touch first.txt');
    const ext = await extension();
    const running = copilot();
    const request = await nextPending(ext, 60_000);
    await decide(ext, request, 'approved', { rule: { effect: 'allow', match: { tool: 'bash', commandPrefix: 'touch', directory: sandbox.work }, expiresAt: null } });
    report('always allow, the decision that saves the rule', await running);
    expect(existsSync(join(sandbox.work, 'first.txt'))).toBe(true);

    const second = await MockChatCompletions.shell('touch second.txt');
    closers.push(() => second.close());
    const run = await copilot(second);
    report('always allow, the command the rule decides', run);
    expect(existsSync(join(sandbox.work, 'second.txt'))).toBe(true);
    const decided = await ext.notice('request.created', (p) => p.request.request.kind === 'permission' && p.request.request.command === 'touch second.txt', 10_000);
    expect(decided.request.outcome).toMatchObject({ decision: 'approved', decidedVia: 'rule' });
    expect(createdSoFar(ext).filter((r) => r.status === 'pending')).toEqual([]);
  });

  it('no reviewer connected: the hook decides nothing and Copilot CLI asks itself (in -p: its refusal)', async () => {
    await start('touch nobody.txt');
    const run = await copilot();
    report('no reviewer, its own prompt', run);
    expect(existsSync(join(sandbox.work, 'nobody.txt'))).toBe(false);
    expect(run.toolResults).toEqual([expect.objectContaining({ content: expect.stringContaining('no interactive user response was available') })]);
  });

  it('Copilot CLI stops waiting (its hook timeout): the request leaves the inbox at once', async () => {
    await start('touch late.txt');
    // A host timeout shorter than the hook's own wait: the host ends the hook, as it would one a person let lie.
    const file = join(sandbox.copilotHome, 'hooks', 'elicitly.json');
    writeFileSync(file, readFileSync(file, 'utf8').replace('"timeoutSec": 120', '"timeoutSec": 3'));
    const ext = await extension();
    const running = copilot();
    const request = await nextPending(ext, 60_000);
    const removed = await ext.notice('request.removed', (p) => p.elicitationId === request.elicitationId, 20_000);
    expect(removed.status).toBe('canceled');
    const run = await running;
    report('the host stopped waiting', run);
    expect(existsSync(join(sandbox.work, 'late.txt'))).toBe(false);
  });
});

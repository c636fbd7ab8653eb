import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RequestView } from '../../shared/review-request.js';
import type { ScriptedExtension } from '../helpers/scripted-extension.js';
import { RunningHub, createdSoFar, decide, hooksInstall, nextPending } from './companion.js';
import { geminiPrompt, geminiSandbox, type GeminiPolicy, type GeminiRun, type GeminiSandbox } from './gemini-run.js';
import { GEMINI, hostSuite } from './host-bins.js';
import { MockGeminiApi } from './mock-gemini-api.js';

// Gemini CLI 0.61.0 itself (`gemini -p`), played by the mock Gemini API, with the BeforeTool hook
// `elicitly-companion hooks install gemini-cli` writes into $HOME/.gemini/settings.json: a shell command the model asks
// for waits for the person in the (scripted) extension. Gemini CLI's hook can veto, not grant: a person's deny blocks
// the command with their reason; an allow lets Gemini's own policy decide, which here allows run_shell_command (without
// a rule `-p` would not even offer the tool) unless a test asks for its confirmation (`ask_user`, refused headless).

describe.skipIf(!GEMINI.found)(hostSuite("Gemini CLI's shell commands answered in the extension", GEMINI), () => {
  let api: MockGeminiApi;
  let sandbox: GeminiSandbox;
  let hub: RunningHub;
  const closers: (() => Promise<void> | void)[] = [];

  async function start(command: string, policy: GeminiPolicy = 'allow', installArgs: readonly string[] = []): Promise<void> {
    api = await MockGeminiApi.shell(command);
    closers.push(() => api.close());
    sandbox = geminiSandbox({ policy });
    closers.push(() => sandbox.remove());
    hub = await RunningHub.start(sandbox.state, sandbox.home);
    closers.push(() => hub.stop());
    await hooksInstall('gemini-cli', installArgs, { cwd: sandbox.work, env: { HOME: sandbox.home } });
    const settings = JSON.parse(readFileSync(join(sandbox.geminiDir, 'settings.json'), 'utf8')) as { hooks: Record<string, { matcher: string; hooks: { name: string; timeout: number }[] }[]>; security: unknown };
    // Merged into the file the sandbox wrote: its own settings stay.
    expect(settings.security).toEqual({ auth: { selectedType: 'gemini-api-key' } });
    expect(settings.hooks.BeforeTool).toEqual([{ matcher: 'run_shell_command|replace|write_file|mcp_.*', hooks: [expect.objectContaining({ type: 'command', name: 'elicitly', timeout: 120_000 })] }]);
  }

  async function extension(): Promise<ScriptedExtension> {
    const ext = await hub.connectExtension();
    closers.push(() => ext.close());
    return ext;
  }

  const gemini = (env: Record<string, string> = {}) => geminiPrompt(GEMINI.bin, sandbox, api, { env: { ...hub.env, ...env } });

  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });

  function expectPermission(request: RequestView, command: string): void {
    expect(request.kind).toBe('permission');
    expect(request.request).toMatchObject({ kind: 'permission', host: 'gemini-cli', hostName: 'Gemini CLI', event: 'BeforeTool', tool: 'run_shell_command', command, cwd: sandbox.work, editable: true });
    expect(request.message).toBe('Gemini CLI wants to run a command');
  }

  function report(name: string, run: GeminiRun): void {
    console.log(`real-hosts: gemini -p, ${name}: run ${run.ms} ms`);
  }

  it('a command the person allows runs (its policy allows it), and the model sees its output', async () => {
    await start('touch approved.txt && echo approved-ran');
    const ext = await extension();
    const running = gemini();
    const request = await nextPending(ext, 60_000);
    expectPermission(request, 'touch approved.txt && echo approved-ran');
    await decide(ext, request, 'approved');
    const run = await running;
    report('allowed', run);
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(join(sandbox.work, 'approved.txt'))).toBe(true);
    expect(run.functionResponses).toEqual([expect.objectContaining({ name: 'run_shell_command', text: expect.stringContaining('approved-ran') })]);
    // `{}` on stdout for an allow: nothing of the hook's stderr is read as a message to the person.
    expect(run.stderr).not.toMatch(/Hook system message/);
  });

  it('a command the person denies with a reason does not run; the model is told the reason', async () => {
    await start('touch denied.txt');
    const ext = await extension();
    const running = gemini();
    const request = await nextPending(ext, 60_000);
    expectPermission(request, 'touch denied.txt');
    await decide(ext, request, 'rejected', { comment: 'not on a Friday' });
    const run = await running;
    report('denied', run);
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(join(sandbox.work, 'denied.txt'))).toBe(false);
    expect(run.functionResponses).toEqual([expect.objectContaining({ name: 'run_shell_command', text: 'Tool execution blocked: not on a Friday' })]);
  });

  it('the command the person edited is the one that runs', async () => {
    await start('touch asked.txt');
    const ext = await extension();
    const running = gemini();
    const request = await nextPending(ext, 60_000);
    await decide(ext, request, 'approved', { values: { updatedInput: { command: 'touch edited.txt' } } });
    const run = await running;
    report('edited', run);
    expect(existsSync(join(sandbox.work, 'asked.txt'))).toBe(false);
    expect(existsSync(join(sandbox.work, 'edited.txt'))).toBe(true);
  });

  it('"always allow" saved with a decision: the next matching command is decided by the rule, never asked', async () => {
    await start('touch first.txt');
    const ext = await extension();
    const running = gemini();
    const request = await nextPending(ext, 60_000);
    await decide(ext, request, 'approved', { rule: { effect: 'allow', match: { tool: 'run_shell_command', commandPrefix: 'touch', directory: sandbox.work }, expiresAt: null } });
    report('always allow, the decision that saves the rule', await running);
    expect(existsSync(join(sandbox.work, 'first.txt'))).toBe(true);

    const second = await MockGeminiApi.shell('touch second.txt');
    closers.push(() => second.close());
    const run = await geminiPrompt(GEMINI.bin, sandbox, second, { env: hub.env });
    report('always allow, the command the rule decides', run);
    expect(existsSync(join(sandbox.work, 'second.txt'))).toBe(true);
    const decided = await ext.notice('request.created', (p) => p.request.request.kind === 'permission' && p.request.request.command === 'touch second.txt', 10_000);
    expect(decided.request.outcome).toMatchObject({ decision: 'approved', decidedVia: 'rule' });
    expect(createdSoFar(ext).filter((r) => r.status === 'pending')).toEqual([]);
  });

  it('no reviewer connected: the hook decides nothing and Gemini CLI asks itself (headless: its refusal)', async () => {
    await start('touch nobody.txt', 'ask_user');
    const run = await gemini();
    report('no reviewer, its own confirmation', run);
    expect(existsSync(join(sandbox.work, 'nobody.txt'))).toBe(false);
    expect(run.functionResponses).toEqual([expect.objectContaining({ text: expect.stringContaining('requires user confirmation') })]);
    expect(run.stderr).not.toMatch(/Hook system message/);
  });

  it('Gemini CLI stops waiting (its hook timeout): the request leaves the inbox at once', async () => {
    await start('touch late.txt', 'ask_user');
    // A host timeout shorter than the hook's own wait: the host ends the hook, as it would one a person let lie.
    const file = join(sandbox.geminiDir, 'settings.json');
    writeFileSync(file, readFileSync(file, 'utf8').replace('"timeout": 120000', '"timeout": 3000'));
    const ext = await extension();
    const running = gemini();
    const request = await nextPending(ext, 60_000);
    const removed = await ext.notice('request.removed', (p) => p.elicitationId === request.elicitationId, 20_000);
    expect(removed.status).toBe('canceled');
    const run = await running;
    report('the host stopped waiting', run);
    expect(existsSync(join(sandbox.work, 'late.txt'))).toBe(false);
  });
});

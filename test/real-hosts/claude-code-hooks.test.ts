import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RequestView } from '../../shared/review-request.js';
import type { ScriptedExtension } from '../helpers/scripted-extension.js';
import { claudeEnv, claudePrint, claudeSandbox, hookCalls, type ClaudePrint, type ClaudeSandbox } from './claude-print.js';
import { RunningHub, createdSoFar, decide, hooksInstall, nextPending } from './companion.js';
import { CLAUDE, hostSuite } from './host-bins.js';
import { ECHO_PREFIX, MockMessagesApi, type MessagesTurn } from './mock-messages-api.js';
import { NORTHWIND } from './northwind.js';

// Claude Code 2.1.332 itself (`claude -p`), played by the mock Messages API, with the hooks `elicitly-companion hooks
// install claude-code --scope project` writes into the project: its permission prompt and another MCP server's dialog
// reach a paired extension (the scripted stand-in: real-browser coverage of the review is the extension's own suite),
// and what the person decides is what the host does. Each test reports how long the run took and how long the hook
// held the host (hook start to decision printed, with the scripted person answering at once).

const bash = (command: string): MessagesTurn => ({ toolUse: { name: 'Bash', input: { command, description: 'write a file' } } });

describe.skipIf(!CLAUDE.found)(hostSuite("Claude Code's own prompts answered in the extension", CLAUDE), () => {
  let sandbox: ClaudeSandbox;
  let hub: RunningHub;
  const closers: (() => Promise<void> | void)[] = [];

  beforeEach(async () => {
    sandbox = claudeSandbox();
    closers.push(() => sandbox.remove());
    hub = await RunningHub.start(sandbox.state, sandbox.home);
    closers.push(() => hub.stop());
    const install = await hooksInstall('claude-code', ['--scope', 'project'], { cwd: sandbox.work, env: { HOME: sandbox.home, CLAUDE_CONFIG_DIR: sandbox.config } });
    const settings = JSON.parse(readFileSync(join(sandbox.work, '.claude', 'settings.json'), 'utf8')) as { hooks?: Record<string, unknown> };
    // The default events: the permission prompt and other servers' dialogs, and the two that see a prompt answered in
    // the terminal (claude-code-terminal.test.ts).
    expect(Object.keys(settings.hooks ?? {}).sort(), install.stdout).toEqual(['Elicitation', 'PermissionRequest', 'PostToolUse', 'PostToolUseFailure']);
  });

  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });

  async function mockModel(turns: MessagesTurn[]): Promise<MockMessagesApi> {
    const api = await MockMessagesApi.start(turns);
    closers.push(() => api.close());
    return api;
  }

  async function extension(): Promise<ScriptedExtension> {
    const ext = await hub.connectExtension();
    closers.push(() => ext.close());
    return ext;
  }

  function claude(api: MockMessagesApi, args: string[] = []): Promise<ClaudePrint> {
    return claudePrint(CLAUDE.bin, sandbox, claudeEnv(sandbox, api.url, hub.env), ['--include-hook-events', ...args]);
  }

  function report(name: string, run: ClaudePrint): void {
    const hooks = hookCalls(run).map((h) => `${h.event} hook ${h.ms} ms`);
    console.log(`real-hosts: claude -p, ${name}: run ${run.ms} ms${hooks.length ? `; ${hooks.join(', ')}` : ''}`);
  }

  function expectPermission(request: RequestView, command: string): void {
    expect(request.kind).toBe('permission');
    expect(request.request).toMatchObject({ kind: 'permission', host: 'claude-code', event: 'PermissionRequest', tool: 'Bash', command, cwd: sandbox.work, editable: true });
    expect(request.message).toBe('Claude Code wants to run a command');
  }

  it('a Bash write the person approves runs, and the model sees its result', async () => {
    const api = await mockModel([bash('touch approved.txt && echo approved-ran'), { echo: true }]);
    const ext = await extension();
    const running = claude(api);
    const request = await nextPending(ext, 60_000);
    expectPermission(request, 'touch approved.txt && echo approved-ran');
    await decide(ext, request, 'approved');
    const run = await running;
    report('approved', run);
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(join(sandbox.work, 'approved.txt'))).toBe(true);
    expect(api.toolResults).toEqual([expect.objectContaining({ isError: false, text: expect.stringContaining('approved-ran') })]);
    // Then the tool ran, and its PostToolUse hook found no prompt waiting (the decision came from the extension): its
    // guard ended it before Node started.
    expect(hookCalls(run)).toEqual([expect.objectContaining({ event: 'PermissionRequest', exitCode: 0 }), expect.objectContaining({ event: 'PostToolUse', exitCode: 0, stdout: '' })]);
  });

  it('a Bash write the person denies with a reason does not run; the model sees the reason', async () => {
    const api = await mockModel([bash('touch denied.txt'), { echo: true }]);
    const ext = await extension();
    const running = claude(api);
    const request = await nextPending(ext, 60_000);
    expectPermission(request, 'touch denied.txt');
    await decide(ext, request, 'rejected', { comment: 'not on a Friday: use the staging folder' });
    const run = await running;
    report('denied', run);
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(join(sandbox.work, 'denied.txt'))).toBe(false);
    expect(api.toolResults).toEqual([expect.objectContaining({ isError: true, text: expect.stringContaining('not on a Friday: use the staging folder') })]);
    expect(run.result?.permission_denials).toEqual([expect.objectContaining({ tool_name: 'Bash' })]);
  });

  it('a command the person edits runs as edited, not as the model asked', async () => {
    const api = await mockModel([bash('touch asked.txt'), { echo: true }]);
    const ext = await extension();
    const running = claude(api);
    const request = await nextPending(ext, 60_000);
    expectPermission(request, 'touch asked.txt');
    const asked = request.request.kind === 'permission' ? request.request.input : {};
    await decide(ext, request, 'approved', { values: { updatedInput: { ...asked, command: 'touch edited.txt' } } });
    const run = await running;
    report('edited', run);
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(join(sandbox.work, 'edited.txt'))).toBe(true);
    expect(existsSync(join(sandbox.work, 'asked.txt'))).toBe(false);
    expect(api.toolResults).toEqual([expect.objectContaining({ isError: false })]);
  });

  it('"always allow" saved with a decision: the next matching command runs and no new request reaches the person', async () => {
    const first = await mockModel([bash('touch first.txt'), { echo: true }]);
    const ext = await extension();
    const running = claude(first);
    const request = await nextPending(ext, 60_000);
    expectPermission(request, 'touch first.txt');
    await decide(ext, request, 'approved', { rule: { effect: 'allow', match: { tool: 'Bash', commandPrefix: 'touch', directory: sandbox.work }, expiresAt: null } });
    report('always allow, the decision that saves the rule', await running);
    expect(existsSync(join(sandbox.work, 'first.txt'))).toBe(true);

    // A new session, so the host's own session permissions cannot be what allows it: only the person's rule in the hub.
    const second = await mockModel([bash('touch second.txt'), { echo: true }]);
    const run = await claude(second);
    report('always allow, the command the rule decides', run);
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(join(sandbox.work, 'second.txt'))).toBe(true);
    expect(second.toolResults).toEqual([expect.objectContaining({ isError: false })]);
    // It reaches the extension decided (for the history), never as a question.
    const decided = await ext.notice('request.created', (p) => p.request.request.kind === 'permission' && p.request.request.command === 'touch second.txt', 10_000);
    expect(decided.request.status).toBe('approved');
    expect(decided.request.outcome).toMatchObject({ decision: 'approved', decidedVia: 'rule' });
    expect(createdSoFar(ext).filter((r) => r.status === 'pending')).toEqual([]);

    // The rule allows `touch …`, never a command chained after it: that one comes to the person.
    const chained = await mockModel([bash('touch third.txt; rm -f first.txt'), { echo: true }]);
    const runningChained = claude(chained);
    const asked = await nextPending(ext, 60_000);
    expectPermission(asked, 'touch third.txt; rm -f first.txt');
    await decide(ext, asked, 'rejected', { comment: 'not chained commands' });
    report('always allow, a chained command the rule does not cover', await runningChained);
    expect(existsSync(join(sandbox.work, 'third.txt'))).toBe(false);
    expect(existsSync(join(sandbox.work, 'first.txt'))).toBe(true);
  });

  it('"always allow rm in this project" never deletes outside it: `rm -f ../victim.txt` goes to the person (issue 33)', async () => {
    // On 072a673 the saved {commandPrefix: "rm", directory} allowed this with nobody asked, and the file was gone.
    const victim = join(sandbox.work, '..', 'victim.txt');
    writeFileSync(victim, 'keep me');
    writeFileSync(join(sandbox.work, 'build.log'), 'old');
    closers.push(() => rmSync(victim, { force: true }));
    const first = await mockModel([bash('rm -f build.log'), { echo: true }]);
    const ext = await extension();
    const running = claude(first);
    const request = await nextPending(ext, 60_000);
    expectPermission(request, 'rm -f build.log');
    await decide(ext, request, 'approved', { rule: { effect: 'allow', match: { tool: 'Bash', commandPrefix: 'rm', directory: sandbox.work }, expiresAt: null } });
    report('always allow rm in this project, the decision that saves the rule', await running);
    expect(existsSync(join(sandbox.work, 'build.log'))).toBe(false);

    const outside = await mockModel([bash('rm -f ../victim.txt'), { echo: true }]);
    const runningOutside = claude(outside);
    const asked = await nextPending(ext, 60_000);
    expectPermission(asked, 'rm -f ../victim.txt');
    await decide(ext, asked, 'rejected', { comment: 'not outside the project' });
    report('always allow rm in this project, a path outside it', await runningOutside);
    expect(readFileSync(victim, 'utf8')).toBe('keep me');
  });

  it('with no extension connected the hook decides nothing and files nothing: the host does what it does alone (print mode: denied, quickly)', async () => {
    const api = await mockModel([bash('touch nobody.txt'), { echo: true }]);
    const run = await claude(api);
    report('no extension', run);
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(join(sandbox.work, 'nobody.txt'))).toBe(false);
    const hooks = hookCalls(run);
    expect(hooks).toEqual([expect.objectContaining({ event: 'PermissionRequest', exitCode: 0 })]);
    expect(hooks[0]!.stdout.trim()).toBe('');
    expect(hooks[0]!.ms).toBeLessThan(5000);
    // The host's own answer, not a decision of the hook's.
    expect(api.toolResults).toEqual([expect.objectContaining({ isError: true, text: expect.stringContaining('needs approval') })]);
    // Nothing was filed: the hub's journal holds no request.
    const journal = join(sandbox.state, 'requests.jsonl');
    expect(existsSync(journal) ? readFileSync(journal, 'utf8').trim() : '').toBe('');
  });

  it("another MCP server's form (Elicitation) is answered in the extension, and the answer reaches that server", async () => {
    const mcpConfig = join(sandbox.root, 'mcp.json');
    writeFileSync(mcpConfig, JSON.stringify({ mcpServers: { [NORTHWIND.server]: { type: 'stdio', command: NORTHWIND.command, args: NORTHWIND.args } } }));
    const tool = `mcp__${NORTHWIND.server}__${NORTHWIND.tool}`;
    const api = await mockModel([{ toolUse: { name: tool, input: {} } }, { echo: true }]);
    const ext = await extension();
    const running = claude(api, ['--mcp-config', mcpConfig, '--strict-mcp-config', '--allowedTools', tool]);
    const request = await nextPending(ext, 60_000);
    expect(request.kind).toBe('form');
    expect(request.request).toMatchObject({ kind: 'form', requestedSchema: NORTHWIND.schema });
    expect(request.message).toContain(NORTHWIND.message);
    const answer = { version: '2.4.0', notify: true };
    await decide(ext, request, 'approved', { values: answer });
    const run = await running;
    report('elicitation', run);
    expect(run.code, run.stderr).toBe(0);
    expect(api.toolResults).toEqual([expect.objectContaining({ isError: false, text: `${NORTHWIND.receivedPrefix} ${JSON.stringify({ action: 'accept', content: answer })}` })]);
    expect(String(run.result?.result)).toContain(ECHO_PREFIX);
  });
});

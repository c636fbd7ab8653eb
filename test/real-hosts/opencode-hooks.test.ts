import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RequestView } from '../../shared/review-request.js';
import type { ScriptedExtension } from '../helpers/scripted-extension.js';
import { RunningHub, createdSoFar, decide, hooksInstall, nextPending } from './companion.js';
import { OPENCODE, hostSuite } from './host-bins.js';
import { MockChatCompletions } from './mock-chat-completions.js';
import { opencodeEnv, opencodeSandbox, opencodeServe, type OpencodeSandbox, type OpencodeServer } from './opencode-run.js';

// OpenCode 1.18.33 itself, as `opencode serve` (its `run` rejects every permission request at once by itself), played by
// a mock of the Chat Completions API, with the plugin `elicitly-companion hooks install opencode` writes into
// ~/.config/opencode/plugin: a bash command the model asks for (OpenCode's config asks about bash) waits for the person
// in the (scripted) extension, and the plugin replies with their answer.

describe.skipIf(!OPENCODE.found)(hostSuite("OpenCode's permission requests answered in the extension", OPENCODE), () => {
  let api: MockChatCompletions;
  let sandbox: OpencodeSandbox;
  let hub: RunningHub;
  let server: OpencodeServer;
  const closers: (() => Promise<void> | void)[] = [];

  async function start(command: string, turns?: MockChatCompletions): Promise<void> {
    api = turns ?? (await MockChatCompletions.shell(command));
    closers.push(() => api.close());
    sandbox = opencodeSandbox({ apiUrl: api.url });
    closers.push(() => sandbox.remove());
    hub = await RunningHub.start(sandbox.state, sandbox.home);
    closers.push(() => hub.stop());
    // The port and state dir go into the plugin's command: OpenCode's environment need not carry them.
    const install = await hooksInstall('opencode', [], { cwd: sandbox.work, env: { HOME: sandbox.home, ...hub.env } });
    expect(install.stdout).toContain('added permission.asked');
    expect(readFileSync(join(sandbox.pluginDir, 'elicitly.js'), 'utf8')).toMatch(/^\/\/ Written by `elicitly-companion hooks install opencode`/);
    server = await opencodeServe(OPENCODE.bin, sandbox, { env: opencodeEnv(sandbox) });
    closers.push(() => server.stop());
  }

  async function extension(): Promise<ScriptedExtension> {
    const ext = await hub.connectExtension();
    closers.push(() => ext.close());
    return ext;
  }

  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });

  function expectPermission(request: RequestView, command: string): void {
    expect(request.kind).toBe('permission');
    expect(request.request).toMatchObject({ kind: 'permission', host: 'opencode', hostName: 'OpenCode', event: 'permission.asked', tool: 'bash', command, cwd: sandbox.work, editable: false });
    expect(request.message).toBe('OpenCode wants to run a command');
  }

  function report(name: string, ms: number): void {
    console.log(`real-hosts: opencode serve, ${name}: turn ${ms} ms`);
  }

  it('a command the person allows runs, and the model sees its output', async () => {
    await start('touch approved.txt && echo approved-ran');
    const ext = await extension();
    const turn = await server.startPrompt('go');
    const request = await nextPending(ext, 60_000);
    expectPermission(request, 'touch approved.txt && echo approved-ran');
    await decide(ext, request, 'approved');
    const done = await turn.done;
    report('allowed', done.ms);
    expect(existsSync(join(sandbox.work, 'approved.txt'))).toBe(true);
    expect(api.toolResults).toEqual([expect.objectContaining({ content: expect.stringContaining('approved-ran') })]);
  });

  it('a command the person denies with a reason does not run; the model is told the reason', async () => {
    await start('touch denied.txt');
    const ext = await extension();
    const turn = await server.startPrompt('go');
    const request = await nextPending(ext, 60_000);
    expectPermission(request, 'touch denied.txt');
    await decide(ext, request, 'rejected', { comment: 'not on a Friday' });
    const done = await turn.done;
    report('denied', done.ms);
    expect(existsSync(join(sandbox.work, 'denied.txt'))).toBe(false);
    expect(api.toolResults).toEqual([expect.objectContaining({ content: 'The user rejected permission to use this specific tool call with the following feedback: not on a Friday' })]);
  });

  it('"always allow" saved with a decision: the next matching command is decided by the rule, never asked', async () => {
    await start('', await MockChatCompletions.start([
      { call: { name: 'bash', arguments: { command: 'touch first.txt', description: 'first' } } },
      { call: { name: 'bash', arguments: { command: 'touch second.txt', description: 'second' } } },
      { echo: true },
    ]));
    const ext = await extension();
    const turn = await server.startPrompt('go');
    const request = await nextPending(ext, 60_000);
    await decide(ext, request, 'approved', { rule: { effect: 'allow', match: { tool: 'bash', commandPrefix: 'touch', directory: sandbox.work }, expiresAt: null } });
    const done = await turn.done;
    report('always allow, then the command the rule decides', done.ms);
    expect(existsSync(join(sandbox.work, 'first.txt'))).toBe(true);
    expect(existsSync(join(sandbox.work, 'second.txt'))).toBe(true);
    const decided = await ext.notice('request.created', (p) => p.request.request.kind === 'permission' && p.request.request.command === 'touch second.txt', 10_000);
    expect(decided.request.outcome).toMatchObject({ decision: 'approved', decidedVia: 'rule' });
    expect(createdSoFar(ext).filter((r) => r.status === 'pending')).toEqual([]);
  });

  it('no reviewer connected: the plugin replies nothing and OpenCode\'s own prompt stays, until answered there', async () => {
    await start('touch nobody.txt');
    const turn = await server.startPrompt('go');
    const asked = await server.waitForEvent((e) => e.type === 'permission.asked', 30_000, 'the permission request');
    // The hook answered "no decision" at once (nobody connected): the request is still OpenCode's to answer.
    await server.waitForEvent(() => false, 1500, 'a reply that must not come').catch(() => undefined);
    expect((await server.pendingPermissions()).map((p) => p.id)).toEqual([asked.properties.id]);
    expect((await server.replyPermission(String(asked.properties.id), 'reject', 'answered in OpenCode')).status).toBe(200);
    const done = await turn.done;
    report('no reviewer, its own prompt', done.ms);
    expect(existsSync(join(sandbox.work, 'nobody.txt'))).toBe(false);
  });

  it('answered in OpenCode while the person has not decided: the request leaves the inbox at once', async () => {
    await start('touch elsewhere.txt');
    const ext = await extension();
    const turn = await server.startPrompt('go');
    const request = await nextPending(ext, 60_000);
    const [pending] = await server.pendingPermissions();
    expect((await server.replyPermission(pending!.id, 'once')).status).toBe(200);
    const removed = await ext.notice('request.removed', (p) => p.elicitationId === request.elicitationId, 20_000);
    expect(removed.status).toBe('canceled');
    const done = await turn.done;
    report('answered in OpenCode', done.ms);
    expect(existsSync(join(sandbox.work, 'elsewhere.txt'))).toBe(true);
  });
});

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { claudeEnv, claudePrint, claudeSandbox } from './claude-print.js';
import { codexEnv, codexExec, codexSandbox } from './codex-exec.js';
import { CLAUDE, CODEX, hostSuite } from './host-bins.js';
import type { Sandbox } from './host-process.js';
import { ECHO_PREFIX, MockMessagesApi } from './mock-messages-api.js';
import { MockResponsesApi } from './mock-responses-api.js';

// The mocks and drivers alone, with no companion in the way: a real host, played by a scripted model, runs a shell
// write the model asks for because the host's own settings allow it, and the model sees the tool's result. Every other
// real-host test stands on this.

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
function track<T extends { close: () => Promise<void> } | Sandbox>(thing: T): T {
  cleanups.push(() => ('remove' in thing ? thing.remove() : thing.close()));
  return thing;
}

describe.skipIf(!CLAUDE.found)(hostSuite('the mock Messages API drives claude -p', CLAUDE), () => {
  it('runs a Bash write the host allows (--allowedTools Bash) and shows the model its result', async () => {
    const api = track(await MockMessagesApi.start([{ toolUse: { name: 'Bash', input: { command: 'touch smoke.txt && echo wrote-smoke', description: 'write a file' } } }, { echo: true }]));
    const sandbox = track(claudeSandbox());
    const run = await claudePrint(CLAUDE.bin, sandbox, claudeEnv(sandbox, api.url), ['--allowedTools', 'Bash']);
    console.log(`real-hosts: claude -p smoke run ${run.ms} ms`);
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(join(sandbox.work, 'smoke.txt'))).toBe(true);
    expect(api.toolResults).toEqual([expect.objectContaining({ isError: false, text: expect.stringContaining('wrote-smoke') })]);
    expect(String(run.result?.result)).toContain(`${ECHO_PREFIX} tool_result(`);
  });
});

describe.skipIf(!CODEX.found)(hostSuite('the mock Responses API drives codex exec', CODEX), () => {
  it('runs an exec_command write (full access, never asks) and shows the model its output', async () => {
    const api = track(await MockResponsesApi.start([{ call: { name: 'exec_command', arguments: { cmd: 'touch smoke.txt && echo wrote-smoke' } } }, { echo: true }]));
    const sandbox = track(codexSandbox(api.url));
    const run = await codexExec(CODEX.bin, sandbox, codexEnv(sandbox), ['--dangerously-bypass-approvals-and-sandbox']);
    console.log(`real-hosts: codex exec smoke run ${run.ms} ms`);
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(join(sandbox.work, 'smoke.txt'))).toBe(true);
    expect(api.outputs).toEqual([expect.objectContaining({ text: expect.stringContaining('wrote-smoke') })]);
  });
});

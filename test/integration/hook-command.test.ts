// The built `elicitly-companion hook` against a real hub (the `hub` command), with a scripted extension deciding: what
// the host reads on stdout for each answer, and that every way of not answering prints nothing within a bounded time.
// Then `hooks install/uninstall` on real files.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RequestView } from '../../shared/review-request.js';
import { promptRequestId, waitingDir } from '../../server/hook/waiting-prompts.js';
import { hookEntry } from '../../server/hook/hooks-settings.js';
import { claudeCode } from '../../server/hook/hosts/claude-code.js';
import { listening } from '../../server/hub/status-command.js';
import { SERVER_ENTRY } from '../helpers/mcp-harness.js';
import { runCommand } from '../helpers/run-command.js';
import { freePort, pairedKey, ScriptedExtension } from '../helpers/scripted-extension.js';
import { until } from '../helpers/poll.js';

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'elicitly-hook-'));
  dirs.push(dir);
  return dir;
};

type Run = { code: number | null; stdout: string; stderr: string; ms: number };

/** The hook as a host runs it: stdin JSON, then stdout/stderr and how long it took. Bounded by `timeoutMs`. */
function hook(env: Record<string, string>, args: string[], stdin: unknown, timeoutMs = 20_000): Promise<Run> {
  return startHook(env, args, stdin, timeoutMs).done;
}

/** The same, with the process at hand: a test can signal it as its host would. */
function startHook(env: Record<string, string>, args: string[], stdin: unknown, timeoutMs = 20_000): { child: ChildProcess; done: Promise<Run & { signal: NodeJS.Signals | null }> } {
  const child = spawn(process.execPath, [SERVER_ENTRY, 'hook', ...args], { env: { ...process.env, ELICITLY_LOG_LEVEL: 'warn', ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  const done = new Promise<Run & { signal: NodeJS.Signals | null }>((resolve, reject) => {
    const started = performance.now();
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`hook did not end within ${timeoutMs} ms; stderr: ${stderr}`));
    }, timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, ms: performance.now() - started });
    });
    child.stdin.end(typeof stdin === 'string' ? stdin : JSON.stringify(stdin));
  });
  return { child, done };
}

function startHub(env: Record<string, string>, args: string[] = []): ChildProcess {
  return spawn(process.execPath, [SERVER_ENTRY, 'hub', ...args], { env: { ...process.env, ELICITLY_LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
}

function exited(child: ChildProcess, timeoutMs: number): Promise<{ code: number | null; stderr: string }> {
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the hub did not exit within ${timeoutMs} ms`)), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

const claudePermission = (command: string) => ({
  session_id: 'sess-1',
  transcript_path: '/t.jsonl',
  cwd: '/tmp',
  permission_mode: 'default',
  hook_event_name: 'PermissionRequest',
  tool_name: 'Bash',
  tool_input: { command },
  permission_suggestions: [{ type: 'addRules', rules: [{ toolName: 'Bash', ruleContent: 'touch:*' }], behavior: 'allow', destination: 'localSettings' }],
});
const claudePreToolUse = (command: string) => ({ session_id: 'sess-1', transcript_path: '/t.jsonl', cwd: '/tmp', permission_mode: 'default', hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command }, tool_use_id: 'toolu_1' });

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('hook against a running hub', () => {
  const stateDir = tempDir();
  const port = freePort();
  const env = { ELICITLY_STATE_DIR: stateDir, ELICITLY_PORT: String(port) };
  let hub: ChildProcess;
  let ext: ScriptedExtension;

  beforeAll(async () => {
    hub = startHub(env);
    await until('the hub listening', async () => ((await listening(port)) ? true : undefined));
    ext = await until('an extension connected', () => ScriptedExtension.connect(port, { key: pairedKey(stateDir) }).catch(() => undefined));
  });
  afterAll(async () => {
    ext?.close();
    if (hub.exitCode === null) {
      const gone = exited(hub, 5000);
      hub.kill('SIGTERM');
      await gone;
    }
  });

  /** The extension decides the next request it is shown, as soon as it is shown. */
  async function decideNext(decide: (id: string, request: RequestView) => Record<string, unknown>) {
    const created = await ext.notice('request.created', () => true, 15_000);
    const id = created.request.elicitationId;
    ext.send({ id: `d-${id}`, method: 'decide', params: { elicitationId: id, idempotencyKey: `k-${id}`, ...decide(id, created.request) } });
    return created.request;
  }

  it('allow: prints Claude Code\'s PermissionRequest allow, fast (the round trip is measured)', async () => {
    const [run, request] = await Promise.all([
      hook(env, ['--host', 'claude-code', 'PermissionRequest'], claudePermission('touch built.txt')),
      decideNext(() => ({ decision: 'approved' })),
    ]);
    expect(request.request).toMatchObject({ kind: 'permission', message: 'Claude Code wants to run a command', command: 'touch built.txt', tool: 'Bash', editable: true, sessionId: 'sess-1', cwd: '/tmp' });
    expect(request.requester).toMatchObject({ client: 'claude-code hook' });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } } });
    expect(run.stdout.trim().split('\n')).toHaveLength(1);
    // The round trip from hook start to decision printed, with an extension that decides at once.
    process.stderr.write(`hook round trip (allow, scripted extension): ${Math.round(run.ms)} ms\n`);
    expect(run.ms).toBeLessThan(10_000);
  });

  it('deny: the person\'s reason reaches the host', async () => {
    const [run] = await Promise.all([
      hook(env, ['--host', 'claude-code', 'PreToolUse'], claudePreToolUse('rm -rf build')),
      decideNext(() => ({ decision: 'rejected', comment: 'not the build dir, use make clean' })),
    ]);
    expect(JSON.parse(run.stdout)).toEqual({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'not the build dir, use make clean' } });
  });

  it('edited input: the host runs what the person edited', async () => {
    const [run] = await Promise.all([
      hook(env, ['--host', 'claude-code', 'PermissionRequest'], claudePermission('touch a.txt')),
      decideNext(() => ({ decision: 'approved', values: { updatedInput: { command: 'touch b.txt' } } })),
    ]);
    expect(JSON.parse(run.stdout)).toEqual({ hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow', updatedInput: { command: 'touch b.txt' } } } });
  });

  it('Codex PermissionRequest: allow and deny in its shape', async () => {
    const codex = { session_id: 's', transcript_path: null, cwd: '/tmp', permission_mode: 'default', model: 'gpt', turn_id: 't', hook_event_name: 'PermissionRequest', tool_name: 'Bash', tool_input: { command: 'touch c' } };
    const [run, request] = await Promise.all([hook(env, ['--host', 'codex', 'PermissionRequest'], codex), decideNext(() => ({ decision: 'rejected' }))]);
    expect(request.request).toMatchObject({ kind: 'permission', message: 'Codex wants to run a command', editable: false });
    expect(JSON.parse(run.stdout)).toEqual({ hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'deny', message: 'Denied by the person in Elicitly' } } });
  });

  it('Elicitation: another server\'s form answered in the extension', async () => {
    const input = {
      session_id: 's',
      cwd: '/tmp',
      hook_event_name: 'Elicitation',
      mcp_server_name: 'deployer',
      message: 'Which environment?',
      mode: 'form',
      requested_schema: { type: 'object', properties: { env: { type: 'string', enum: ['dev', 'prod'] } }, required: ['env'] },
    };
    const [run, request] = await Promise.all([hook(env, ['--host', 'claude-code', 'Elicitation'], input), decideNext(() => ({ decision: 'approved', values: { env: 'prod' } }))]);
    expect(request.request).toMatchObject({ kind: 'form', message: 'The MCP server "deployer" (in Claude Code) asks: Which environment?' });
    expect(JSON.parse(run.stdout)).toEqual({ hookSpecificOutput: { hookEventName: 'Elicitation', action: 'accept', content: { env: 'prod' } } });
  });

  it('--wait ends with no answer: nothing printed, and the request is canceled', async () => {
    const run = await hook(env, ['--host', 'claude-code', '--wait', '1', 'PermissionRequest'], claudePermission('touch late.txt'));
    expect(run).toMatchObject({ code: 0, stdout: '' });
    expect(run.stderr).toContain('no answer within 1 s; the request is canceled');
    const created = await ext.notice('request.created');
    const removed = await ext.notice('request.removed', (p) => p.elicitationId === created.request.elicitationId);
    expect(removed.status).toBe('canceled');
  });

  for (const signal of ['SIGKILL', 'SIGTERM'] as const) {
    it(`finding 5: a hook its host ends with ${signal} (${signal === 'SIGKILL' ? 'Codex at its timeout' : 'Claude Code on a "No" in its terminal, or at the timeout'}) withdraws its request at once`, async () => {
      const running = startHook(env, ['--host', 'claude-code', '--wait', '60', 'PermissionRequest'], claudePermission(`touch ${signal}.txt`));
      const created = await ext.notice('request.created', (p) => p.request.request.kind === 'permission' && p.request.request.command === `touch ${signal}.txt`, 15_000);
      const killed = Date.now();
      running.child.kill(signal);
      const removed = await ext.notice('request.removed', (p) => p.elicitationId === created.request.elicitationId, 5000);
      process.stderr.write(`hook ended by ${signal}: its request left the inbox ${Date.now() - killed} ms later\n`);
      expect(removed.status).toBe('canceled');
      const end = await running.done;
      expect(end.stdout).toBe('');
      // Nothing can decide it any more: a decision now is refused.
      const late = await ext.call('decide', { elicitationId: created.request.elicitationId, idempotencyKey: `late-${signal}`, decision: 'approved' });
      expect(late.result).toMatchObject({ ok: false, reason: 'withdrawn' });
    });
  }

  it('finding 5: the PostToolUse hook of the same tool call withdraws the request a PermissionRequest hook waits on, and that hook ends printing nothing', async () => {
    // Claude Code's PermissionRequest stdin has no tool_use_id; the call's line is in the session transcript already.
    const transcript = join(tempDir(), 'session.jsonl');
    const toolInput = { command: 'touch answered-in-terminal.txt', description: 'touch' };
    writeFileSync(transcript, [
      JSON.stringify({ type: 'user', message: { role: 'user', content: 'go' } }),
      JSON.stringify({ type: 'assistant', message: { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_earlier', name: 'Bash', input: toolInput }] } }),
      JSON.stringify({ type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_earlier', content: 'done' }] } }),
      JSON.stringify({ type: 'assistant', message: { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_now', name: 'Bash', input: toolInput }] } }),
      '',
    ].join('\n'));
    const asking = startHook(env, ['--host', 'claude-code', '--wait', '60', 'PermissionRequest'], { ...claudePermission('x'), session_id: 'sess-post', transcript_path: transcript, tool_input: toolInput });
    const created = await ext.notice('request.created', (p) => p.request.request.kind === 'permission' && p.request.request.command === toolInput.command, 15_000);
    // The request is named by the call it is about (the newest one without a result), and marked as waited on.
    expect(created.request.elicitationId).toBe(promptRequestId('claude-code', 'sess-post', 'toolu_now'));
    expect(readdirSync(waitingDir(stateDir))).toContain(created.request.elicitationId);
    // The person answered in the terminal: the tool ran, and Claude Code runs the PostToolUse hook for that call.
    const post = await hook(env, ['--host', 'claude-code', 'PostToolUse'], { session_id: 'sess-post', transcript_path: transcript, cwd: '/tmp', hook_event_name: 'PostToolUse', tool_name: 'Bash', tool_input: toolInput, tool_response: { stdout: '' }, tool_use_id: 'toolu_now' });
    expect(post).toMatchObject({ code: 0, stdout: '' });
    expect(post.stderr).toContain(`withdrew ${created.request.elicitationId}`);
    const removed = await ext.notice('request.removed', (p) => p.elicitationId === created.request.elicitationId, 5000);
    expect(removed.status).toBe('canceled');
    const end = await asking.done;
    expect(end).toMatchObject({ code: 0, stdout: '' });
    expect(end.stderr).toContain('the request canceled');
    expect(readdirSync(waitingDir(stateDir))).not.toContain(created.request.elicitationId);
    // A PostToolUse of a call no hook waits on does nothing, and does not even open a socket.
    const other = await hook(env, ['--host', 'claude-code', 'PostToolUseFailure'], { session_id: 'sess-post', cwd: '/tmp', hook_event_name: 'PostToolUseFailure', tool_name: 'Bash', tool_input: toolInput, tool_use_id: 'toolu_other', error: 'Exit code 1' });
    expect(other).toMatchObject({ code: 0, stdout: '' });
    expect(other.stderr).toContain('no prompt of this call is waiting');
  });

  it('bad stdin: nothing printed, exit 0, the field named on stderr', async () => {
    const run = await hook(env, ['--host', 'claude-code', 'PermissionRequest'], { ...claudePermission('x'), tool_input: 'touch x' });
    expect(run).toMatchObject({ code: 0, stdout: '' });
    expect(run.stderr).toMatch(/tool_input: /);
    const garbage = await hook(env, ['--host', 'claude-code', 'PermissionRequest'], 'not json at all');
    expect(garbage).toMatchObject({ code: 0, stdout: '' });
    expect(garbage.stderr).toContain('stdin: is not JSON');
  });

  it('a second `hub` on the same port: exits 0 saying another process is the hub', async () => {
    const second = startHub(env);
    const end = await exited(second, 10_000);
    expect(end.code).toBe(0);
    expect(end.stderr).toContain(`another process (pid ${hub.pid}) already is the hub`);
  });
});

describe('hook without a reviewer', () => {
  it('no extension connected: nothing printed within a bounded time, nothing filed', async () => {
    const stateDir = tempDir();
    const port = freePort();
    const env = { ELICITLY_STATE_DIR: stateDir, ELICITLY_PORT: String(port) };
    const hub = startHub(env, ['--idle-seconds', '8']);
    const end = exited(hub, 30_000);
    await until('the hub listening', async () => ((await listening(port)) ? true : undefined));
    const run = await hook(env, ['--host', 'claude-code', 'PermissionRequest'], claudePermission('touch x'));
    expect(run).toMatchObject({ code: 0, stdout: '' });
    expect(run.stderr).toContain('no browser extension is connected');
    expect(run.ms).toBeLessThan(5000);
    const status = await runCommand(process.execPath, [SERVER_ENTRY, 'status', '--json'], { env });
    expect(JSON.parse(status.stdout)).toMatchObject({ state: 'running', hub: { pending: 0 } });
    // Idle (no pending request, no relay): the hub leaves by itself.
    const ended = await end;
    expect(ended.code).toBe(0);
    expect(ended.stderr).toContain('idle for 8 s');
  });

  it('no extension connected, but one of the person\'s rules decides: the rule answers; a request no rule covers still falls back, unfiled', async () => {
    const stateDir = tempDir();
    const port = freePort();
    const env = { ELICITLY_STATE_DIR: stateDir, ELICITLY_PORT: String(port) };
    const hub = startHub(env);
    try {
      await until('the hub listening', async () => ((await listening(port)) ? true : undefined));
      const ext = await until('an extension connected', () => ScriptedExtension.connect(port, { key: pairedKey(stateDir) }).catch(() => undefined));
      // The person allows one `touch` and saves "always allow touch" with it.
      const first = hook(env, ['--host', 'claude-code', 'PermissionRequest'], claudePermission('touch one.txt'));
      const created = await ext.notice('request.created', () => true, 15_000);
      ext.request('decide', {
        elicitationId: created.request.elicitationId, idempotencyKey: 'k-rule', decision: 'approved',
        rule: { effect: 'allow', match: { tool: 'Bash', commandPrefix: 'touch' }, expiresAt: null },
      });
      expect(JSON.parse((await first).stdout)).toMatchObject({ hookSpecificOutput: { decision: { behavior: 'allow' } } });
      ext.close();
      await until('no extension connected', async () => {
        const status = await runCommand(process.execPath, [SERVER_ENTRY, 'status', '--json'], { env });
        return (JSON.parse(status.stdout) as { hub: { extensionsConnected: number } }).hub.extensionsConnected === 0 ? true : undefined;
      });

      const covered = await hook(env, ['--host', 'claude-code', 'PermissionRequest'], claudePermission('touch two.txt'));
      expect(JSON.parse(covered.stdout)).toEqual({ hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } } });
      expect(covered.stderr).toContain('allow (rule, rule_');

      const uncovered = await hook(env, ['--host', 'claude-code', 'PermissionRequest'], claudePermission('rm two.txt'));
      expect(uncovered).toMatchObject({ code: 0, stdout: '' });
      expect(uncovered.stderr).toContain('no browser extension is connected');
      const status = await runCommand(process.execPath, [SERVER_ENTRY, 'status', '--json'], { env });
      expect(JSON.parse(status.stdout)).toMatchObject({ hub: { pending: 0 } });
      // Two requests were filed, both decided: the person's and the rule's; the uncovered one never was.
      const journal = readFileSync(join(stateDir, 'requests.jsonl'), 'utf8');
      expect(journal).toContain('touch two.txt');
      expect(journal).not.toContain('rm two.txt');
    } finally {
      const gone = exited(hub, 5000);
      hub.kill('SIGTERM');
      await gone;
    }
  });

  it('no hub: nothing printed, and a hub appears on the port for the next prompt', async () => {
    const stateDir = tempDir();
    const port = freePort();
    const env = { ELICITLY_STATE_DIR: stateDir, ELICITLY_PORT: String(port) };
    const run = await hook(env, ['--host', 'codex', 'PreToolUse'], { session_id: 's', cwd: '/tmp', hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'ls' }, tool_use_id: 'c' });
    expect(run).toMatchObject({ code: 0, stdout: '' });
    expect(run.stderr).toContain(`no hub on 127.0.0.1:${port}: started one`);
    const pid = await until('a hub on the port', async () => {
      const status = await runCommand(process.execPath, [SERVER_ENTRY, 'status', '--json'], { env });
      return status.code === 0 ? (JSON.parse(status.stdout) as { hub: { pid: number } }).hub.pid : undefined;
    });
    // It is detached from the hook: stop it by its pid.
    process.kill(pid, 'SIGTERM');
    await until('the spawned hub gone', async () => ((await listening(port)) ? undefined : true));
  });
});

describe('hooks install / uninstall / status', () => {
  const settingsDir = () => {
    const home = tempDir();
    const claudeDir = join(home, 'claude');
    mkdirSync(claudeDir);
    return { home, claudeDir, env: { HOME: home, CLAUDE_CONFIG_DIR: claudeDir, CODEX_HOME: join(home, 'codex'), ELICITLY_STATE_DIR: join(home, 'state') } };
  };
  const cli = (env: Record<string, string>, args: string[]) => runCommand(process.execPath, [SERVER_ENTRY, ...args], { env: { ELICITLY_LOG_LEVEL: 'warn', ...env }, timeout: 15_000 });

  it('Claude Code: install twice = one entry per event and one backup; uninstall leaves the other hooks untouched', async () => {
    const { claudeDir, env } = settingsDir();
    const file = join(claudeDir, 'settings.json');
    const other = { model: 'opus', hooks: { PermissionRequest: [{ matcher: 'Bash', hooks: [{ type: 'command', command: '/usr/local/bin/audit.sh' }] }] } };
    writeFileSync(file, `${JSON.stringify(other, null, 2)}\n`);

    const first = await cli(env, ['hooks', 'install', 'claude-code', '--wait', '60']);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(`${file}:\n  added PermissionRequest: `);
    expect(first.stdout).toContain('(timeout 70 s)');
    const second = await cli(env, ['hooks', 'install', 'claude-code', '--wait', '60']);
    expect(second.stdout).toBe(`${file}: already as wanted, nothing changed\n`);

    const settings = JSON.parse(readFileSync(file, 'utf8')) as { hooks: Record<string, { hooks: { command: string; timeout?: number }[] }[]> };
    const ours = Object.values(settings.hooks).flat().flatMap((g) => g.hooks).filter((h) => h.command.includes(' hook --host claude-code '));
    // PostToolUse and PostToolUseFailure come with PermissionRequest: they withdraw a prompt answered in the terminal.
    expect(ours.map((h) => [h.command.split(' ').at(-1), h.timeout])).toEqual([['PermissionRequest', 70], ['Elicitation', 70], ['PostToolUse', 10], ['PostToolUseFailure', 10]]);
    // The state dir was set for this install: the command carries it, so the hook finds this hub whatever the host passes on.
    const state = `ELICITLY_STATE_DIR=${env.ELICITLY_STATE_DIR}`;
    expect(ours[0]!.command).toBe(`${state} ${process.execPath} ${SERVER_ENTRY} hook --host claude-code --wait 60 PermissionRequest`);
    expect(ours[2]!.command).toBe(`[ -z "$(ls -A ${join(env.ELICITLY_STATE_DIR, 'waiting-prompts')} 2>/dev/null)" ] || ${state} ${process.execPath} ${SERVER_ENTRY} hook --host claude-code PostToolUse`);
    expect(readdirSync(claudeDir).filter((f) => f.startsWith('settings.json.elicitly-backup-'))).toHaveLength(1);

    const status = await cli(env, ['hooks', 'status']);
    expect(status.stdout).toContain(`claude-code (user): installed in ${file}\n  PermissionRequest: timeout 70 s\n  Elicitation: timeout 70 s\n  PostToolUse: timeout 10 s\n  PostToolUseFailure: timeout 10 s\n`);
    expect(status.stdout).toContain('codex (user): not installed');

    const removed = await cli(env, ['hooks', 'uninstall', 'claude-code']);
    expect(removed.stdout).toContain('removed PermissionRequest');
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(other);
  });

  it('Codex: a marked block in config.toml, removed byte for byte', async () => {
    const { home, env } = settingsDir();
    const file = join(home, 'codex', 'config.toml');
    mkdirSync(join(home, 'codex'));
    const before = 'model = "o4"\n\n[[hooks.PreToolUse]]\nmatcher = "Bash"\n[[hooks.PreToolUse.hooks]]\ntype = "command"\ncommand = "audit"\n';
    writeFileSync(file, before);
    const install = await cli(env, ['hooks', 'install', 'codex']);
    expect(install.code).toBe(0);
    const text = readFileSync(file, 'utf8');
    expect(text.startsWith(before)).toBe(true);
    expect(text).toContain(`command = ${JSON.stringify(`ELICITLY_STATE_DIR=${env.ELICITLY_STATE_DIR} ${process.execPath} ${SERVER_ENTRY} hook --host codex --wait 110 PermissionRequest`)}\ntimeout = 120\n`);
    expect((await cli(env, ['hooks', 'install', 'codex'])).stdout).toContain('nothing changed');
    await cli(env, ['hooks', 'uninstall', 'codex']);
    expect(readFileSync(file, 'utf8')).toBe(before);
  });

  it('issue 36: hooks status names each host\'s version on PATH, or that it is not there, and whether a hook would reach a hub', async () => {
    const { home, env } = settingsDir();
    const bin = join(home, 'bin');
    mkdirSync(bin);
    // A stand-in for Claude Code on PATH that prints its version as the real one does; the other hosts are absent.
    writeFileSync(join(bin, 'claude'), '#!/bin/sh\necho "2.1.332 (Claude Code)"\n', { mode: 0o755 });
    const port = freePort();
    const at = { ...env, ELICITLY_PORT: String(port), PATH: `${bin}:/usr/bin:/bin` };
    const none = await cli(at, ['hooks', 'status']);
    expect(none.stdout.split('\n')[0]).toBe(`hub: no hub on 127.0.0.1:${port}: the first prompt starts one (the host asks in its terminal that once)`);
    expect(none.stdout).toContain('claude-code: Claude Code 2.1.332 (Claude Code)\n');
    expect(none.stdout).toContain('codex: Codex not found (no `codex` on PATH)\n');
    expect(none.stdout).toContain('gemini-cli: Gemini CLI not found (no `gemini` on PATH)\n');
    const hub = startHub({ ELICITLY_STATE_DIR: env.ELICITLY_STATE_DIR, ELICITLY_PORT: String(port) });
    try {
      await until('the hub listening', async () => ((await listening(port)) ? true : undefined));
      expect((await cli(at, ['hooks', 'status'])).stdout.split('\n')[0]).toBe(`hub: a hub answers on 127.0.0.1:${port}: a hook would reach it`);
    } finally {
      const gone = exited(hub, 5000);
      hub.kill('SIGTERM');
      await gone;
    }
  });

  it('issue 36: a port and state dir set for the install are written into the command, and the hook reaches that hub from an empty environment', async () => {
    const { home, claudeDir, env } = settingsDir();
    const port = freePort();
    const stateDir = join(home, 'my state');
    const installed = await cli({ ...env, ELICITLY_STATE_DIR: stateDir, ELICITLY_PORT: String(port) }, ['hooks', 'install', 'claude-code', '--events', 'PreToolUse']);
    expect(installed.code, installed.stderr).toBe(0);
    const settings = JSON.parse(readFileSync(join(claudeDir, 'settings.json'), 'utf8')) as { hooks: { PreToolUse: { hooks: { command: string }[] }[] } };
    const command = settings.hooks.PreToolUse[0]!.hooks[0]!.command;
    expect(command).toBe(`ELICITLY_PORT=${port} ELICITLY_STATE_DIR='${stateDir}' ${process.execPath} ${SERVER_ENTRY} hook --host claude-code --wait 110 PreToolUse`);
    // The default port is not written: nothing is said that would be true anyway.
    const plain = await cli({ HOME: home, CLAUDE_CONFIG_DIR: join(home, 'other') }, ['hooks', 'install', 'claude-code']);
    expect(readFileSync(join(home, 'other', 'settings.json'), 'utf8')).not.toMatch(/ELICITLY_(PORT|STATE_DIR)=/);
    expect(plain.code).toBe(0);

    // The host runs the command through a shell with nothing of ours in its environment: the hook finds no hub on that
    // port (it starts one there for the next prompt), so it used the command's port and state dir.
    const shell = spawn('/bin/sh', ['-c', command], { env: { PATH: process.env.PATH ?? '', HOME: home }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    shell.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    shell.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    shell.stdin.end(JSON.stringify({ session_id: 's', cwd: home, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'ls' } }));
    const code = await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => shell.kill('SIGKILL'), 15_000);
      shell.on('close', (c) => {
        clearTimeout(timer);
        resolve(c);
      });
    });
    expect({ code, stdout }).toEqual({ code: 0, stdout: '' });
    expect(stderr).toContain(`no hub on 127.0.0.1:${port}: started one`);
    // The hub it started uses the command's state dir: asked with that port and state dir, it answers.
    const at = { ELICITLY_STATE_DIR: stateDir, ELICITLY_PORT: String(port) };
    const pid = await until('a hub on the command\'s port, with its state dir', async () => {
      const status = await runCommand(process.execPath, [SERVER_ENTRY, 'status', '--json'], { env: at });
      return status.code === 0 ? (JSON.parse(status.stdout) as { hub: { pid: number } }).hub.pid : undefined;
    });
    process.kill(pid, 'SIGTERM');
    await until('the hub gone', async () => ((await listening(port)) ? undefined : true));
  });

  it('finding 5: the PostToolUse guard starts Node only while a prompt is waited on (an empty folder costs a `ls`)', async () => {
    const { home, env } = settingsDir();
    const waiting = join(home, 'waiting');
    const started = join(home, 'started');
    // A stand-in for node that only says it was started: the guard decides whether it is.
    const fakeNode = join(home, 'fake-node.sh');
    writeFileSync(fakeNode, `#!/bin/sh\necho "$@" >> ${JSON.stringify(started)}\n`, { mode: 0o755 });
    const { command } = hookEntry({ node: fakeNode, script: 'main.js', host: claudeCode, waitSeconds: 110, waitingDir: waiting }, 'PostToolUse');
    const run = () => runCommand('/bin/sh', ['-c', command], { env });
    expect((await run()).code).toBe(0);
    mkdirSync(waiting);
    expect((await run()).code).toBe(0);
    expect(() => readFileSync(started, 'utf8')).toThrow();
    writeFileSync(join(waiting, 'el_pwaiting'), '1');
    expect((await run()).code).toBe(0);
    expect(readFileSync(started, 'utf8')).toBe('main.js hook --host claude-code PostToolUse\n');
  });

  it('a settings file that is not JSON is refused, never overwritten', async () => {
    const { claudeDir, env } = settingsDir();
    const file = join(claudeDir, 'settings.json');
    writeFileSync(file, '{ "model": "opus", // a comment\n}');
    const run = await cli(env, ['hooks', 'install', 'claude-code']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('is not valid JSON');
    expect(readFileSync(file, 'utf8')).toBe('{ "model": "opus", // a comment\n}');
  });
});

// An agent on another machine (a devcontainer, an SSH host) joins this computer's hub through a tunnel with
// ELICITLY_HUB_URL and a key from `key export`. The tunnel here is a TCP forwarder in the test on another port; the
// "other machine" is a server process with a state dir and a port of its own, neither of which it may touch. The hub is
// the real `hub` command; a scripted extension is the person.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { listening } from '../../server/hub/status-command.js';
import { formatRelayToken } from '../../server/remote/relay-token.js';
import { StateDir } from '../../server/state-dir.js';
import { APP_META_KEY, APP_MIME_TYPE, UI_EXTENSION } from '../../shared/app-surface.js';
import type { Grant } from '../../shared/peer-calls.js';
import { connect, SERVER_ENTRY, type Harness, type ToolResult } from '../helpers/mcp-harness.js';
import { runCommand } from '../helpers/run-command.js';
import { freePort, pairedKey, ScriptedExtension } from '../helpers/scripted-extension.js';
import { until } from '../helpers/poll.js';

const root = mkdtempSync(join(tmpdir(), 'elicitly-remote-relay-'));
const hubDir = join(root, 'hub-machine');
const hubPort = freePort();
const hubEnv = { ELICITLY_STATE_DIR: hubDir, ELICITLY_PORT: String(hubPort), ELICITLY_LOG_LEVEL: 'warn' };

/** The tunnel: every connection to its port is piped to the hub's, counted so the test knows traffic went through it. */
function forwarder(to: number): Promise<{ server: Server; port: number; connections: () => number; sockets: Set<Socket> }> {
  let count = 0;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    count++;
    const upstream = createConnection({ host: '127.0.0.1', port: to });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => sockets.delete(socket));
    }
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      if (address === null || typeof address === 'string') return reject(new Error('no port'));
      resolve({ server, port: address.port, connections: () => count, sockets });
    });
  });
}

async function exportKey(name: string): Promise<{ token: string; keyId: string }> {
  const run = await runCommand(process.execPath, [SERVER_ENTRY, 'key', 'export', '--name', name], { env: hubEnv, timeout: 15_000 });
  expect(run.code).toBe(0);
  const token = run.stdout.trim();
  const keyId = token.split('.')[2] ?? '';
  return { token, keyId };
}

/**
 * A key exported with grants (`key export --allow <grant>`), as the hub's state dir records it, and its token. The
 * command's flag is not what this file tests; the grant the hub reads is.
 */
function exportGranted(name: string, allow: readonly Grant[]): { token: string; keyId: string } {
  const key = new StateDir(hubDir).addRelayKey(name, allow);
  return { token: formatRelayToken({ port: hubPort, keyId: key.keyId, key: key.key }), keyId: key.keyId };
}

/** A host that renders MCP Apps: it declares the UI extension, so a server that offers the review inside the chat would. */
const APP_HOST = { elicitation: { form: {} }, extensions: { [UI_EXTENSION]: { mimeTypes: [APP_MIME_TYPE] } } };

/** An agent on the other machine: its own (never made) state dir and port, the hub through the tunnel. */
async function remoteAgent(tunnelPort: number, token: string, capabilities?: Record<string, unknown>): Promise<{ agent: Harness; stateDir: string; port: number }> {
  const stateDir = join(root, `other-machine-${Math.random().toString(16).slice(2)}`);
  const port = freePort();
  const agent = await connect('v2-2025', {
    env: { ELICITLY_STATE_DIR: stateDir, ELICITLY_PORT: String(port), ELICITLY_HUB_URL: `ws://127.0.0.1:${tunnelPort}`, ELICITLY_HUB_KEY: token },
    ...(capabilities ? { capabilities } : {}),
  });
  return { agent, stateDir, port };
}

const error = (result: ToolResult) => (result.isError ? (result.structuredContent as { error: string; message: string }) : undefined);

describe('a relay on another machine, through a tunnel, with an exported key', () => {
  let hub: ChildProcess;
  let tunnel: Awaited<ReturnType<typeof forwarder>>;
  let ext: ScriptedExtension;
  const agents: Harness[] = [];

  beforeAll(async () => {
    hub = spawn(process.execPath, [SERVER_ENTRY, 'hub', '--idle-seconds', '600'], { env: { ...process.env, ...hubEnv }, stdio: ['ignore', 'ignore', 'pipe'] });
    await until('the hub listening', async () => ((await listening(hubPort)) ? true : undefined));
    ext = await until('the extension connected', () => ScriptedExtension.connect(hubPort, { key: pairedKey(hubDir) }).catch(() => undefined));
    tunnel = await forwarder(hubPort);
  });
  afterAll(async () => {
    ext?.close();
    await Promise.allSettled(agents.map((a) => a.close()));
    for (const socket of tunnel?.sockets ?? []) socket.destroy();
    await new Promise<void>((resolve) => (tunnel ? tunnel.server.close(() => resolve()) : resolve()));
    if (hub && hub.exitCode === null) {
      const gone = new Promise<void>((resolve) => hub.once('exit', () => resolve()));
      hub.kill('SIGTERM');
      await Promise.race([gone, new Promise((r) => setTimeout(r, 5000))]);
    }
    rmSync(root, { recursive: true, force: true });
  });

  it('files its approval on the hub, gets the answer, binds nothing and writes nothing on its own machine; revoked, it is cut off', async () => {
    const { token, keyId } = await exportKey('devcontainer');
    expect(token).toMatch(new RegExp(`^ek1\\.${hubPort}\\.k_[0-9a-f]{16}\\.[0-9a-f]{64}$`));
    const { agent, stateDir, port } = await remoteAgent(tunnel.port, token);
    agents.push(agent);

    const created = await agent.callTool('elicit_approval', { message: 'Deploy from the devcontainer?', context: { message: 'Deploy from the devcontainer?' } }, { timeoutMs: 30_000 });
    expect(error(created), agent.stderr()).toBeUndefined();
    const id = (created.structuredContent as { elicitationId: string }).elicitationId;
    // The person sees it on the hub's computer, and decides it there.
    const shown = await ext.notice('request.created', (p) => p.request.elicitationId === id, 10_000);
    expect(shown.request.elicitationId).toBe(id);
    expect((await ext.call('decide', { elicitationId: id, idempotencyKey: `k-${id}`, decision: 'approved' })).result).toMatchObject({ ok: true, status: 'approved' });
    const result = await agent.callTool('elicit_result', { elicitationId: id });
    expect(result.structuredContent).toMatchObject({ decision: 'approved', decidedVia: 'extension' });

    expect(tunnel.connections()).toBeGreaterThanOrEqual(1);
    // The other machine: no hub of its own, no state of its own.
    expect(await listening(port)).toBe(false);
    expect(existsSync(stateDir)).toBe(false);
    const doctor = await agent.callTool('elicit_doctor', { checkCompanion: true });
    expect(doctor.structuredContent).toMatchObject({ companion: { hub: { role: 'relay' } } });

    const revoked = await runCommand(process.execPath, [SERVER_ENTRY, 'key', 'revoke', keyId], { env: hubEnv, timeout: 15_000 });
    expect(revoked.code).toBe(0);
    const revokedAt = Date.now();
    // Its next call is refused, within a bound: the hub cuts its socket, and the key no longer opens another.
    const refused = await until(
      'a call refused after the revocation',
      async () => error(await agent.callTool('elicit_status', { elicitationId: id }, { timeoutMs: 30_000 })),
      20_000,
    );
    process.stderr.write(`remote relay: refused ${Date.now() - revokedAt} ms after \`key revoke\`: ${refused.message}\n`);
    expect(Date.now() - revokedAt).toBeLessThan(10_000);
    expect(refused.error).toBe('unavailable');
    expect(refused.message).toContain(keyId);
    expect(refused.message).toContain('key export');
    expect(await listening(port)).toBe(false);
    expect(existsSync(stateDir)).toBe(false);
  }, 60_000);

  it('finding 1: a server started with ELICITLY_HUB_URL does not offer the review inside the chat, even to a host that renders apps', async () => {
    const { token } = exportGranted('app host machine', []);
    const { agent } = await remoteAgent(tunnel.port, token, APP_HOST);
    agents.push(agent);
    // An exported key never decides, so the chat's review could not either: no resources, no app-only tools, no key.
    expect(agent.serverCapabilities()).not.toHaveProperty('resources');
    const names = (await agent.listTools()).map((t) => t.name);
    expect(names).toContain('elicit_approval');
    expect(names).not.toContain('elicit_app_view');
    expect(names).not.toContain('elicit_app_decide');
    const created = await agent.callTool('elicit_approval', { message: 'Shown in the chat?', context: { a: 1 } }, { timeoutMs: 30_000 });
    expect(error(created), agent.stderr()).toBeUndefined();
    expect(created._meta?.[APP_META_KEY]).toBeUndefined();
    const id = (created.structuredContent as { elicitationId: string }).elicitationId;
    await ext.notice('request.created', (p) => p.request.elicitationId === id, 10_000);
    expect((await agent.callTool('elicit_cancel', { elicitationId: id })).structuredContent).toMatchObject({ status: 'canceled' });
  }, 60_000);

  it('finding 1: an agent with one exported key cannot read, wait on or cancel a request another key’s agent filed', async () => {
    const first = await remoteAgent(tunnel.port, (await exportKey('first container')).token);
    const second = await remoteAgent(tunnel.port, (await exportKey('second container')).token);
    agents.push(first.agent, second.agent);
    const created = await first.agent.callTool('elicit_approval', { message: 'Only mine', context: { secret: 'first container plan' } }, { timeoutMs: 30_000 });
    expect(error(created), first.agent.stderr()).toBeUndefined();
    const id = (created.structuredContent as { elicitationId: string }).elicitationId;
    await ext.notice('request.created', (p) => p.request.elicitationId === id, 10_000);
    for (const [tool, args] of [
      ['elicit_status', { elicitationId: id }],
      ['elicit_result', { elicitationId: id }],
      ['elicit_await', { elicitationId: id, waitSeconds: 1 }],
      ['elicit_cancel', { elicitationId: id }],
    ] as const) {
      const answer = await second.agent.callTool(tool, args, { timeoutMs: 30_000 });
      expect(JSON.stringify(answer), tool).toContain('not_found');
      expect(JSON.stringify(answer), tool).not.toContain('first container plan');
    }
    // Untouched, and its own agent still reads it.
    expect((await first.agent.callTool('elicit_status', { elicitationId: id })).structuredContent).toEqual({ status: 'pending' });
    expect((await first.agent.callTool('elicit_cancel', { elicitationId: id })).structuredContent).toMatchObject({ status: 'canceled' });
  }, 60_000);

  const hookInput = (command: string) => ({ session_id: 's', transcript_path: '/t.jsonl', cwd: '/tmp', permission_mode: 'default', hook_event_name: 'PermissionRequest', tool_name: 'Bash', tool_input: { command } });
  function remoteHook(token: string, stateDir: string, port: number, command: string) {
    return runCommand('sh', ['-c', `printf '%s' "$HOOK_INPUT" | "${process.execPath}" "${SERVER_ENTRY}" hook --host claude-code --wait 30 PermissionRequest`], {
      env: { HOOK_INPUT: JSON.stringify(hookInput(command)), ELICITLY_STATE_DIR: stateDir, ELICITLY_PORT: String(port), ELICITLY_HUB_URL: `ws://127.0.0.1:${tunnel.port}`, ELICITLY_HUB_KEY: token, ELICITLY_LOG_LEVEL: 'warn' },
      timeout: 45_000,
    });
  }

  it('a hook on the other machine, its key granted `permission`, asks through the tunnel too, and starts no hub there', async () => {
    const { token } = exportGranted('hook machine', ['permission']);
    const stateDir = join(root, 'hook-machine');
    const port = freePort();
    const hookRun = remoteHook(token, stateDir, port, 'make deploy');
    const shown = await ext.notice('request.created', (p) => p.request.request.kind === 'permission', 15_000);
    expect((await ext.call('decide', { elicitationId: shown.request.elicitationId, idempotencyKey: `k-${shown.request.elicitationId}`, decision: 'approved' })).result).toMatchObject({ ok: true });
    const run = await hookRun;
    expect(JSON.parse(run.stdout), run.stderr).toEqual({ hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } } });
    expect(await listening(port)).toBe(false);
    expect(existsSync(stateDir)).toBe(false);
  }, 60_000);

  it('finding 1: a hook whose exported key lacks the `permission` grant files nothing; the host asks in its terminal', async () => {
    const { token, keyId } = await exportKey('no grant');
    const stateDir = join(root, 'hook-machine-no-grant');
    const port = freePort();
    const run = await remoteHook(token, stateDir, port, 'make release');
    // No decision on stdout: the host decides (its own prompt). The hub said why.
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('no decision, the host decides');
    expect(run.stderr).toContain('--allow permission');
    expect(run.stderr).toContain(keyId);
    expect(run.code).toBe(0);
    // Nothing reached the person: no permission request for that command was shown.
    expect(ext.notices('request.created').filter((p) => p.request.request.kind === 'permission' && JSON.stringify(p.request.request).includes('make release'))).toEqual([]);
    expect(await listening(port)).toBe(false);
    expect(existsSync(stateDir)).toBe(false);
  }, 60_000);

  it('a wrong key is refused with a message that says which key and what to do', async () => {
    const { token } = await exportKey('laptop');
    const wrong = token.replace(/[0-9a-f]{4}$/, (tail) => (tail === '0000' ? '1111' : '0000'));
    const { agent, stateDir, port } = await remoteAgent(tunnel.port, wrong);
    agents.push(agent);
    const started = Date.now();
    const created = await agent.callTool('elicit_approval', { message: 'Deploy?', context: { message: 'Deploy?' } }, { timeoutMs: 30_000 });
    const refusal = error(created);
    expect(refusal?.error).toBe('unavailable');
    expect(refusal?.message).toMatch(/could not prove it holds the key k_[0-9a-f]{16} \(a wrong ELICITLY_HUB_KEY/);
    expect(refusal?.message).toContain('elicitly-companion key export');
    // Refused at once, not after the whole search for a hub.
    expect(Date.now() - started).toBeLessThan(5000);
    expect(await listening(port)).toBe(false);
    expect(existsSync(stateDir)).toBe(false);
  });

  it('a key id the hub never exported is refused the same way', async () => {
    const { token } = await exportKey('gone');
    const unknown = token.replace(/k_[0-9a-f]{16}/, 'k_0123456789abcdef');
    const { agent } = await remoteAgent(tunnel.port, unknown);
    agents.push(agent);
    const refusal = error(await agent.callTool('elicit_approval', { message: 'Deploy?', context: { message: 'Deploy?' } }, { timeoutMs: 30_000 }));
    expect(refusal?.error).toBe('unavailable');
    expect(refusal?.message).toContain('k_0123456789abcdef');
    expect(refusal?.message).toContain('elicitly-companion key export');
  });

  it('a hub of protocol 8 at the URL (its own error frame answers the hello): a version mismatch, said at once', async () => {
    // A stand-in for a protocol 8 hub: it cannot read this protocol's hello and answers with its own error frame.
    const old = new WebSocketServer({ host: '127.0.0.1', port: 0, handleProtocols: (protocols) => [...protocols][0] ?? false });
    await new Promise<void>((resolve) => old.once('listening', () => resolve()));
    old.on('connection', (socket) => {
      socket.on('error', () => undefined);
      socket.once('message', () => socket.send(JSON.stringify({ type: 'error', code: 'invalid_message', message: 'type: Invalid input: expected "hello"' })));
    });
    try {
      const { token } = await exportKey('old hub');
      const { agent, port } = await remoteAgent((old.address() as AddressInfo).port, token);
      agents.push(agent);
      const started = Date.now();
      const refusal = error(await agent.callTool('elicit_approval', { message: 'Deploy?', context: { message: 'Deploy?' } }, { timeoutMs: 30_000 }));
      expect(refusal?.error).toBe('unavailable');
      expect(refusal?.message).toContain('a hub of another elicitly-companion version');
      expect(refusal?.message).toContain('older protocol');
      expect(refusal?.message).toContain('run the same version on both machines');
      expect(Date.now() - started).toBeLessThan(5000);
      expect(await listening(port)).toBe(false);
    } finally {
      for (const client of old.clients) client.terminate();
      await new Promise<void>((resolve) => old.close(() => resolve()));
    }
  });

  it('with the tunnel down it answers unavailable within its search window, naming the URL', async () => {
    const { token } = await exportKey('offline');
    const closedPort = freePort();
    const { agent, port } = await remoteAgent(closedPort, token);
    agents.push(agent);
    const started = Date.now();
    const refusal = error(await agent.callTool('elicit_approval', { message: 'Deploy?', context: { message: 'Deploy?' } }, { timeoutMs: 40_000 }));
    expect(refusal?.error).toBe('unavailable');
    expect(refusal?.message).toContain(`no approval hub could be reached at ws://127.0.0.1:${closedPort}`);
    expect(Date.now() - started).toBeLessThan(25_000);
    expect(await listening(port)).toBe(false);
  });
});

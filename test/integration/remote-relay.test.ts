// An agent on another machine (a devcontainer, an SSH host) joins this computer's hub through a tunnel with
// ELICITLY_HUB_URL and a key from `key export`. The tunnel here is a TCP forwarder in the test on another port; the
// "other machine" is a server process with a state dir and a port of its own, neither of which it may touch. The hub is
// the real `hub` command; a scripted extension is the person.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listening } from '../../server/hub/status-command.js';
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

/** An agent on the other machine: its own (never made) state dir and port, the hub through the tunnel. */
async function remoteAgent(tunnelPort: number, token: string): Promise<{ agent: Harness; stateDir: string; port: number }> {
  const stateDir = join(root, `other-machine-${Math.random().toString(16).slice(2)}`);
  const port = freePort();
  const agent = await connect('v2-2025', {
    env: { ELICITLY_STATE_DIR: stateDir, ELICITLY_PORT: String(port), ELICITLY_HUB_URL: `ws://127.0.0.1:${tunnelPort}`, ELICITLY_HUB_KEY: token },
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
    const shown = await ext.next<'request.created'>((m) => m.type === 'request.created' && m.request.elicitationId === id, 10_000);
    expect(shown.request.elicitationId).toBe(id);
    ext.send({ type: 'decide', elicitationId: id, idempotencyKey: `k-${id}`, decision: 'approved' });
    expect(await ext.next((m) => m.type === 'decision.result')).toMatchObject({ ok: true, status: 'approved' });
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

  it('a hook on the other machine asks through the tunnel too, and starts no hub there', async () => {
    const { token } = await exportKey('hook machine');
    const stateDir = join(root, 'hook-machine');
    const port = freePort();
    const input = { session_id: 's', transcript_path: '/t.jsonl', cwd: '/tmp', permission_mode: 'default', hook_event_name: 'PermissionRequest', tool_name: 'Bash', tool_input: { command: 'make deploy' } };
    const hookRun = runCommand('sh', ['-c', `printf '%s' "$HOOK_INPUT" | "${process.execPath}" "${SERVER_ENTRY}" hook --host claude-code --wait 30 PermissionRequest`], {
      env: { HOOK_INPUT: JSON.stringify(input), ELICITLY_STATE_DIR: stateDir, ELICITLY_PORT: String(port), ELICITLY_HUB_URL: `ws://127.0.0.1:${tunnel.port}`, ELICITLY_HUB_KEY: token, ELICITLY_LOG_LEVEL: 'warn' },
      timeout: 45_000,
    });
    const shown = await ext.next<'request.created'>((m) => m.type === 'request.created' && m.request.request.kind === 'permission', 15_000);
    ext.send({ type: 'decide', elicitationId: shown.request.elicitationId, idempotencyKey: `k-${shown.request.elicitationId}`, decision: 'approved' });
    const run = await hookRun;
    expect(JSON.parse(run.stdout), run.stderr).toEqual({ hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } } });
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

// The command line a person types: --version, --help, and `status`, which asks the running hub (as a relay would)
// whether it runs, its pid, the extensions connected and what is pending, with documented exit codes.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { StateDir } from '../../server/state-dir.js';
import { connect, SERVER_ENTRY, type Harness } from '../helpers/mcp-harness.js';
import { runCommand, type CommandRun } from '../helpers/run-command.js';
import { freePort, pairedKey, ScriptedExtension } from '../helpers/scripted-extension.js';

const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

function cli(args: string[], env: Record<string, string> = {}): Promise<CommandRun> {
  return runCommand(process.execPath, [SERVER_ENTRY, ...args], { env: { ELICITLY_LOG_LEVEL: 'warn', ...env }, timeout: 15_000 });
}

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'elicitly-cli-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('--version and --help', () => {
  it.each([['--version'], ['-v'], ['-V']])('%s prints the package version alone and exits 0', async (flag) => {
    const run = await cli([flag]);
    expect(run).toMatchObject({ code: 0, stdout: `${VERSION}\n` });
  });

  it.each([['--help'], ['-h'], ['help'], ['status', '--help'], ['pair', '-h']])('%s %s prints the usage of every command and the exit codes', async (...args) => {
    const run = await cli(args.filter(Boolean));
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`elicitly-companion ${VERSION}`);
    for (const part of ['pair [--reviewer <name> | --list | --remove <origin|keyId>]', 'reviewer add <name> [--group G]… | reviewer list [--json] | reviewer remove <name>', 'ELICITLY_DATABASE_URL', 'remote enable [--origin <https origin>]…', 'remote notify', 'key export [--name N] [--allow permission] | key list | key revoke <keyId>', 'ELICITLY_HUB_URL', 'ELICITLY_HUB_KEY', 'status [--json]', 'ELICITLY_PORT', 'ELICITLY_STATE_DIR', 'Exit code 0: running; 1: no hub; 3:']) expect(run.stdout).toContain(part);
  });

  it('answers --help even when the environment does not parse', async () => {
    const run = await cli(['--help'], { ELICITLY_PORT: 'not-a-port' });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Usage:');
  });

  it('an unknown argument exits 2, naming it and the usage', async () => {
    const run = await cli(['status', '--bogus']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('"--bogus": unknown argument (usage: elicitly-companion [--port N] | pair');
  });
});

describe('status', () => {
  const agents: Harness[] = [];
  let holder: Server | undefined;
  afterEach(async () => {
    for (const agent of agents.splice(0)) await agent.close();
    await new Promise<void>((resolve) => (holder ? holder.close(() => resolve()) : resolve()));
    holder = undefined;
  });

  it('no hub: exit 1, says so, and creates nothing in the state dir', async () => {
    const stateDir = join(tempDir(), 'never-made');
    const port = freePort();
    const run = await cli(['status'], { ELICITLY_STATE_DIR: stateDir, ELICITLY_PORT: String(port) });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe(
      `No hub is running on 127.0.0.1:${port}.\nOne starts with an agent's first approval call (any elicitly-companion process started by a host can become it).\nState dir: ${stateDir}\n`,
    );
    expect(existsSync(stateDir)).toBe(false);
    const json = await cli(['status', '--json', '--port', String(port)], { ELICITLY_STATE_DIR: stateDir });
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toEqual({ state: 'no_hub', port, stateDir });
  });

  it('a running hub: exit 0 with its pid, the extensions connected and the pending requests, read through the hub', async () => {
    const agent = await connect('v2-2025', { capabilities: {} });
    agents.push(agent);
    const env = { ELICITLY_STATE_DIR: agent.stateDir, ELICITLY_PORT: String(agent.port) };
    // The first approval call makes this agent's process the hub; the request stays pending.
    const created = await agent.callTool('elicit_approval', { message: 'Deploy?', context: { env: 'prod' } });
    expect(created.isError).toBeFalsy();

    const idle = await cli(['status'], env);
    expect(idle.code).toBe(0);
    expect(idle.stdout).toContain(`Hub: running on 127.0.0.1:${agent.port} (pid ${agent.pid}, protocol `);
    expect(idle.stdout).toContain('Browser extensions connected: 0 (none has connected since the hub started)\nPending requests: 1\n');
    expect(idle.stdout).toContain('pair one with `elicitly-companion pair`');

    const ext = await ScriptedExtension.connect(agent.port, { key: pairedKey(agent.stateDir) });
    try {
      const json = await cli(['status', '--json'], env);
      expect(json.code).toBe(0);
      const status = JSON.parse(json.stdout) as { state: string; hub: { pid: number; extensionsConnected: number; pending: number; lastSeenAt: number } };
      expect(status).toMatchObject({ state: 'running', port: agent.port, stateDir: agent.stateDir, hub: { pid: agent.pid, extensionsConnected: 1, pending: 1 } });
      expect(status.hub.lastSeenAt).toBeGreaterThan(Date.now() - 60_000);
      const text = await cli(['status'], env);
      expect(text.stdout).toMatch(/Browser extensions connected: 1 \(last seen \d+ s ago\)/);
    } finally {
      ext.socket.close();
    }
  });

  it('a hub of another state dir (another install key) on the port: exit 3, nothing is told to it', async () => {
    const agent = await connect('v2-2025', { capabilities: {} });
    agents.push(agent);
    await agent.callTool('elicit_status', { elicitationId: 'el_warmup' });
    const other = tempDir();
    // A different install: it has a key of its own, which the hub cannot prove.
    new StateDir(other).relayKey();
    const run = await cli(['status'], { ELICITLY_STATE_DIR: other, ELICITLY_PORT: String(agent.port) });
    expect(run.code).toBe(3);
    expect(run.stdout).toContain(`Port 127.0.0.1:${agent.port} is held, but not by a hub of this install that answers: the process on 127.0.0.1:${agent.port} could not prove it is this install's hub`);
  });

  it('another program on the port: exit 3, naming what it answered', async () => {
    const port = freePort();
    holder = createServer((_req, res) => res.writeHead(404).end());
    await new Promise<void>((resolve) => holder!.listen(port, '127.0.0.1', resolve));
    const run = await cli(['status'], { ELICITLY_STATE_DIR: tempDir(), ELICITLY_PORT: String(port) });
    expect(run.code).toBe(3);
    expect(run.stdout).toContain(`Port 127.0.0.1:${port} is held, but not by a hub of this install that answers: HTTP 404.`);
  });
});

describe('routing set | show (one person\'s hub: the state dir\'s routing.json)', () => {
  it('a policy is checked whole: a bad one names the field and the rule and changes nothing; a good one is what show prints and the hub reads', async () => {
    const dir = tempDir();
    const env = { ELICITLY_STATE_DIR: dir };
    expect(await cli(['routing', 'show'], env)).toMatchObject({ code: 0, stdout: '', stderr: expect.stringContaining('No routing policy') });
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ version: 1, routes: [{ name: 'prod', match: {}, groups: ['ops'], quorum: 11 }] }));
    const refused = await cli(['routing', 'set', bad], env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/routes\[0\]\.quorum|routes\.0\.quorum/);
    expect(existsSync(join(dir, 'routing.json'))).toBe(false);
    const good = join(dir, 'good.json');
    const policy = { version: 1, routes: [{ name: 'production', match: { kinds: ['approval'] }, groups: ['ops'], quorum: 2 }] };
    writeFileSync(good, JSON.stringify(policy));
    expect(await cli(['routing', 'set', good], env)).toMatchObject({ code: 0, stderr: expect.stringContaining('1 route(s) (production)') });
    const shown = await cli(['routing', 'show'], env);
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.stdout)).toEqual(policy);
    expect(new StateDir(dir).routing()).toEqual({ ok: true, policy });
  });
});

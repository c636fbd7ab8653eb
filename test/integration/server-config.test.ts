// Configuration as a host passes it: environment variables on a spawned server.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, describe, expect, it } from 'vitest';
import { SERVER_ENTRY, connect } from '../helpers/mcp-harness.js';
import { runCommand } from '../helpers/run-command.js';
import { freePort } from '../helpers/scripted-extension.js';

const dir = mkdtempSync(join(tmpdir(), 'elicitly-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the server reads its configuration once, and says what is wrong with it', () => {
  it('a value that does not parse stops the server with the variable and the rule named, nothing on stdout', () => {
    const run = spawnSync(process.execPath, [SERVER_ENTRY], {
      env: { ...process.env, ELICITLY_PORT: '70000', ELICITLY_RETENTION_DAYS: 'a week', ELICITLY_STATE_DIR: dir },
      input: '',
      encoding: 'utf8',
      timeout: 10_000,
    });
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('ELICITLY_PORT (or --port): Too big');
    expect(run.stderr).toContain('ELICITLY_RETENTION_DAYS: Invalid input: expected number, received NaN, got "a week"');
  });

  it('the not_found hint states the configured retention, not a fixed 7 days', async () => {
    const agent = await connect('v2-2025', { env: { ELICITLY_STATE_DIR: dir, ELICITLY_PORT: String(freePort()), ELICITLY_RETENTION_DAYS: '30' } });
    try {
      const result = await agent.callTool('elicit_status', { elicitationId: 'el_unknown' });
      expect(result.isError).toBe(true);
      const body = JSON.parse((result.content?.[0] as { text: string }).text) as { error: string; hint: string };
      expect(body).toMatchObject({ error: 'not_found', hint: expect.stringContaining('kept 30 days after they end') });
    } finally {
      await agent.close();
    }
  });
});

/**
 * How to run the server as a user the system knows no home for: a uid with no passwd entry. With HOME unset too,
 * os.homedir() throws there, as in a container run under an arbitrary uid. A user namespace maps this user to such a
 * uid and keeps its access to the checkout (which may sit in a 0700 temp dir); as root without user namespaces,
 * setpriv switches to the uid, if that uid can still read the server. Null when neither reproduces it on this machine.
 */
function homelessPrefix(): string[] | null {
  if (process.platform !== 'linux') return null;
  const taken = new Set(readFileSync('/etc/passwd', 'utf8').split('\n').map((line) => line.split(':')[2]));
  let uid = 54_321;
  while (taken.has(String(uid))) uid++;
  const candidates = [
    ['unshare', '--user', `--map-user=${uid}`, `--map-group=${uid}`],
    ...(process.getuid?.() === 0 ? [['setpriv', `--reuid=${uid}`, `--regid=${uid}`, '--clear-groups']] : []),
  ];
  const probe = `try { require("node:os").homedir(); process.exit(3) } catch { require("node:fs").accessSync(${JSON.stringify(SERVER_ENTRY)}, 4) }`;
  return candidates.find((prefix) => spawnSync('env', ['-u', 'HOME', ...prefix, process.execPath, '-e', probe], { timeout: 10_000 }).status === 0) ?? null;
}

describe('without a home directory', () => {
  const prefix = homelessPrefix();
  // The uid switch needs a parent it may write in; the state dir itself is created 0700 by the server.
  const homeless = mkdtempSync(join(tmpdir(), 'elicitly-homeless-'));
  chmodSync(homeless, 0o777);
  afterAll(() => rmSync(homeless, { recursive: true, force: true }));
  /** `env -u` because hosts (and the SDK's stdio transport) pass HOME on by default. */
  const homelessArgs = (args: string[]) => ['-u', 'HOME', '-u', 'USERPROFILE', ...(prefix ?? []), process.execPath, SERVER_ENTRY, ...args];

  it.skipIf(prefix === null)('finding 18b: the server starts with ELICITLY_STATE_DIR set, lists its tools and can start the hub', async () => {
    const stateDir = join(homeless, 'serve');
    const transport = new StdioClientTransport({
      command: 'env',
      args: homelessArgs([]),
      env: { ELICITLY_STATE_DIR: stateDir, ELICITLY_PORT: String(freePort()), ELICITLY_LOG_LEVEL: 'warn' },
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const client = new Client({ name: 'homeless-host', version: '1.0.0' }, { capabilities: {}, versionNegotiation: { mode: 'legacy' } });
    try {
      await client.connect(transport, { timeout: 10_000 });
      const { tools } = await client.listTools(undefined, { timeout: 10_000 });
      expect(tools.map((tool) => tool.name)).toContain('elicit_doctor');
      // Joining the hub opens the store and keys in the state dir: nothing on that path needs a home either.
      const doctor = await client.callTool({ name: 'elicit_doctor', arguments: { checkCompanion: true } }, { timeout: 10_000 });
      expect(doctor.structuredContent).toMatchObject({ companion: { hub: { role: 'hub' }, stateDir } });
    } catch (error) {
      throw new Error(`${String(error)}\nserver stderr:\n${stderr}`, { cause: error });
    } finally {
      await client.close();
    }
  });

  it.skipIf(prefix === null).each([
    ['status', ['status'], 1, /No hub is running on 127\.0\.0\.1:\d+/],
    ['pair --list', ['pair', '--list'], 0, /No browser extension is paired/],
    ['pair', ['pair'], 0, /^[0-9a-f]{12}$/m],
  ])('finding 18b: `%s` runs with ELICITLY_STATE_DIR set', async (_name, args, code, output) => {
    const run = await runCommand('env', homelessArgs(args), {
      env: { ELICITLY_STATE_DIR: join(homeless, args.join('-')), ELICITLY_PORT: String(freePort()), ELICITLY_LOG_LEVEL: 'warn' },
      timeout: 15_000,
    });
    expect(run.stderr).not.toContain('uv_os_homedir');
    expect(run.code).toBe(code);
    expect(`${run.stdout}${run.stderr}`).toMatch(output);
  });

  it.skipIf(prefix === null).each([
    ['serve', []],
    ['status', ['status']],
    ['pair', ['pair']],
  ])('finding 18b: `%s` with neither a home nor ELICITLY_STATE_DIR names the variable to set, with no crash trace', async (_name, args) => {
    const run = await runCommand('env', ['-u', 'ELICITLY_STATE_DIR', '-u', 'XDG_STATE_HOME', ...homelessArgs(args)], { timeout: 15_000 });
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('ELICITLY_STATE_DIR: not set, and there is no home directory');
    expect(run.stderr).not.toMatch(/SystemError|uv_os_homedir|\n\s+at /);
  });
});

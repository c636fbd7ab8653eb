// The commands a person types to decide from a phone and to let an agent on another machine in: `remote …` (the page,
// its pairing link and QR code, notifications), `pair --list/--remove` with devices, and `key export/list/revoke`.
// Each runs the built server as a person would, against a state dir of the test's own.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hubStatus, listening } from '../../server/hub/status-command.js';
import { StateDir } from '../../server/state-dir.js';
import { until } from '../helpers/poll.js';
import { connect, SERVER_ENTRY } from '../helpers/mcp-harness.js';
import { runCommand, type CommandRun } from '../helpers/run-command.js';
import { freePort } from '../helpers/scripted-extension.js';

const dirs: string[] = [];
/** Every install's state dir and port: `remote enable` and `remote pair` start a hub there, stopped after the file. */
const installs: { stateDir: string; port: number }[] = [];

/** Stops the hub of an install, if one runs: asked its pid as `status` asks, then SIGTERM, and waited for (bounded). */
async function stopHub(install: { stateDir: string; port: number }): Promise<void> {
  const status = await hubStatus(install.port, new StateDir(install.stateDir));
  if (status.state !== 'running') return;
  process.kill(status.hub.pid, 'SIGTERM');
  await until('the hub to stop', async () => (!(await listening(install.port)) ? true : undefined), 10_000);
}

afterAll(async () => {
  for (const install of installs) await stopHub(install);
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
}, 60_000);

/** A state dir and port of the test's own, and the command line against them. */
function install() {
  const root = mkdtempSync(join(tmpdir(), 'elicitly-remote-cli-'));
  dirs.push(root);
  const stateDir = join(root, 'state');
  const port = freePort();
  installs.push({ stateDir, port });
  const cli = (...args: string[]): Promise<CommandRun> =>
    runCommand(process.execPath, [SERVER_ENTRY, ...args], { env: { ELICITLY_STATE_DIR: stateDir, ELICITLY_PORT: String(port), ELICITLY_LOG_LEVEL: 'warn' }, timeout: 15_000 });
  return { stateDir, port, cli, state: new StateDir(stateDir) };
}

const lastLine = (text: string) => text.trimEnd().split('\n').at(-1) ?? '';
// eslint-disable-next-line no-control-regex -- the terminal renderer colours each line with ANSI escapes
const plain = (text: string) => text.replace(/\x1b\[[0-9;]*m/g, '');
/** The lines of a QR code drawn with half blocks: nothing but █ ▀ ▄ and spaces, and wide enough to be one. */
const qrLines = (text: string) => plain(text).split('\n').filter((line) => /^[█▀▄ ]{21,}$/.test(line) && /[█▀▄]/.test(line));

describe('remote enable / pair / disable / status', () => {
  it('issue 35 (4): with another program on the port, enable starts nothing and says what holds it', async () => {
    const { cli, port } = install();
    const sockets = new Set<Socket>();
    const squatter = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.end('HTTP/1.1 400 Bad Request\r\n\r\n');
    });
    await new Promise<void>((resolve) => squatter.listen(port, '127.0.0.1', resolve));
    try {
      const run = await cli('remote', 'enable');
      expect(run.code).toBe(0);
      expect(run.stderr).toContain(`Something that is not this computer's hub answers on port ${port}`);
      expect(run.stderr).not.toContain('Started the hub');
    } finally {
      for (const socket of sockets) socket.destroy();
      squatter.close();
    }
  });

  it('issue 35 (4): enable starts a hub when none runs, so the link it prints works at once; a second enable finds it', async () => {
    const { cli, port, state, stateDir } = install();
    expect(await listening(port)).toBe(false);
    const run = await cli('remote', 'enable');
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(`Started the hub on port ${port} in the background`);
    const status = await hubStatus(port, state);
    expect(status.state).toBe('running');
    // The page it prints is served now.
    const page = await fetch(`http://127.0.0.1:${port}/phone/`);
    expect(page.status).toBe(200);
    await page.body?.cancel();
    const again = await cli('remote', 'enable');
    expect(again.stderr).toContain(`The hub runs on port ${port}: the page is live.`);
    await stopHub({ stateDir, port });
  });

  it('enable turns the page on, prints what to do and a QR code on stderr, and the pairing link alone as the last stdout line', async () => {
    const { cli, port, state } = install();
    const run = await cli('remote', 'enable');
    expect(run.code).toBe(0);
    const code = state.pairing('device')?.code;
    expect(code).toMatch(/^[0-9a-f]{12}$/);
    // `n`: the code's serial, so a page opened from an older QR code is told a newer one replaced it.
    expect(run.stdout).toBe(`http://127.0.0.1:${port}/phone/#pair=${code}&n=1\n`);
    expect(state.remote()).toMatchObject({ enabled: true, origins: [] });
    // The phone's own code: the extension's `pair` makes another and leaves this one be.
    expect(run.stderr).toContain("it is the phone's own code");
    expect(qrLines(run.stderr).length).toBeGreaterThanOrEqual(10);
    for (const part of [`tailscale serve --bg ${port}`, 'remote enable --origin https://<machine>.<tailnet>.ts.net', `ssh -N -L ${port}:127.0.0.1:${port}`, 'valid 10 minutes', 'pairs one device']) {
      expect(run.stderr).toContain(part);
    }
    // The code travels only in the link (stdout) and its QR code, never in what the person reads as text.
    expect(run.stderr).not.toContain(code);
  });

  it('--origin adds origins (deduplicated, kept across runs) and the link uses the first one', async () => {
    const { cli, state } = install();
    const first = await cli('remote', 'enable', '--origin', 'https://desk.tail1234.ts.net', '--origin', 'https://desk.tail1234.ts.net', '--origin', 'http://localhost:9000');
    expect(first.code).toBe(0);
    expect(lastLine(first.stdout)).toBe(`https://desk.tail1234.ts.net/phone/#pair=${state.pairing('device')?.code}&n=${state.pairing('device')?.serial}`);
    const second = await cli('remote', 'enable', '--origin', 'http://localhost:9000', '--origin', 'https://other.tail1234.ts.net');
    expect(second.code).toBe(0);
    expect(state.remote().origins).toEqual(['https://desk.tail1234.ts.net', 'http://localhost:9000', 'https://other.tail1234.ts.net']);
    expect(lastLine(second.stdout)).toMatch(/^https:\/\/desk\.tail1234\.ts\.net\/phone\/#pair=[0-9a-f]{12}&n=2$/);
    expect(second.stderr).toContain('Added: https://other.tail1234.ts.net.');
  });

  it.each([
    [['--origin', 'http://desk.example'], '--origin: must be https:// (http:// only for localhost), got "http://desk.example"'],
    [['--origin', 'https://desk.example/phone'], '--origin: must be an origin alone, with no path, query or trailing slash (https://desk.example), got "https://desk.example/phone"'],
    [['--origin', 'not a url'], '--origin: must be an origin such as https://desk.tail1234.ts.net, got "not a url"'],
    [['--origin'], '--origin: must be an origin such as https://desk.tail1234.ts.net, got ""'],
  ])('enable %j is refused naming the flag and the rule, and changes nothing', async (args, message) => {
    const { cli, stateDir } = install();
    const run = await cli('remote', 'enable', ...args);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`remote enable ${message}`);
    expect(run.stdout).toBe('');
    expect(existsSync(stateDir)).toBe(false);
  });

  it('more origins than remote.json keeps: refused naming --origin, the file unchanged', async () => {
    const { cli, state } = install();
    const eight = Array.from({ length: 8 }, (_, i) => ['--origin', `https://d${i}.tail1234.ts.net`]).flat();
    expect((await cli('remote', 'enable', ...eight)).code).toBe(0);
    const run = await cli('remote', 'enable', '--origin', 'https://ninth.tail1234.ts.net');
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/remote enable --origin: remote\.json keeps .*8.*this makes 9/);
    expect(state.remote().origins).toHaveLength(8);
  });

  it('pair is refused while the page is off; once on it prints a fresh code for another device', async () => {
    const { cli, state, port } = install();
    const off = await cli('remote', 'pair');
    expect(off.code).toBe(1);
    expect(off.stderr).toContain('the reviewer page is off');
    expect(off.stderr).toContain('elicitly-companion remote enable');
    expect(off.stdout).toBe('');
    expect(state.pairing('device')).toBeUndefined();

    const enabled = await cli('remote', 'enable');
    const again = await cli('remote', 'pair');
    expect(again.code).toBe(0);
    expect(again.stdout).toBe(`http://127.0.0.1:${port}/phone/#pair=${state.pairing('device')?.code}&n=${state.pairing('device')?.serial}\n`);
    expect(lastLine(again.stdout)).not.toBe(lastLine(enabled.stdout));
    expect(qrLines(again.stderr).length).toBeGreaterThanOrEqual(10);
  });

  it('disable turns the page off and keeps paired devices; status shows both, in text and JSON', async () => {
    const { cli, state, port } = install();
    await cli('remote', 'enable', '--origin', 'https://desk.tail1234.ts.net');
    const phone = state.addPairedDevice('Pixel 8', 'https://desk.tail1234.ts.net');
    const on = await cli('remote', 'status', '--json');
    expect(on.code).toBe(0);
    expect(JSON.parse(on.stdout)).toEqual({
      enabled: true,
      port,
      page: 'https://desk.tail1234.ts.net/phone/',
      origins: ['https://desk.tail1234.ts.net'],
      allowedOrigins: [`http://127.0.0.1:${port}`, `http://localhost:${port}`, `http://elicitly.localhost:${port}`, 'https://desk.tail1234.ts.net'],
      devices: [{ name: 'Pixel 8', keyId: phone.keyId, pairedAt: new Date(phone.pairedAt).toISOString() }],
      notify: { ntfy: null, webhook: null, remindMinutes: 10, beforeExpiryMinutes: 5 },
    });

    const disabled = await cli('remote', 'disable');
    expect(disabled.code).toBe(0);
    expect(disabled.stderr).toContain('1 paired device(s) are kept');
    expect(state.remote()).toMatchObject({ enabled: false, origins: ['https://desk.tail1234.ts.net'] });
    expect(state.pairedDevices().map((d) => d.keyId)).toEqual([phone.keyId]);
    const text = await cli('remote', 'status');
    expect(text.stdout).toContain('Reviewer page: off');
    expect(text.stdout).toContain(`Pixel 8\t${phone.keyId}\tpaired`);
  });
});

describe('remote notify', () => {
  it('sets ntfy with its token, reminders, and a webhook whose secret is printed once; status masks both secrets', async () => {
    const { cli, state } = install();
    const ntfy = await cli('remote', 'notify', '--ntfy', 'https://ntfy.example/elicitly-7f3a', '--token', 'tk_supersecretvalue', '--remind', '3', '--before-expiry', '0.5');
    expect(ntfy.code).toBe(0);
    expect(ntfy.stdout).toBe('');
    expect(state.remote()).toMatchObject({ ntfy: { url: 'https://ntfy.example/elicitly-7f3a', token: 'tk_supersecretvalue' }, remindMinutes: 3, beforeExpiryMinutes: 0.5 });

    const webhook = await cli('remote', 'notify', '--webhook', 'https://hooks.example/elicitly');
    expect(webhook.code).toBe(0);
    const secret = lastLine(webhook.stdout);
    expect(secret).toMatch(/^[0-9a-f]{64}$/);
    expect(state.remote().webhook).toEqual({ url: 'https://hooks.example/elicitly', secret });
    expect(webhook.stderr).toContain('X-Elicitly-Signature');

    const status = await cli('remote', 'status', '--json');
    const shown = JSON.parse(status.stdout) as { notify: unknown };
    expect(shown.notify).toEqual({
      ntfy: { url: 'https://ntfy.example/elicitly-7f3a', token: '****alue' },
      webhook: { url: 'https://hooks.example/elicitly', secret: `****${secret.slice(-4)}` },
      remindMinutes: 3,
      beforeExpiryMinutes: 0.5,
    });
    const text = await cli('remote', 'status');
    for (const run of [status, text]) {
      expect(run.stdout).not.toContain('tk_supersecretvalue');
      expect(run.stdout).not.toContain(secret);
    }

    const off = await cli('remote', 'notify', '--off');
    expect(off.code).toBe(0);
    const after = state.remote();
    expect(after.ntfy).toBeUndefined();
    expect(after.webhook).toBeUndefined();
    expect(after).toMatchObject({ remindMinutes: 3, beforeExpiryMinutes: 0.5 });
  });

  it.each([
    [[], 'remote notify: name what to change'],
    [['--token', 'tk_x'], 'remote notify --token: is the ntfy server\'s access token: give it with --ntfy <topic URL>'],
    [['--off', '--ntfy', 'https://ntfy.sh/t'], 'remote notify --off: removes ntfy and the webhook: not together with --ntfy or --webhook'],
    [['--ntfy', 'ftp://ntfy.sh/t'], 'remote notify --ntfy: must be an http(s) URL, got "ftp://ntfy.sh/t"'],
    [['--webhook', 'hooks.example'], 'remote notify --webhook: must be an http(s) URL, got "hooks.example"'],
    [['--remind', 'soon'], 'remote notify --remind: must be a number of minutes, got "soon"'],
    [['--remind'], 'remote notify --remind: must be a number of minutes, got ""'],
    [['--before-expiry', '2000'], 'remote notify --before-expiry: Too big: expected number to be <=1440, got "2000"'],
    [['--ntfy', 'https://ntfy.sh/t', '--token', 'has space'], 'remote notify --token: must be printable ASCII with no spaces'],
  ])('notify %j is refused naming the flag and the rule', async (args, message) => {
    const { cli, stateDir } = install();
    const run = await cli('remote', 'notify', ...args);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(message);
    // A token is a secret: a refusal never repeats it.
    expect(run.stderr).not.toContain('has space');
    expect(existsSync(stateDir)).toBe(false);
  });
});

describe('pair --list / --remove with devices', () => {
  it('lists extensions and devices with a kind column; a key id removes that device, an origin that extension', async () => {
    const { cli, state } = install();
    const empty = await cli('pair', '--list');
    expect(empty).toMatchObject({ code: 0, stdout: '' });
    expect(empty.stderr).toContain('No browser extension is paired');
    expect(empty.stderr).toContain('No phone or other device is paired');

    const ext = state.addPairedExtension('moz-extension://0b1c2d3e-0000-4000-8000-000000000001');
    const phone = state.addPairedDevice('Pixel 8', 'https://desk.tail1234.ts.net');
    const tablet = state.addPairedDevice('iPad', 'https://desk.tail1234.ts.net');
    const list = await cli('pair', '--list');
    expect(list.code).toBe(0);
    expect(list.stdout.split('\n').filter(Boolean)).toEqual([
      `extension\t${ext.origin}\t${ext.keyId}\tpaired ${new Date(ext.pairedAt).toISOString()}`,
      `device\tPixel 8\t${phone.keyId}\tpaired ${new Date(phone.pairedAt).toISOString()}`,
      `device\tiPad\t${tablet.keyId}\tpaired ${new Date(tablet.pairedAt).toISOString()}`,
    ]);

    const removed = await cli('pair', '--remove', phone.keyId);
    expect(removed.code).toBe(0);
    expect(removed.stderr).toContain(`Forgot the device "Pixel 8" (${phone.keyId})`);
    expect(state.pairedDevices().map((d) => d.keyId)).toEqual([tablet.keyId]);
    expect(state.pairedExtensions()).toHaveLength(1);

    const unknown = await cli('pair', '--remove', phone.keyId);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain(`No device is paired with the key id ${phone.keyId}`);

    expect((await cli('pair', '--remove', ext.origin)).code).toBe(0);
    expect(state.pairedExtensions()).toEqual([]);
    expect(state.pairedDevices()).toHaveLength(1);
  });
});

describe('key export / list / revoke', () => {
  it('export prints the token alone on the last stdout line and how to use it on stderr; list never shows a key; revoke removes it', async () => {
    const { cli, port, state } = install();
    const exported = await cli('key', 'export', '--name', 'devcontainer');
    expect(exported.code).toBe(0);
    const [entry] = state.relayKeys();
    if (!entry) throw new Error('no key was stored');
    expect(entry.name).toBe('devcontainer');
    expect(exported.stdout).toBe(`ek1.${port}.${entry.keyId}.${entry.key}\n`);
    for (const part of ['ELICITLY_HUB_URL=wss://', `ELICITLY_HUB_URL=ws://127.0.0.1:${port}`, 'ELICITLY_HUB_KEY=', `key revoke ${entry.keyId}`]) expect(exported.stderr).toContain(part);
    expect(exported.stderr).not.toContain(entry.key);

    const second = await cli('key', 'export');
    expect(second.code).toBe(0);
    const keys = state.relayKeys();
    expect(keys.map((k) => k.name)).toEqual(['devcontainer', 'remote relay']);

    const list = await cli('key', 'list');
    expect(list.code).toBe(0);
    // Each with what it may do: an exported key without a grant, its own requests only (protocol 9).
    expect(list.stdout.split('\n').filter(Boolean)).toEqual(keys.map((k) => `${k.name}\t${k.keyId}\tcreated ${new Date(k.createdAt).toISOString()}\tallows its own requests only`));
    for (const k of keys) expect(list.stdout + list.stderr).not.toContain(k.key);

    const revoked = await cli('key', 'revoke', entry.keyId);
    expect(revoked.code).toBe(0);
    expect(state.relayKeys().map((k) => k.keyId)).toEqual([keys[1]?.keyId]);
    const again = await cli('key', 'revoke', entry.keyId);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`No relay key has the id ${entry.keyId}`);
  });

  it('issue 32 finding 1: export does not tell the person an exported key can do all an agent on this computer can', async () => {
    const { cli } = install();
    const exported = await cli('key', 'export', '--name', 'devcontainer');
    expect(exported.code).toBe(0);
    // Protocol 9: the key sees and touches only its own requests and never decides (docs/security.md).
    expect(exported.stderr).not.toContain('what an agent on this computer can');
  });

  it('issue 32 finding 1: `key export --allow permission` grants a remote hook its permission requests; `key list` shows the grant; an unknown grant is refused', async () => {
    const { cli, state } = install();
    const exported = await cli('key', 'export', '--name', 'hooks', '--allow', 'permission');
    expect(exported.code, exported.stderr).toBe(0);
    expect(state.relayKeys()).toEqual([expect.objectContaining({ name: 'hooks', allow: ['permission'] })]);
    const list = await cli('key', 'list');
    expect(list.code).toBe(0);
    expect(list.stdout.split('\n').find((line) => line.startsWith('hooks\t'))).toContain('permission');

    const other = install();
    const unknown = await other.cli('key', 'export', '--allow', 'decide');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('--allow');
    expect(existsSync(other.stateDir)).toBe(false);
  });

  it.each([
    [['revoke', 'nope'], 'key revoke <keyId>: must be a key id (k_ and 16 hex digits), got "nope"'],
    [['revoke'], 'key revoke: name exactly one key id'],
    [['export', '--name', ''], 'key export --name: Too small'],
    [['export', '--name', 'a\u0007b'], 'key export --name: must not hold control characters'],
    [['rotate'], 'key: export, list or revoke, got "rotate"'],
  ])('key %j is refused naming what is wrong', async (args, message) => {
    const { cli, stateDir } = install();
    const run = await cli('key', ...args);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(message);
    expect(existsSync(stateDir)).toBe(false);
  });
});

describe('the pairing code stays out of tool results', () => {
  it('after remote enable, no MCP tool result carries the code', async () => {
    const { cli, stateDir, port, state } = install();
    await cli('remote', 'enable');
    const code = state.pairing('device')?.code;
    if (!code) throw new Error('no code was made');
    const agent = await connect('v2-2025', { env: { ELICITLY_STATE_DIR: stateDir, ELICITLY_PORT: String(port) } });
    try {
      const results = [
        await agent.callTool('elicit_approval', { message: 'Deploy?', context: { message: 'Deploy?' } }),
        await agent.callTool('elicit_doctor', { checkCompanion: true }),
      ];
      const id = (results[0]?.structuredContent as { elicitationId: string }).elicitationId;
      results.push(await agent.callTool('elicit_status', { elicitationId: id }));
      for (const result of results) expect(JSON.stringify(result)).not.toContain(code);
    } finally {
      await agent.close();
    }
    expect(readFileSync(join(stateDir, 'pairing.json'), 'utf8')).toContain(code);
  });
});

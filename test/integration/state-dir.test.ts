// The state dir's keys and files: created atomically, never used when damaged, never followed through a symlink.
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { StateDir } from '../../server/state-dir.js';
import { connect, SERVER_ENTRY } from '../helpers/mcp-harness.js';
import { bundleStateScript } from '../helpers/bundle-state-script.js';
import { runCommand } from '../helpers/run-command.js';
import { freePort } from '../helpers/scripted-extension.js';
import { stressScale } from '../helpers/stress.js';

/** Four processes racing to create the key: 50 rounds under `npm run stress`, 10 in `npm test`. */
const RACE_RUNS = stressScale(10, 50);

const { logSpy } = vi.hoisted(() => ({ logSpy: vi.fn() }));
vi.mock('../../server/log.js', () => ({ log: logSpy }));

const root = mkdtempSync(join(tmpdir(), 'elicitly-state-'));
let n = 0;
const freshDir = () => join(root, `d${n++}`);
const errors = () => logSpy.mock.calls.filter((c) => c[0] === 'error').map((c) => String(c[1]));

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('the install key', () => {
  it('is created once, 64 hex digits, 0600, and read back the same', () => {
    const dir = freshDir();
    const key = new StateDir(dir).relayKey();
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    expect(new StateDir(dir).relayKey()).toBe(key);
    expect(statSync(join(dir, 'secret')).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
  });

  it.each([
    ['empty', ''],
    ['short', 'abcdef'],
    ['not hex', 'z'.repeat(64)],
    ['too long', 'a'.repeat(65)],
  ])('a %s key file is never used: it is replaced, loudly', (_what, content) => {
    const dir = freshDir();
    mkdirSync(dir, { mode: 0o700 });
    writeFileSync(join(dir, 'secret'), content, { mode: 0o600 });
    logSpy.mockClear();
    const key = new StateDir(dir).relayKey();
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    expect(readFileSync(join(dir, 'secret'), 'utf8')).toBe(key);
    expect(errors()).toEqual([expect.stringContaining('install key file was damaged')]);
  });

  describe('concurrent first starts', () => {
    let script: string;
    beforeAll(async () => {
      script = join(root, 'relay-key.mjs');
      await bundleStateScript(script, 'process.stdout.write(new StateDir(process.argv[2]).relayKey());');
    });

    it(`${RACE_RUNS} runs of 4 processes starting at once: all read the same valid key, none ever an empty one`, async () => {
      const run = (dir: string) =>
        new Promise<string>((resolve, reject) => {
          const child = spawn(process.execPath, [script, dir], { stdio: ['ignore', 'pipe', 'pipe'] });
          let out = '';
          child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
          const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
          child.on('close', (code) => (clearTimeout(timer), code === 0 ? resolve(out) : reject(new Error(`exit ${code}`))));
        });
      const outcomes: string[][] = [];
      for (let i = 0; i < RACE_RUNS; i++) {
        const dir = freshDir();
        outcomes.push(await Promise.all([run(dir), run(dir), run(dir), run(dir)]));
      }
      const bad = outcomes.filter((keys) => new Set(keys).size !== 1 || !/^[0-9a-f]{64}$/.test(keys[0] ?? ''));
      expect(bad).toEqual([]);
    }, 60_000);
  });
});

describe('other state files', () => {
  it('a damaged paired-extensions file counts as none (everyone pairs again), loudly', () => {
    const dir = freshDir();
    const state = new StateDir(dir);
    state.addPairedExtension('chrome-extension://peagncebbkgcelmlcmjmnpgpgiehcphe');
    expect(state.pairedExtensions()).toHaveLength(1);
    writeFileSync(join(dir, 'paired-extensions.json'), '{"version":1,"extensions":[{"keyId":"k_x"');
    logSpy.mockClear();
    expect(state.pairedExtensions()).toEqual([]);
    expect(errors()).toEqual([expect.stringContaining('every browser extension must pair again')]);
  });

  it("the notifier's remote settings reader follows every change another process makes, read only when the watcher saw one", async () => {
    const dir = freshDir();
    const state = new StateDir(dir);
    state.ensure();
    const reader = state.remoteReader();
    const other = new StateDir(dir);
    const stamps = vi.spyOn(state, 'fileStamp');
    const reads = vi.spyOn(state, 'remote');
    // The watcher's event comes a few ms after the write: bounded polls, each a call as the notifier makes it.
    const settles = (check: () => void) => vi.waitFor(check, { timeout: 5000, interval: 5 });
    expect(reader().enabled).toBe(false);
    other.updateRemote((current) => ({ ...current, enabled: true, remindMinutes: 7 }));
    await settles(() => expect(reader()).toMatchObject({ enabled: true, remindMinutes: 7 }));
    // Unchanged, it is never read again, nor looked at with a stat: a create costs the notifier no system call.
    reads.mockClear();
    for (let i = 0; i < 100; i++) expect(reader().remindMinutes).toBe(7);
    expect(reads).not.toHaveBeenCalled();
    expect(stamps).not.toHaveBeenCalled();
    // A rewrite of the same size within the same clock tick is still a change.
    other.updateRemote((current) => ({ ...current, remindMinutes: 8 }));
    await settles(() => expect(reader().remindMinutes).toBe(8));
    // Rewritten in place with the same size and its modification time put back: still a change.
    const file = join(dir, 'remote.json');
    const text = readFileSync(file, 'utf8');
    const stat = statSync(file);
    writeFileSync(file, text.replace('"remindMinutes":8', '"remindMinutes":9'));
    utimesSync(file, stat.atime, stat.mtime);
    expect(readFileSync(file, 'utf8')).toContain('"remindMinutes":9');
    await settles(() => expect(reader().remindMinutes).toBe(9));
    logSpy.mockClear();
    writeFileSync(file, '{"enabled":tr');
    await settles(() => expect(reader().enabled).toBe(false));
    expect(errors()).toEqual([expect.stringContaining('remote reviewer settings are damaged')]);
    other.updateRemote((current) => ({ ...current, enabled: true }));
    await settles(() => expect(reader().enabled).toBe(true));
    rmSync(file);
    await settles(() => expect(reader().enabled).toBe(false));
    expect(stamps).not.toHaveBeenCalled();
  });

  it('a pairing code lives 10 minutes and survives at most 10 wrong guesses', () => {
    const state = new StateDir(freshDir());
    const { code, expiresAt } = state.createPairing('extension', 1000);
    expect(code).toMatch(/^[0-9a-f]{12}$/);
    expect(state.pairing('extension', expiresAt - 1)?.code).toBe(code);
    expect(state.pairing('extension', expiresAt)).toBeUndefined();
    for (let i = 9; i >= 1; i--) expect(state.recordPairingFailure('extension', 1000)).toBe(i);
    expect(state.pairing('extension', 1000)?.code).toBe(code);
    expect(state.recordPairingFailure('extension', 1000)).toBe(0);
    expect(state.pairing('extension', 1000)).toBeUndefined();
  });
});

describe('pairing codes, one per purpose (issue 35, part 4)', () => {
  it('the phone\'s code and the extension\'s are separate: making one never voids the other', () => {
    const state = new StateDir(freshDir());
    const phone = state.createPairing('device', 1000);
    const extension = state.createPairing('extension', 1000);
    expect(state.pairing('device', 1000)?.code).toBe(phone.code);
    expect(state.pairing('extension', 1000)?.code).toBe(extension.code);
    state.clearPairing('extension');
    expect(state.pairing('extension', 1000)).toBeUndefined();
    expect(state.pairing('device', 1000)?.code).toBe(phone.code);
    expect(state.recordPairingFailure('device', 1000)).toBe(9);
    expect(state.pairing('extension', 1000)).toBeUndefined();
  });

  it('each new code of a purpose has the next serial; spending a code keeps its serial, so a later page still learns it was replaced', () => {
    const state = new StateDir(freshDir());
    expect(state.pairingSerial('device')).toBe(0);
    expect(state.createPairing('device', 1000).serial).toBe(1);
    expect(state.createPairing('device', 1000).serial).toBe(2);
    state.clearPairing('device');
    expect(state.pairing('device', 1000)).toBeUndefined();
    expect(state.pairingSerial('device')).toBe(2);
    expect(state.createPairing('extension', 1000).serial).toBe(1);
  });

  it('a pairing.json of the earlier single-code shape counts as no code (a code lives 10 minutes: nothing to carry over)', () => {
    const dir = freshDir();
    const state = new StateDir(dir);
    state.createPairing('device', 1000);
    writeFileSync(join(dir, 'pairing.json'), JSON.stringify({ code: 'abcdefabcdef', expiresAt: Number.MAX_SAFE_INTEGER, failures: 0 }), { mode: 0o600 });
    expect(state.pairing('device')).toBeUndefined();
    expect(state.pairing('extension')).toBeUndefined();
    expect(state.createPairing('device').serial).toBe(1);
  });
});

describe('a device\'s push subscription (issue 35, part 1)', () => {
  const subscription = (endpoint: string) => ({ endpoint, keys: { p256dh: `B${'a'.repeat(86)}`, auth: 'b'.repeat(22) } });

  it('is kept with the device and goes with it; a 410 for an old one does not drop the one the page renewed meanwhile', () => {
    const state = new StateDir(freshDir());
    const device = state.addPairedDevice('Phone', 'http://127.0.0.1:1');
    expect(state.setDevicePush(device.keyId, subscription('https://fcm.googleapis.com/a'))).toBe(true);
    expect(state.setDevicePush(device.keyId, subscription('https://fcm.googleapis.com/b'))).toBe(true);
    // The push service answered 410 for /a, after the page had sent /b.
    expect(state.setDevicePush(device.keyId, null, { onlyEndpoint: 'https://fcm.googleapis.com/a' })).toBe(false);
    expect(state.pairedDevices()[0]?.push?.subscription.endpoint).toBe('https://fcm.googleapis.com/b');
    expect(state.setDevicePush(device.keyId, null, { onlyEndpoint: 'https://fcm.googleapis.com/b' })).toBe(true);
    expect(state.pairedDevices()[0]?.push).toBeUndefined();
    expect(state.setDevicePush(device.keyId, subscription('https://fcm.googleapis.com/c'))).toBe(true);
    expect(state.removePairedDevice(device.keyId)).toBe(true);
    expect(state.setDevicePush(device.keyId, subscription('https://fcm.googleapis.com/d'))).toBe(false);
    expect(state.pairedDevices()).toEqual([]);
  });

  it('the VAPID key is made once and kept', () => {
    const state = new StateDir(freshDir());
    const first = state.vapidKeys();
    expect(state.vapidKeys()).toEqual(first);
    expect(new StateDir(state.path).vapidKeys()).toEqual(first);
  });
});

describe('nothing follows a symlink', () => {
  it('a symlinked state dir is refused by name, and its target keeps its permissions', async () => {
    const target = freshDir();
    mkdirSync(target, { mode: 0o755 });
    chmodSync(target, 0o755);
    const link = freshDir();
    symlinkSync(target, link);
    expect(() => new StateDir(link).relayKey()).toThrow(`refusing the state dir ${link}: it is a symbolic link`);

    const agent = await connect('v2-2025', { env: { ELICITLY_STATE_DIR: link, ELICITLY_PORT: String(freePort()) } });
    try {
      const result = await agent.callTool('elicit_approval', { message: 'x', context: { a: 1 } });
      expect(result.isError).toBe(true);
      expect(JSON.parse((result.content?.[0] as { text: string }).text)).toMatchObject({ error: 'unavailable', message: expect.stringContaining('is a symbolic link') });
    } finally {
      await agent.close();
    }
    expect(statSync(target).mode & 0o777).toBe(0o755);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
  });

  it('a symlink planted in place of the key file is not followed', () => {
    const dir = freshDir();
    mkdirSync(dir, { mode: 0o700 });
    const elsewhere = join(root, `outside-${n++}`);
    writeFileSync(elsewhere, 'a'.repeat(64));
    symlinkSync(elsewhere, join(dir, 'secret'));
    expect(() => new StateDir(dir).relayKey()).toThrow(/ELOOP|symbolic link/);
    expect(readFileSync(elsewhere, 'utf8')).toBe('a'.repeat(64));
  });
});

/** The tool's refusal text, or the whole result when it is not one. */
function refusal(result: { isError?: boolean; content?: unknown[] }): unknown {
  return result.isError ? JSON.parse((result.content?.[0] as { text: string }).text) : result;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Polls (bounded) for the process to be gone; returns how long it took, or null if it outlived the bound. */
async function exitWithin(pid: number, ms: number): Promise<number | null> {
  const started = Date.now();
  while (Date.now() - started < ms) {
    if (!alive(pid)) return Date.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return null;
}

describe('the server refuses planted state files', () => {
  it('finding 3: a planted 0644 secret and a 0666 journal: the approval call is refused naming them, nothing is used', async () => {
    const dir = freshDir();
    mkdirSync(dir, { mode: 0o700 });
    const secret = join(dir, 'secret');
    const journal = join(dir, 'requests.jsonl');
    writeFileSync(secret, 'a'.repeat(64));
    chmodSync(secret, 0o644);
    writeFileSync(journal, '');
    chmodSync(journal, 0o666);
    const agent = await connect('v2-2025', { env: { ELICITLY_STATE_DIR: dir, ELICITLY_PORT: String(freePort()) } });
    try {
      const result = await agent.callTool('elicit_approval', { message: 'x', context: { a: 1 } }, { timeoutMs: 15_000 });
      expect(refusal(result)).toMatchObject({ error: 'unavailable', message: expect.stringContaining(`${secret} is readable or writable by group or others (mode 0644); refusing it`) });
      expect(agent.stderr()).toContain(`${journal} is writable by group or others (mode 0666); refusing it`);
    } finally {
      await agent.close();
    }
    expect(statSync(journal).mode & 0o777).toBe(0o666);
    expect(readFileSync(journal, 'utf8')).toBe('');
  });

  it('finding 3: `pair --list` and `pair --remove` refuse a planted 0666 paired-extensions.json, naming it and the rule', async () => {
    const dir = freshDir();
    const state = new StateDir(dir);
    state.addPairedExtension('chrome-extension://peagncebbkgcelmlcmjmnpgpgiehcphe');
    const file = join(dir, 'paired-extensions.json');
    const planted = readFileSync(file, 'utf8');
    chmodSync(file, 0o666);
    const env = { ELICITLY_STATE_DIR: dir, ELICITLY_LOG_LEVEL: 'warn' };
    for (const args of [['pair', '--list'], ['pair', '--remove', 'chrome-extension://peagncebbkgcelmlcmjmnpgpgiehcphe']]) {
      const run = await runCommand(process.execPath, [SERVER_ENTRY, ...args], { env, timeout: 15_000 });
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toContain(`elicitly-companion pair: ${file} is readable or writable by group or others (mode 0666); refusing it`);
    }
    expect(readFileSync(file, 'utf8')).toBe(planted);
  });

  it('finding 15: FIFOs in place of secret and requests.jsonl: a named refusal within bounded time, and SIGTERM ends the server within 5 s', async () => {
    const dir = freshDir();
    mkdirSync(dir, { mode: 0o700 });
    const secret = join(dir, 'secret');
    const journal = join(dir, 'requests.jsonl');
    execFileSync('mkfifo', [secret]);
    execFileSync('mkfifo', [journal]);
    const agent = await connect('v2-2025', { env: { ELICITLY_STATE_DIR: dir, ELICITLY_PORT: String(freePort()) } });
    const pid = agent.pid ?? -1;
    try {
      const started = Date.now();
      const result = await agent.callTool('elicit_approval', { message: 'x', context: { a: 1 } }, { timeoutMs: 10_000 });
      expect(refusal(result)).toMatchObject({ error: 'unavailable', message: expect.stringContaining(`${secret} is not a regular file (a FIFO); refusing it`) });
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(agent.stderr()).toContain(`${journal} is not a regular file (a FIFO); refusing it`);
      process.kill(pid, 'SIGTERM');
      expect(await exitWithin(pid, 5000)).not.toBeNull();
    } finally {
      if (alive(pid)) process.kill(pid, 'SIGKILL');
      await agent.close();
    }
  }, 30_000);
});

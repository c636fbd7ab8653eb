// The state dir's files are trusted only when they are what we made: regular files of this user's, 0600, in a dir
// nobody else can write; and concurrent read-modify-writes from separate processes never undo each other.
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { StateDir } from '../../server/state-dir.js';
import { bundleStateScript } from '../helpers/bundle-state-script.js';

const { logSpy } = vi.hoisted(() => ({ logSpy: vi.fn() }));
vi.mock('../../server/log.js', () => ({ log: logSpy }));

const root = mkdtempSync(join(tmpdir(), 'elicitly-state-unit-'));
let n = 0;
const freshDir = () => {
  const dir = join(root, `d${n++}`);
  mkdirSync(dir, { mode: 0o700 });
  return dir;
};
const KEY = 'a'.repeat(64);
const ORIGIN = 'chrome-extension://peagncebbkgcelmlcmjmnpgpgiehcphe';
const isRoot = process.getuid?.() === 0;

afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A valid file of each kind: planted ones must be refused for where they came from, not for what they say. */
const PLANTED = {
  secret: { content: KEY, read: (state: StateDir) => state.relayKey() },
  'paired-extensions.json': {
    content: JSON.stringify({ version: 1, extensions: [{ keyId: 'k_0123456789abcdef', origin: ORIGIN, key: KEY, pairedAt: 1 }] }),
    read: (state: StateDir) => state.pairedExtensions(),
  },
  'pairing.json': {
    content: JSON.stringify({ code: '0123456789ab', expiresAt: Date.now() + 600_000, failures: 0 }),
    read: (state: StateDir) => state.pairing('extension'),
  },
} as const;
type Planted = keyof typeof PLANTED;
const NAMES = Object.keys(PLANTED) as Planted[];

function plant(dir: string, name: Planted, mode: number): string {
  const file = join(dir, name);
  writeFileSync(file, PLANTED[name].content);
  chmodSync(file, mode);
  return file;
}

describe('finding 3: planted state files are refused', () => {
  it.each(NAMES.flatMap((name) => [0o644, 0o666, 0o640].map((mode) => [name, mode] as const)))('finding 3: a %s with mode %o is refused, naming the path and the rule', (name, mode) => {
    const dir = freshDir();
    const file = plant(dir, name, mode);
    expect(() => PLANTED[name].read(new StateDir(dir))).toThrow(`${file} is readable or writable by group or others (mode 0${mode.toString(8)}); refusing it`);
    // Refused, not rewritten: the person sees what was planted.
    expect(readFileSync(file, 'utf8')).toBe(PLANTED[name].content);
  });

  it.skipIf(!isRoot).each(NAMES)('finding 3: a %s owned by another user is refused, naming the path and the rule', (name) => {
    const dir = freshDir();
    const file = plant(dir, name, 0o600);
    chownSync(file, 65534, 65534);
    expect(() => PLANTED[name].read(new StateDir(dir))).toThrow(`${file} belongs to user 65534, not to you (0); refusing it: a state file must be yours alone`);
  });

  it('finding 3: the read-modify-writes refuse a planted file too, and leave it as it was', () => {
    const dir = freshDir();
    const paired = plant(dir, 'paired-extensions.json', 0o666);
    const pairing = plant(dir, 'pairing.json', 0o666);
    const state = new StateDir(dir);
    expect(() => state.removePairedExtensions(ORIGIN)).toThrow(`${paired} is readable or writable`);
    expect(() => state.addPairedExtension(ORIGIN)).toThrow(`${paired} is readable or writable`);
    expect(() => state.recordPairingFailure('extension')).toThrow(`${pairing} is readable or writable`);
    expect(statSync(paired).mode & 0o777).toBe(0o666);
  });

  it.each([0o777, 0o770, 0o1777, 0o720])('finding 3: a state dir with mode %o (writable by others) is refused by name; nothing in it is read', (mode) => {
    const dir = freshDir();
    writeFileSync(join(dir, 'secret'), KEY, { mode: 0o600 });
    chmodSync(dir, mode);
    expect(() => new StateDir(dir).relayKey()).toThrow(`refusing the state dir ${dir}: it is writable by group or others (mode 0${(mode & 0o777).toString(8)})`);
    expect(statSync(dir).mode & 0o7777).toBe(mode);
  });

  it('a state dir merely readable by others (0755) is tightened to 0700 and used', () => {
    const dir = freshDir();
    chmodSync(dir, 0o755);
    expect(new StateDir(dir).relayKey()).toMatch(/^[0-9a-f]{64}$/);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
  });

  it.skipIf(!isRoot)('finding 3: a state dir owned by another user is refused by name', () => {
    const dir = freshDir();
    chownSync(dir, 65534, 65534);
    expect(() => new StateDir(dir).relayKey()).toThrow(`refusing the state dir ${dir}: it belongs to user 65534, not to you (0)`);
  });

  it('the files the state dir makes itself pass its own checks', () => {
    const state = new StateDir(join(freshDir(), 'nested'));
    const key = state.relayKey();
    expect(state.relayKey()).toBe(key);
    const code = state.createPairing('extension').code;
    expect(state.pairing('extension')?.code).toBe(code);
    state.addPairedExtension(ORIGIN);
    expect(state.pairedExtensions()).toHaveLength(1);
  });
});

describe('finding 5: symlinks are refused by name', () => {
  it.each(NAMES)('finding 5: a symlinked %s is refused by name, not with a raw ELOOP', (name) => {
    const dir = freshDir();
    const elsewhere = join(root, `outside-${n++}`);
    writeFileSync(elsewhere, PLANTED[name].content, { mode: 0o600 });
    const file = join(dir, name);
    symlinkSync(elsewhere, file);
    expect(() => PLANTED[name].read(new StateDir(dir))).toThrow(`${file} is a symbolic link; refusing it`);
    expect(readFileSync(elsewhere, 'utf8')).toBe(PLANTED[name].content);
  });
});

/** The real module in a script of its own (see bundleStateScript). */
let script: string;
beforeAll(async () => {
  script = join(root, 'state-op.mjs');
  await bundleStateScript(
    script,
    `const [op, dir, startAt, ...origins] = process.argv.slice(2);
// Every child starts its work in the same millisecond, so their read-modify-writes overlap.
while (Date.now() < Number(startAt)) {}
if (op === 'read') {
  const state = new StateDir(dir);
  state.relayKey();
  state.pairedExtensions();
  state.pairing('extension');
} else {
  for (const origin of origins) new StateDir(dir).removePairedExtensions(origin);
}
process.stdout.write('done');`,
  );
});

interface ChildRun {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Runs the bundled op in a child, killed after `timeoutMs`: a hang is a failed result, never a hung test. */
function runOp(args: string[], timeoutMs: number): Promise<ChildRun> {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: Date.now() - started });
    });
  });
}

describe('finding 15: a FIFO in place of a state file', () => {
  it.each(NAMES)('finding 15: a FIFO in place of %s is refused at once, by name, instead of blocking the open', async (name) => {
    const dir = freshDir();
    const file = join(dir, name);
    execFileSync('mkfifo', [file]);
    const run = await runOp(['read', dir, '0'], 5000);
    expect(run.stderr).toContain(`${file} is not a regular file (a FIFO); refusing it`);
    expect(run.code).toBe(1);
    expect(run.ms).toBeLessThan(5000);
  });
});

describe('finding 12: concurrent updates of paired-extensions.json', () => {
  it('finding 12: 4 processes removing 5 different keys each at once, 4 rounds: every removal sticks', async () => {
    const perChild = 5;
    const children = 4;
    const lost: string[][] = [];
    for (let round = 0; round < 4; round++) {
      const dir = freshDir();
      const state = new StateDir(dir);
      const origins = Array.from({ length: perChild * children }, (_, i) => `chrome-extension://${String.fromCharCode(97 + (i % 26))}${'p'.repeat(31)}${i}`);
      for (const origin of origins) state.addPairedExtension(origin);
      // A kept origin shows that removals do not simply wipe the file.
      const keeper = state.addPairedExtension(ORIGIN);
      const startAt = String(Date.now() + 300);
      const runs = await Promise.all(
        Array.from({ length: children }, (_, c) => runOp(['remove', dir, startAt, ...origins.filter((_, i) => i % children === c)], 15_000)),
      );
      expect(runs.map((r) => [r.code, r.stdout, r.stderr])).toEqual(runs.map(() => [0, 'done', '']));
      const left = state.pairedExtensions();
      expect(left.some((e) => e.keyId === keeper.keyId)).toBe(true);
      lost.push(left.filter((e) => e.origin !== ORIGIN).map((e) => e.origin));
    }
    // Each round's list of removed keys that came back: all empty.
    expect(lost).toEqual(lost.map(() => []));
  }, 60_000);
});

describe('the key lists: paired devices and exported relay keys', () => {
  const PHONE_ORIGIN = 'https://phone.example:8443';
  const lists = [
    ['paired devices', 'paired-devices.json', (s: StateDir) => s.addPairedDevice('Pixel', PHONE_ORIGIN).keyId, (s: StateDir) => s.pairedDevices(), (s: StateDir, id: string) => s.removePairedDevice(id), 'every phone must pair again'],
    ['exported relay keys', 'relay-keys.json', (s: StateDir) => s.addRelayKey('devbox').keyId, (s: StateDir) => s.relayKeys(), (s: StateDir, id: string) => s.removeRelayKey(id), 'refused until exported again'],
  ] as const;

  it.each(lists)('%s: added with a fresh key each, listed, removed by id (false for an unknown id)', (_name, _file, add, list, remove) => {
    const state = new StateDir(freshDir());
    const [a, b] = [add(state), add(state)];
    expect(list(state).map((e) => e.keyId)).toEqual([a, b]);
    expect(new Set(list(state).map((e) => e.key)).size).toBe(2);
    expect(remove(state, a)).toBe(true);
    expect(remove(state, a)).toBe(false);
    expect(list(state).map((e) => e.keyId)).toEqual([b]);
  });

  it.each(lists)('%s: a damaged file counts as none, says so, and is replaced whole by the next change', (_name, file, add, list, _remove, consequence) => {
    const dir = freshDir();
    writeFileSync(join(dir, file), '{"version":1,"devices":[{"keyId":"nope"}],"keys":[]}', { mode: 0o600 });
    const state = new StateDir(dir);
    logSpy.mockClear();
    expect(list(state)).toEqual([]);
    expect(logSpy).toHaveBeenCalledWith('error', expect.stringContaining(consequence), { file: join(dir, file) });
    const id = add(state);
    expect(list(state).map((e) => e.keyId)).toEqual([id]);
  });

  it('a device is kept with the origin it was paired on: the only one its key opens a socket from', () => {
    const state = new StateDir(freshDir());
    const device = state.addPairedDevice('Pixel', PHONE_ORIGIN, 42);
    expect(device).toMatchObject({ name: 'Pixel', origin: PHONE_ORIGIN, pairedAt: 42 });
    expect(state.pairedDevices()).toEqual([device]);
  });

  it('an exported relay key is kept with what it was granted (each grant once), and with no `allow` at all when none', () => {
    const state = new StateDir(freshDir());
    const plain = state.addRelayKey('devbox');
    const granted = state.addRelayKey('ci', ['permission', 'permission']);
    expect('allow' in plain).toBe(false);
    expect(granted.allow).toEqual(['permission']);
    expect(state.relayKeys()).toEqual([plain, granted]);
  });
});

// The state dir's keys and files: created atomically, never used when damaged, never followed through a symlink.
import { spawn } from 'node:child_process';
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { StateDir } from '../../server/state-dir.js';
import { connect } from '../helpers/mcp-harness.js';
import { freePort } from '../helpers/scripted-extension.js';

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
      // The real module, bundled so that plain `node` processes start in milliseconds and race for real.
      script = join(root, 'relay-key.mjs');
      await build({
        stdin: {
          contents: `import { StateDir } from ${JSON.stringify(fileURLToPath(new URL('../../server/state-dir.ts', import.meta.url)))};\nprocess.stdout.write(new StateDir(process.argv[2]).relayKey());`,
          resolveDir: fileURLToPath(new URL('.', import.meta.url)),
          loader: 'ts',
        },
        bundle: true,
        platform: 'node',
        format: 'esm',
        outfile: script,
        logLevel: 'error',
      });
    });

    it('50 runs of 4 processes starting at once: all read the same valid key, none ever an empty one', async () => {
      const run = (dir: string) =>
        new Promise<string>((resolve, reject) => {
          const child = spawn(process.execPath, [script, dir], { stdio: ['ignore', 'pipe', 'pipe'] });
          let out = '';
          child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
          const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
          child.on('close', (code) => (clearTimeout(timer), code === 0 ? resolve(out) : reject(new Error(`exit ${code}`))));
        });
      const outcomes: string[][] = [];
      for (let i = 0; i < 50; i++) {
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

  it('a pairing code lives 10 minutes and survives at most 10 wrong guesses', () => {
    const state = new StateDir(freshDir());
    const { code, expiresAt } = state.createPairing(1000);
    expect(code).toMatch(/^[0-9a-f]{12}$/);
    expect(state.pairing(expiresAt - 1)?.code).toBe(code);
    expect(state.pairing(expiresAt)).toBeUndefined();
    for (let i = 9; i >= 1; i--) expect(state.recordPairingFailure(1000)).toBe(i);
    expect(state.pairing(1000)?.code).toBe(code);
    expect(state.recordPairingFailure(1000)).toBe(0);
    expect(state.pairing(1000)).toBeUndefined();
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

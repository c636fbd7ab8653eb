// `npm run demo` as a person (or CI) runs it: `--headless --auto` starts its own hub, Chromium with the built extension,
// and a real MCP client; the script decides the three requests through the real UI and prints what the agent got.
// Also the refusals that come before any of that: no browser, --headless without --auto, no display.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { northmarkProposal } from '../fixtures/northmark.js';
import { CHROMIUM_PATH, browserFound, chromiumSuite } from './extension-browser.js';

const DEMO = fileURLToPath(new URL('../../scripts/demo.mjs', import.meta.url));
/** The demo bounds itself (--timeout); this only stops a demo that hangs in spite of it. */
const RUN_BOUND = 150_000;

interface DemoRun { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }

/** Runs the demo to its end; past `bound` it is asked to stop as Ctrl+C would, then killed. */
function runDemo(args: string[], { bound = 30_000, env = process.env }: { bound?: number; env?: NodeJS.ProcessEnv } = {}): Promise<DemoRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [DEMO, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const interrupt = setTimeout(() => child.kill('SIGINT'), bound);
    const kill = setTimeout(() => child.kill('SIGKILL'), bound + 15_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(interrupt);
      clearTimeout(kill);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** A PNG's size from its IHDR chunk, or null when the bytes are not a PNG. */
function pngSize(bytes: Buffer): { width: number; height: number } | null {
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  if (bytes.length < 24 || !bytes.subarray(0, 8).equals(signature) || bytes.toString('latin1', 12, 16) !== 'IHDR') return null;
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
}

type DemoLine =
  | { type: 'request'; key: string; tool: string; elicitationId: string; message: string }
  | { type: 'decision'; key: string; tool: string; elicitationId: string; status: string; isError: boolean; envelope: Record<string, unknown> }
  | { type: 'done'; decided: number; seconds: number; screenshots: string[]; stateDir: string | null }
  | { type: 'error'; step: string; message: string };

const title = chromiumSuite('npm run demo -- --headless --auto');

describe.skipIf(!browserFound)(title, () => {
  const out = mkdtempSync(join(tmpdir(), 'elicitly-demo-test-'));
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it('decides the three requests through the UI, prints each envelope as one JSON line, and saves a screenshot of each', async () => {
    // npm test builds first; --no-build keeps a stale output from being rebuilt under the other test files' feet.
    const run = await runDemo(['--headless', '--auto', '--json', '--no-build', '--out', out, '--chrome', CHROMIUM_PATH], { bound: RUN_BOUND });
    expect(run.code, `stderr:\n${run.stderr}\nstdout:\n${run.stdout}`).toBe(0);
    const lines = run.stdout.trim().split('\n').map((line) => JSON.parse(line) as DemoLine);

    const requests = lines.filter((l) => l.type === 'request');
    expect(requests.map((r) => [r.key, r.tool])).toEqual([
      ['proposal', 'elicit_proposal'], ['deploy', 'elicit_approval'], ['release-note', 'elicit_approval'],
    ]);
    const decisions = new Map(lines.filter((l) => l.type === 'decision').map((d) => [d.key, d]));
    expect([...decisions.keys()].sort()).toEqual(['deploy', 'proposal', 'release-note']);
    for (const request of requests) expect(decisions.get(request.key)?.elicitationId).toBe(request.elicitationId);

    // NorthMark: the typed 250, the name copied from the Crunchbase cell, the untouched website; the unticked
    // Institution Types row is absent, not null.
    expect(decisions.get('proposal')).toMatchObject({ status: 'approved', isError: false });
    expect(decisions.get('proposal')?.envelope).toEqual({
      status: 'consumed',
      receipt: expect.objectContaining({ decidedVia: 'extension', ledgerIndex: expect.any(Number) }),
      decision: 'approved',
      action: 'submit',
      decidedVia: 'extension',
      context: northmarkProposal.context,
      values: { name: 'NorthMark Strategies Inc.', website: 'https://www.northmarkstrategies.com/', employeeCount: 250 },
    });
    expect(decisions.get('deploy')?.envelope).toEqual({
      status: 'consumed',
      receipt: expect.objectContaining({ decidedVia: 'extension', ledgerIndex: expect.any(Number) }),
      decision: 'approved',
      action: 'submit',
      decidedVia: 'extension',
      context: expect.objectContaining({ service: 'checkout-api', version: '2.4.0', environment: 'production' }),
      values: {},
      comment: 'Go ahead after the 14:00 standup.',
    });
    expect(decisions.get('release-note')?.envelope).toEqual({
      status: 'consumed',
      receipt: expect.objectContaining({ decidedVia: 'extension', ledgerIndex: expect.any(Number) }),
      decision: 'approved',
      action: 'submit',
      decidedVia: 'extension',
      context: null,
      values: {
        note: 'Checkout now takes Apple Pay, computes taxes three times faster and accepts lowercase coupon codes.',
        emailCustomers: true,
      },
    });

    const done = lines.at(-1);
    expect(done).toMatchObject({ type: 'done', decided: 3, stateDir: null });
    const screenshots = done?.type === 'done' ? done.screenshots : [];
    expect(screenshots.map((path) => path.slice(out.length + 1)).sort()).toEqual(
      ['deploy-approval.png', 'inbox.png', 'proposal-review.png', 'release-note-form.png'],
    );
    for (const path of screenshots) {
      const size = pngSize(readFileSync(path));
      expect(size, path).not.toBeNull();
      expect(size!.width, path).toBeGreaterThanOrEqual(600);
      expect(size!.width, path).toBeLessThanOrEqual(1600);
      expect(size!.height, path).toBeGreaterThanOrEqual(150);
      expect(size!.height, path).toBeLessThanOrEqual(1600);
      expect(statSync(path).size, path).toBeGreaterThan(5_000);
      expect(statSync(path).size, path).toBeLessThan(1_000_000);
    }
    // The words went to stderr, stdout kept to the JSON lines.
    expect(run.stderr).toContain('All three requests decided');
  }, RUN_BOUND + 30_000);
});

describe('npm run demo, before it starts anything', () => {
  it('carries seed 004\'s NorthMark proposal exactly as the tests know it', () => {
    const demoData: unknown = JSON.parse(readFileSync(fileURLToPath(new URL('../../scripts/demo/northmark.json', import.meta.url)), 'utf8'));
    expect(demoData).toEqual(northmarkProposal);
  });

  it('with no browser where it was told to look: exit code 1, the path it looked at and how to install one', async () => {
    const run = await runDemo(['--headless', '--auto', '--no-build', '--chrome', '/nonexistent/chromium']);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('No browser at /nonexistent/chromium (given with --chrome).');
    expect(run.stdout).toMatch(process.platform === 'linux' ? /sudo apt-get install -y chromium/ : /https:\/\/www\.google\.com\/chrome\//);
    expect(run.stdout).toContain('CHROME_PATH');
  });

  it('a mistyped CHROME_PATH is reported, not quietly replaced by another browser', async () => {
    const run = await runDemo(['--headless', '--auto', '--no-build'], { env: { ...process.env, CHROME_PATH: '/nonexistent/chrome' } });
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('No browser at /nonexistent/chrome (from CHROME_PATH).');
  });

  it('refuses --headless without --auto: nobody could decide', async () => {
    const run = await runDemo(['--headless', '--no-build']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--headless needs --auto');
    expect(run.stderr).toContain('npm run demo -- --headless --auto');
    expect(run.stdout).toBe('');
  });

  it.runIf(process.platform === 'linux')('with no display and no --headless: exit code 1 and the headless command to run instead', async () => {
    const env = { ...process.env };
    delete env.DISPLAY;
    delete env.WAYLAND_DISPLAY;
    const run = await runDemo(['--no-build'], { env });
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('no display');
    expect(run.stdout).toContain('npm run demo -- --headless --auto');
  });

  it('--help prints the usage and starts nothing', async () => {
    const run = await runDemo(['--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^Usage: npm run demo/);
    for (const option of ['--headless', '--auto', '--out', '--json', '--state-dir', '--port', '--chrome', '--no-build']) expect(run.stdout).toContain(option);
  });
});

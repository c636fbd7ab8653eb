// What `elicitly-companion pair` tells the person: the code's own deadline and the same validity the extension's hint
// names, however long making the code took (the state dir's lock can keep it waiting).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runPairCommand, validUntil } from '../../server/pair-command.js';
import { pairingReviewer } from '../../server/reviewer-command.js';
import { PAIRING_TTL_MS } from '../../server/directory.js';
import { StateDir } from '../../server/state-dir.js';
import { PAIRING_TTL_MINUTES } from '../../shared/hub-auth.js';

async function run(state: Parameters<typeof runPairCommand>[0]): Promise<{ stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => ((stdout += String(chunk)), true));
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => ((stderr += String(chunk)), true));
  try {
    expect(await runPairCommand(state, { kind: 'code' })).toBe(0);
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
  return { stdout, stderr };
}

describe('elicitly-companion pair', () => {
  afterEach(() => vi.useRealTimers());

  it('names the validity the extension names, and the code\'s deadline to the second', async () => {
    expect(PAIRING_TTL_MS).toBe(PAIRING_TTL_MINUTES * 60_000);
    const dir = mkdtempSync(join(tmpdir(), 'elicitly-pair-'));
    try {
      const state = new StateDir(dir);
      const { stdout, stderr } = await run(state);
      const code = stdout.trim();
      const expiresAt = state.pairing('extension')?.expiresAt ?? 0;
      expect(code).toMatch(/^[0-9a-f]{12}$/);
      expect(stderr).toBe(`Enter this code in the Elicitly extension (Settings → Pairing code → Pair) before ${validUntil(expiresAt)} (a code is valid ${PAIRING_TTL_MINUTES} minutes) to pair it with this computer:\n`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('says the same when making the code waited 40 s for the lock (it printed "within 9 minutes")', async () => {
    vi.useFakeTimers({ now: new Date(2026, 11, 2, 14, 13, 40) });
    const made = Date.now();
    const state = {
      createPairing: () => {
        vi.setSystemTime(made + 40_000);
        return { code: 'abcdefabcdef', expiresAt: made + PAIRING_TTL_MS, failures: 0, serial: 1 };
      },
      pairedExtensions: () => [],
      removePairedExtensions: () => 0,
      pairedDevices: () => [],
      removePairedDevice: () => false,
      reviewers: () => [],
    };
    const { stderr } = await run(state);
    expect(stderr).toContain('before 14:23:40 (a code is valid 10 minutes)');
    expect(stderr).not.toMatch(/\b9 minutes/);
  });
});

describe('pair on a team\'s hub: a code names whose browser it pairs', () => {
  const withState = async (body: (state: StateDir) => void | Promise<void>) => {
    const dir = mkdtempSync(join(tmpdir(), 'elicitly-pair-team-'));
    try {
      await body(new StateDir(dir));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  const quiet = async <T>(body: () => Promise<T>): Promise<{ value: T; stderr: string }> => {
    let stderr = '';
    const out = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => ((stderr += String(chunk)), true));
    try {
      return { value: await body(), stderr };
    } finally {
      out.mockRestore();
      err.mockRestore();
    }
  };

  it.each([
    ['no reviewers, none named: a single person\'s code, as before', [], undefined, { ok: true, reviewer: undefined }],
    ['reviewers, one named in another case: their name as added', ['Ana Pérez'], 'ana pérez', { ok: true, reviewer: 'Ana Pérez' }],
    ['reviewers, none named: refused, listing them', ['Ana Pérez', 'Li'], undefined, { ok: false, message: expect.stringMatching(/name the one .* --reviewer <name> \(Ana Pérez, Li\)$/) }],
    ['a name the hub does not know: refused, saying how to add it', ['Ana Pérez'], 'Bo', { ok: false, message: expect.stringMatching(/no reviewer named "Bo"; add them first/) }],
  ] as const)('%s', async (_what, names, named, expected) => {
    await withState((state) => {
      for (const name of names) state.putReviewer(name, []);
      expect(pairingReviewer(state, named)).toEqual(expected);
    });
  });

  it('a refused code is never made; a named one carries the reviewer into the pairing', async () => {
    await withState(async (state) => {
      state.putReviewer('Ana Pérez', ['ops']);
      const refused = await quiet(() => runPairCommand(state, { kind: 'code' }));
      expect(refused.value).toBe(2);
      expect(state.pairing('extension')).toBeUndefined();
      expect((await quiet(() => runPairCommand(state, { kind: 'code', reviewer: 'ana pérez' }))).value).toBe(0);
      expect(state.pairing('extension')?.reviewer).toBe('Ana Pérez');
    });
  });

  it('reviewer remove forgets the browsers and phones paired for them, and only theirs', async () => {
    await withState((state) => {
      state.putReviewer('Ana', ['ops']);
      state.putReviewer('Li', []);
      const anas = state.addPairedExtension('chrome-extension://a', 1, 'Ana');
      state.addPairedDevice('Ana phone', 'https://hub.example', 1, 'Ana');
      const lis = state.addPairedExtension('chrome-extension://b', 1, 'Li');
      expect(state.reviewerOf(anas.keyId)).toBe('Ana');
      expect(state.removeReviewer('ANA')).toEqual({ extensions: 1, devices: 1 });
      expect(state.reviewers().map((r) => r.name)).toEqual(['Li']);
      expect(state.pairedExtensions().map((e) => e.keyId)).toEqual([lis.keyId]);
      expect(state.pairedDevices()).toEqual([]);
      expect(state.reviewerOf(anas.keyId)).toBeUndefined();
      expect(state.removeReviewer('Ana')).toBeNull();
    });
  });

  it('reviewer add again sets the groups, keeping the name as first written', async () => {
    await withState((state) => {
      expect(state.putReviewer('Ana', ['ops']).added).toBe(true);
      const again = state.putReviewer('ANA', ['sec', 'ops', 'sec']);
      expect(again).toMatchObject({ added: false, reviewer: { name: 'Ana', groups: ['ops', 'sec'] } });
    });
  });
});

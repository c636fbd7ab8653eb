// What `elicitly-companion pair` tells the person: the code's own deadline and the same validity the extension's hint
// names, however long making the code took (the state dir's lock can keep it waiting).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runPairCommand, validUntil } from '../../server/pair-command.js';
import { PAIRING_TTL_MS, StateDir } from '../../server/state-dir.js';
import { PAIRING_TTL_MINUTES } from '../../shared/hub-auth.js';

function run(state: Parameters<typeof runPairCommand>[0]): { stdout: string; stderr: string } {
  let stdout = '';
  let stderr = '';
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => ((stdout += String(chunk)), true));
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => ((stderr += String(chunk)), true));
  try {
    expect(runPairCommand(state, { kind: 'code' })).toBe(0);
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
  return { stdout, stderr };
}

describe('elicitly-companion pair', () => {
  afterEach(() => vi.useRealTimers());

  it('names the validity the extension names, and the code\'s deadline to the second', () => {
    expect(PAIRING_TTL_MS).toBe(PAIRING_TTL_MINUTES * 60_000);
    const dir = mkdtempSync(join(tmpdir(), 'elicitly-pair-'));
    try {
      const state = new StateDir(dir);
      const { stdout, stderr } = run(state);
      const code = stdout.trim();
      const expiresAt = state.pairing('extension')?.expiresAt ?? 0;
      expect(code).toMatch(/^[0-9a-f]{12}$/);
      expect(stderr).toBe(`Enter this code in the Elicitly extension (Settings → Pairing code → Pair) before ${validUntil(expiresAt)} (a code is valid ${PAIRING_TTL_MINUTES} minutes) to pair it with this computer:\n`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('says the same when making the code waited 40 s for the lock (it printed "within 9 minutes")', () => {
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
    };
    const { stderr } = run(state);
    expect(stderr).toContain('before 14:23:40 (a code is valid 10 minutes)');
    expect(stderr).not.toMatch(/\b9 minutes/);
  });
});

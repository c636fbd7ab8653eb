import { describe, expect, it } from 'vitest';
import { runSoak } from '../helpers/approval-soak.js';
import { stressScale } from '../helpers/stress.js';

// 20 s under `npm run stress`; 8 s with a kill about every second in `npm test` (still takeovers under load).
const DURATION_MS = stressScale(8_000, 20_000);
const KILL_EVERY_MS = stressScale(1_000, 3_000);
const MIN_KILLS = stressScale(2, 3);

describe('a bounded soak: 4 server processes, a scripted extension, the hub SIGKILLed every few seconds', () => {
  it('keeps every invariant', async () => {
    const report = await runSoak({ durationMs: DURATION_MS, agents: 4, killEveryMs: KILL_EVERY_MS, seed: 0x50a_c0de });
    console.log(`soak: ${JSON.stringify(report)}`);
    // It did real work, through real takeovers.
    expect(report.kills).toBeGreaterThanOrEqual(MIN_KILLS);
    expect(report.creates.acknowledged).toBeGreaterThan(stressScale(20, 50));
    expect(report.decisions.acknowledged).toBeGreaterThan(10);
    expect(report.violations).toEqual({
      missingAfterRestart: [],
      decidedTwice: [],
      lostDecisions: [],
      lostCancels: [],
      replayMismatches: [],
      resultDisagrees: [],
      protocolErrors: [],
    });
  }, 90_000);
});

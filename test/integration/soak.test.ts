import { describe, expect, it } from 'vitest';
import { runSoak } from '../helpers/approval-soak.js';

describe('a bounded soak: 4 server processes, a scripted extension, the hub SIGKILLed every few seconds', () => {
  it('keeps every invariant', async () => {
    const report = await runSoak({ durationMs: 20_000, agents: 4, killEveryMs: 3000, seed: 0x50a_c0de });
    console.log(`soak: ${JSON.stringify(report)}`);
    // It did real work, through real takeovers.
    expect(report.kills).toBeGreaterThanOrEqual(3);
    expect(report.creates.acknowledged).toBeGreaterThan(50);
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

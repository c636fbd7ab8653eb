// `npm run bench`, last: the approval soak of the test suite, run longer. Measured numbers and invariants, printed.
import { runSoak } from '../test/helpers/approval-soak.js';

export async function soak(): Promise<void> {
  const durationMs = Number(process.env.ELICITLY_BENCH_SOAK_MS ?? 60_000);
  const report = await runSoak({ durationMs, agents: 4, killEveryMs: 3000, seed: Date.now() & 0xffffffff });
  const broken = Object.entries(report.violations).filter(([, list]) => list.length > 0);
  const seconds = report.durationMs / 1000;
  console.log(`\nsoak (${seconds.toFixed(1)} s, 4 server processes, hub SIGKILLed ${report.kills} times, ${report.respawns} processes respawned)`);
  console.log(`  creates acknowledged   ${report.creates.acknowledged} (${(report.creates.acknowledged / seconds).toFixed(1)}/s), refused ${report.creates.refused}, lost with their process ${report.creates.lostWithProcess}`);
  console.log(`  decisions              sent ${report.decisions.sent} (second surface ${report.decisions.secondSurface}), acknowledged ${report.decisions.acknowledged}, refused ${report.decisions.refused}`);
  console.log(`  cancels acknowledged   ${report.cancels.acknowledged}; awaits ${report.awaits}; results read ${report.results}`);
  console.log(`  requests after restart ${report.finalRequests}`);
  console.log(`  invariants             ${broken.length === 0 ? 'all held' : `BROKEN: ${JSON.stringify(Object.fromEntries(broken))}`}`);
  if (broken.length > 0) process.exitCode = 1;
}

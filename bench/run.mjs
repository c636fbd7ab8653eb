// `npm run bench` (run with tsx, as the TypeScript parts share the tests' helpers): measured numbers, printed; not a
// pass/fail test. The closing summary sets each headline number beside the previous run's (bench/baseline.json, which
// this run then replaces; ELICITLY_BENCH_SAVE=0 keeps it) and beside a bare `node -e ''`.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { app } from './app.mjs';
import { approvals, engineCreates, engineCreatesOnPostgres, minimalClientCreates } from './approvals.ts';
import { coldStart } from './cold-start.mjs';
import { extension } from './extension.mjs';
import { ledgerBench } from './ledger.ts';
import { multiHub } from './multi-hub.ts';
import { report } from './metrics.mjs';
import { notify } from './notify.ts';
import { packageBench } from './package.mjs';
import { phone } from './phone.ts';
import { rulesBench } from './rules.ts';
import { soak } from './soak.ts';

await coldStart();
await packageBench();
await approvals();
await minimalClientCreates();
await engineCreates();
await engineCreatesOnPostgres();
await multiHub();
await rulesBench();
await ledgerBench();
await extension();
await app();
await phone();
await notify();
await soak();

let commit = '';
try {
  commit = execFileSync('git', ['describe', '--always', '--dirty'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
} catch {
  // not a git checkout: the baseline is saved without a commit
}
report(fileURLToPath(new URL('baseline.json', import.meta.url)), { save: process.env.ELICITLY_BENCH_SAVE !== '0', commit });

// `npm run bench` (run with tsx, as the TypeScript parts share the tests' helpers): measured numbers, printed; not a
// pass/fail test.
import { app } from './app.mjs';
import { approvals } from './approvals.ts';
import { coldStart } from './cold-start.mjs';
import { extension } from './extension.mjs';
import { notify } from './notify.ts';
import { packageBench } from './package.mjs';
import { soak } from './soak.ts';

await coldStart();
await packageBench();
await approvals();
await extension();
await app();
await notify();
await soak();

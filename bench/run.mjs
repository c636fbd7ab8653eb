// `npm run bench`: measured numbers, printed; not a pass/fail test.
import { approvals } from './approvals.mjs';
import { coldStart } from './cold-start.mjs';
import { extension } from './extension.mjs';

await coldStart();
await approvals();
await extension();

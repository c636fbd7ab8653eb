// `npm run bench`: measured numbers, printed; not a pass/fail test.
import { approvals } from './approvals.mjs';
import { coldStart } from './cold-start.mjs';

await coldStart();
await approvals();

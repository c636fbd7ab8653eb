// `npm run bench`: measured numbers, printed; not a pass/fail test.
import { coldStart } from './cold-start.mjs';

await coldStart();

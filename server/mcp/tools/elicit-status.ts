import * as z from 'zod';
import { idTool } from './id-tool.js';

export const elicitStatus = idTool({
  name: 'elicit_status',
  method: 'status',
  title: 'Look at an approval request',
  description:
    'Return the status of an approval request (pending, approved, rejected, canceled, expired, consumed) without ' +
    'waiting and without consuming it. Use elicit_await to wait for a decision instead of polling this. On a team\'s ' +
    'hub a request that needs several approvals also says how many reviewers approved so far (approvals).',
  outputSchema: z.looseObject({ status: z.string() }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
});

import * as z from 'zod';
import { idTool } from './id-tool.js';

export const elicitCancel = idTool({
  name: 'elicit_cancel',
  method: 'cancel',
  title: 'Withdraw an approval request',
  description:
    'Withdraw a pending approval request the agent no longer needs; the reviewer stops seeing it. An error if it was ' +
    'already decided (read it with elicit_result) or expired.',
  outputSchema: z.looseObject({ status: z.literal('canceled') }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
});

import * as z from 'zod';
import { idTool } from './id-tool.js';

export const elicitResult = idTool({
  name: 'elicit_result',
  method: 'result',
  title: 'Read the decision',
  description:
    'Return the decision on an approval request: { status: "consumed", decision, action, context, values } where ' +
    'values holds the approved fields (for a proposal, only the included ones); for an ask that went to the extension ' +
    '(elicit_confirm, elicit_form, elicit_selection), the same shape that tool returns. An error while it is pending (call ' +
    'elicit_await), after it expired, or after elicit_cancel. Reading again returns the same answer.',
  // An approval's envelope has status and decision; an ask's result (confirm, form, selection) has its own seed shape.
  outputSchema: z.looseObject({ action: z.string() }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
});

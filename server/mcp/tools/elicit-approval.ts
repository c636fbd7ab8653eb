import { ElicitApprovalInputSchema, checkApprovalInput } from '../../../shared/approval-input.js';
import { CreatedOutputSchema, createReviewRequest } from './review-request.js';
import { defineTool } from './tool.js';

export const elicitApproval = defineTool({
  name: 'elicit_approval',
  inChat: true,
  config: {
    title: 'Ask a person to approve',
    description:
      'Ask a person to approve or decline, in the Elicitly browser extension, and survive restarts while they decide. ' +
      'json mode: pass context (shown read-only, optionally through a LiquidJS displayTemplate) to approve as-is; form ' +
      'mode: pass requestedSchema and the person fills the fields; both: context above the form. Returns at once with an ' +
      'elicitationId; then call elicit_await (long-poll) and elicit_result. Prefer it over elicit_confirm when the host ' +
      'cannot show dialogs or the decision may take longer than a tool call.',
    inputSchema: ElicitApprovalInputSchema,
    outputSchema: CreatedOutputSchema,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  },
  handler: (args, ctx, session) => createReviewRequest(ctx, session, args, checkApprovalInput),
});

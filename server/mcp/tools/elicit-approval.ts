import { ElicitApprovalInputSchema, checkApprovalInput } from '../../../shared/approval-input.js';
import { createReviewRequest } from './review-request.js';
import { CreatedOutputSchema } from './elicit-proposal.js';
import { registerTool, type ToolDefinition } from './tool.js';
import { appToolMeta } from '../app/app-result.js';

export const elicitApproval: ToolDefinition = {
  name: 'elicit_approval',
  register(server, session) {
    registerTool(server, 
      'elicit_approval',
      {
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
        ...appToolMeta(session),
      },
      (args, ctx) => createReviewRequest(ctx, session, args, checkApprovalInput),
    );
  },
};

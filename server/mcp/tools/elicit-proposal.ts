import { ElicitProposalInputSchema, checkProposalInput } from '../../../shared/approval-input.js';
import { CreatedOutputSchema, createReviewRequest } from './review-request.js';
import { defineTool } from './tool.js';

export const elicitProposal = defineTool({
  name: 'elicit_proposal',
  inChat: true,
  config: {
    title: 'Propose a record change for field-by-field review',
    description:
      'Ask a person to review a proposed record create-or-update as a diff grid in the Elicitly browser extension: ' +
      'read-only Source columns (where each value came from), a read-only Current column, an editable Proposed column ' +
      '(initial values = requestedSchema defaults) and an Include box per field. Use it for enrichment or sync, when the ' +
      'person should see where each value came from and decide per field. Returns at once with an elicitationId; then ' +
      'call elicit_await and elicit_result, whose values hold only the fields the person included.',
    inputSchema: ElicitProposalInputSchema,
    outputSchema: CreatedOutputSchema,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  },
  handler: (args, ctx, session) => createReviewRequest(ctx, session, args, checkProposalInput),
});

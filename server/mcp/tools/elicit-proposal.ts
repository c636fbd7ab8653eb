import * as z from 'zod';
import { ElicitProposalInputSchema, checkProposalInput } from '../../../shared/approval-input.js';
import { createReviewRequest } from './review-request.js';
import { registerTool, type ToolDefinition } from './tool.js';
import { appToolMeta } from '../app/app-result.js';

export const CreatedOutputSchema = z.looseObject({
  elicitationId: z.string(),
  status: z.literal('pending'),
  expiresAt: z.string(),
  reviewer: z.looseObject({ connected: z.boolean() }),
});

export const elicitProposal: ToolDefinition = {
  name: 'elicit_proposal',
  register(server, session) {
    registerTool(server, 
      'elicit_proposal',
      {
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
        ...appToolMeta(session),
      },
      (args, ctx) => createReviewRequest(ctx, session, args, checkProposalInput),
    );
  },
};

import * as z from 'zod';
import { answerResult, ElicitationIdSchema } from './approval-answers.js';
import { registerTool, type ToolDefinition } from './tool.js';

const ElicitCancelInputSchema = z.strictObject({ elicitationId: ElicitationIdSchema });

export const elicitCancel: ToolDefinition = {
  name: 'elicit_cancel',
  register(server, session) {
    registerTool(server, 
      'elicit_cancel',
      {
        title: 'Withdraw an approval request',
        description:
          'Withdraw a pending approval request the agent no longer needs; the reviewer stops seeing it. An error if it was ' +
          'already decided (read it with elicit_result) or expired.',
        inputSchema: ElicitCancelInputSchema,
        outputSchema: z.looseObject({ status: z.literal('canceled') }),
        annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
      },
      async (args, ctx) => answerResult(await session.approvals.call('cancel', { id: args.elicitationId }, ctx.mcpReq.signal), session.retentionDays),
    );
  },
};

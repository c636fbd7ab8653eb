import * as z from 'zod';
import { answerResult, ElicitationIdSchema } from './approval-answers.js';
import { registerTool, type ToolDefinition } from './tool.js';

const ElicitStatusInputSchema = z.strictObject({ elicitationId: ElicitationIdSchema });

export const elicitStatus: ToolDefinition = {
  name: 'elicit_status',
  register(server, session) {
    registerTool(server, 
      'elicit_status',
      {
        title: 'Look at an approval request',
        description:
          'Return the status of an approval request (pending, approved, rejected, canceled, expired, consumed) without ' +
          'waiting and without consuming it. Use elicit_await to wait for a decision instead of polling this.',
        inputSchema: ElicitStatusInputSchema,
        outputSchema: z.looseObject({ status: z.string() }),
        annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      },
      async (args, ctx) => answerResult(await session.approvals.call('status', { id: args.elicitationId }, ctx.mcpReq.signal), session.retentionDays),
    );
  },
};

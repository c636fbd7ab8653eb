import * as z from 'zod';
import { answerResult, ElicitationIdSchema } from './approval-answers.js';
import type { ToolDefinition } from './tool.js';

const ElicitResultInputSchema = z.strictObject({ elicitationId: ElicitationIdSchema });

export const elicitResult: ToolDefinition = {
  name: 'elicit_result',
  register(server, session) {
    server.registerTool(
      'elicit_result',
      {
        title: 'Read the decision',
        description:
          'Return the decision on an approval request: { status: "consumed", decision, action, context, values } where ' +
          'values holds the approved fields (for a proposal, only the included ones). An error while it is pending (call ' +
          'elicit_await), after it expired, or after elicit_cancel. Reading again returns the same answer.',
        inputSchema: ElicitResultInputSchema,
        outputSchema: z.looseObject({ status: z.string(), decision: z.string(), action: z.string() }),
        annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      },
      async (args, ctx) => answerResult(await session.approvals.call('result', { id: args.elicitationId }, ctx.mcpReq.signal), session.retentionDays),
    );
  },
};

import * as z from 'zod';
import { clamp } from '../../../shared/limits.js';
import { startProgress } from '../host-elicitation.js';
import { answerResult, ElicitationIdSchema } from './approval-answers.js';
import { defineTool } from './tool.js';

const ElicitAwaitInputSchema = z.strictObject({
  elicitationId: ElicitationIdSchema,
  waitSeconds: z.number().optional().describe('How long to wait at most. Default 45, clamped to 1–600.'),
});

export const elicitAwait = defineTool({
  name: 'elicit_await',
  config: {
    title: 'Wait for a decision',
    description:
      'Wait until an approval request is decided, withdrawn or expired, or until waitSeconds pass (default 45), and ' +
      'return { status }. "pending" means nobody decided yet: call again. Then read the decision with elicit_result.',
    inputSchema: ElicitAwaitInputSchema,
    outputSchema: z.looseObject({ status: z.string() }),
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  async handler(args, ctx, session) {
    const waitMs = clamp(args.waitSeconds, 45, 1, 600) * 1000;
    const stopProgress = startProgress(ctx, Date.now(), 'the reviewer');
    try {
      return answerResult(await session.approvals.call('await', { id: args.elicitationId, waitMs }, ctx.mcpReq.signal), session.retentionDays);
    } finally {
      stopProgress();
    }
  },
});

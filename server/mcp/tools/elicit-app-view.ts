import { AppErrorSchema, AppViewInputSchema, AppViewResultSchema, type AppViewResult } from '../../../shared/app-surface.js';
import { structured, toolError } from '../tool-result.js';
import { defineTool } from './tool.js';

/** The review inside the chat reads its request here: the same view the extension gets, decided or not, and by whom. */
export const elicitAppView = defineTool({
  name: 'elicit_app_view',
  appOnly: true,
  config: {
    title: 'Review view (for the Elicitly app)',
    description: 'Used by the Elicitly review shown inside the chat to read its request. Not for the model.',
    inputSchema: AppViewInputSchema,
    outputSchema: AppViewResultSchema,
    ownRefusal: AppErrorSchema,
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  async handler(args, ctx, session) {
    // Only what this connection created for the app: a request kept to the extension (`surfaces`) stays there.
    if (!session.app?.keys.has(args.elicitationId)) {
      return toolError({ code: 'not_in_app', field: 'elicitationId', message: `${args.elicitationId} was not created for review in this chat; it is decided in the browser extension` });
    }
    const answer = await session.approvals.call('view', { id: args.elicitationId }, ctx.mcpReq.signal);
    if (!answer.ok) return toolError({ code: answer.error.code === 'not_found' ? 'not_found' : 'unavailable', field: 'elicitationId', message: answer.error.message });
    const { outcome, decidedAt } = answer.value;
    const result: AppViewResult = {
      view: answer.value,
      decided: outcome && decidedAt !== undefined ? { via: outcome.decidedVia ?? 'extension', at: decidedAt } : null,
    };
    return structured(result);
  },
});

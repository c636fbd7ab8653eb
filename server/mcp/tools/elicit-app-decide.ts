import { AppErrorSchema, AppDecideInputSchema, AppDecideResultSchema, type AppDecideResult } from '../../../shared/app-surface.js';
import { structured, toolError } from '../tool-result.js';
import { defineTool } from './tool.js';

/** Refusals that end the request for every surface: the key has done its job. `invalid` is not one (fix and resend). */
const FINAL_REFUSALS = new Set(['already_decided', 'expired', 'withdrawn', 'not_found']);

/**
 * The person's decision in the review inside the chat. It takes the same path as the extension's (the engine's
 * decide: same checks of values and included fields, first decision wins, on disk before `ok`), behind the request's
 * single-use key, which only the rendered view was given.
 */
export const elicitAppDecide = defineTool({
  name: 'elicit_app_decide',
  appOnly: true,
  config: {
    title: 'Submit a decision (for the Elicitly app)',
    description: 'Used by the Elicitly review shown inside the chat to submit the person\'s decision. Not for the model: it needs the key only the review was given.',
    inputSchema: AppDecideInputSchema,
    outputSchema: AppDecideResultSchema,
    ownRefusal: AppErrorSchema,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  async handler(args, ctx, session) {
    const keys = session.app?.keys;
    const { token, ...decision } = args;
    const check = keys ? keys.check(args.elicitationId, token) : 'not_in_app';
    if (check === 'not_in_app') return toolError({ code: 'not_in_app', field: 'elicitationId', message: `${args.elicitationId} was not created for review in this chat; decide it in the browser extension` });
    if (check === 'token_missing') return toolError({ code: 'token_missing', field: 'token', message: 'token: required; only the review shown to the person holds it' });
    if (check === 'token_invalid') return toolError({ code: 'token_invalid', field: 'token', message: 'token: not the key of this request' });
    if (check === 'token_spent') return toolError({ code: 'token_spent', field: 'token', message: 'token: already used by the decision made in this review' });
    const answer = await session.approvals.call('decide', decision, ctx.mcpReq.signal);
    if (!answer.ok) return toolError({ code: answer.error.code === 'not_in_app' ? 'not_in_app' : 'unavailable', field: 'elicitationId', message: answer.error.message });
    if (answer.value.ok || (answer.value.reason !== undefined && FINAL_REFUSALS.has(answer.value.reason))) keys?.spend(args.elicitationId);
    const result: AppDecideResult = { ...answer.value };
    // Refused because a surface decided first: say which, and when.
    if (!answer.value.ok && answer.value.reason === 'already_decided') {
      const view = await session.approvals.call('view', { id: args.elicitationId }, ctx.mcpReq.signal);
      if (view.ok && view.value.outcome && view.value.decidedAt !== undefined) result.decided = { via: view.value.outcome.decidedVia ?? 'extension', at: view.value.decidedAt };
    }
    return structured(result);
  },
});

import {
  AppErrorSchema, AppDecideInputSchema, AppDecideResultSchema, type AppError, type AppErrorCode,
} from '../../../shared/app-surface.js';
import { formatIssues } from '../../../shared/field-issues.js';
import type { DecidedVia, Status } from '../../../shared/lifecycle.js';
import type { RequestView } from '../../../shared/review-request.js';
import type { DecisionAnswer, DecisionRefusal } from '../../../shared/wire-fields.js';
import type { KeyCheck } from '../app/app-keys.js';
import { structured, toolError } from '../tool-result.js';
import { defineTool } from './tool.js';

/** Refusals that end the request for every surface: the key has done its job. `invalid` is not one (fix and resend). */
const FINAL_REFUSALS: ReadonlySet<DecisionRefusal> = new Set(['already_decided', 'expired', 'withdrawn', 'not_found']);

const DECIDED_BY: Record<DecidedVia, string> = { extension: 'in the browser extension', app: 'in the chat', rule: 'by one of the person\'s rules', phone: 'on a paired phone' };

const KEY_PROBLEM: Record<Exclude<KeyCheck, 'ok' | 'not_in_app'>, string> = {
  token_missing: 'token: required; only the review shown to the person holds it',
  token_invalid: 'token: not the key of this request',
  token_spent: 'token: already used by the decision made in this review',
};

/** Who decided a request, and when, from its view; undefined while it is undecided. */
function decidedOf(view: RequestView): { via: DecidedVia; at: number } | undefined {
  if (!view.outcome || view.decidedAt === undefined) return undefined;
  return { via: view.outcome.decidedVia ?? 'extension', at: view.decidedAt };
}

/** How a request that is no longer pending ended, as the refusal a decision of it gets; undefined while it is pending. */
function endedRefusal(view: RequestView): AppError | undefined {
  const ended: Partial<Record<Status, DecisionRefusal>> = { approved: 'already_decided', rejected: 'already_decided', consumed: 'already_decided', expired: 'expired', canceled: 'withdrawn' };
  const reason = ended[view.status];
  return reason && decisionRefusal({ ok: false, reason }, view);
}

/** The engine's refusal of a decision as the tool's `isError` refusal: the field it is about and the rule, in words. */
function decisionRefusal(answer: DecisionAnswer & { reason: DecisionRefusal }, view: RequestView | undefined): AppError {
  const decided = view && decidedOf(view);
  const at = (ms: number) => new Date(ms).toISOString();
  const said: Record<DecisionRefusal, { field: string; message: string }> = {
    invalid: { field: answer.issues?.[0]?.path ?? 'values', message: answer.issues?.length ? formatIssues(answer.issues) : 'values: do not fit the request' },
    already_decided: {
      field: 'elicitationId',
      message: decided ? `already decided ${DECIDED_BY[decided.via]} at ${at(decided.at)}; its decision stands` : 'already decided; its decision stands',
    },
    expired: { field: 'elicitationId', message: view ? `expired at ${at(view.expiresAt)} without a decision` : 'expired without a decision' },
    withdrawn: { field: 'elicitationId', message: 'withdrawn by the agent that asked; there is nothing to decide' },
    not_found: { field: 'elicitationId', message: 'no such request' },
    shown_mismatch: { field: 'shownHash', message: 'shownHash: not the hash of the stored request; read the request again before deciding' },
    passkey_required: { field: 'passkey', message: 'passkey: this request needs the person\'s passkey; decide it in the browser extension' },
    passkey_invalid: { field: 'passkey', message: 'passkey: the assertion is not over this decision' },
  };
  const { field, message } = said[answer.reason];
  return {
    error: { code: answer.reason satisfies AppErrorCode, field, message },
    ...(answer.reason === 'invalid' && answer.issues ? { issues: answer.issues } : {}),
    ...(decided && answer.reason === 'already_decided' ? { decided } : {}),
  };
}

/**
 * The person's decision in the review inside the chat. It takes the same path as the extension's (the engine's
 * decide: same checks of values and included fields, first decision wins, on disk before `ok`), behind the request's
 * single-use key, which only the rendered view was given. A decision taken is `{ ok: true, status }`; every refusal is
 * an `isError` result naming the field and the rule.
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
    const view = async () => {
      const read = await session.approvals.call('view', { id: args.elicitationId }, ctx.mcpReq.signal);
      return read.ok ? read.value : undefined;
    };
    if (check !== 'ok') {
      // No key decides a request that has ended: say how it ended (and who decided, when) rather than what is wrong
      // with the key, which would send the person to decide it elsewhere.
      const shown = await view();
      const ended = shown && endedRefusal(shown);
      if (ended) return structured(ended, true);
      return toolError({ code: check, field: 'token', message: KEY_PROBLEM[check] });
    }
    const answer = await session.approvals.call('decide', decision, ctx.mcpReq.signal);
    if (!answer.ok) return toolError({ code: answer.error.code === 'not_in_app' ? 'not_in_app' : 'unavailable', field: 'elicitationId', message: answer.error.message });
    const { ok, status, reason } = answer.value;
    if (ok || (reason !== undefined && FINAL_REFUSALS.has(reason))) keys?.spend(args.elicitationId);
    if (ok && status !== undefined) return structured({ ok: true, status });
    if (reason === undefined) return toolError({ code: 'unavailable', field: 'elicitationId', message: 'the hub answered the decision without saying whether it was taken' });
    const refusal = decisionRefusal({ ...answer.value, reason }, reason === 'already_decided' || reason === 'expired' ? await view() : undefined);
    return structured(refusal, true);
  },
});

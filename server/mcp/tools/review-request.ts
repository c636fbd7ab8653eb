import type { CallToolResult, ServerContext } from '@modelcontextprotocol/server';
import * as z from 'zod';
import type { ReviewedRequest } from '../../../shared/approval-input.js';
import type { FieldIssue } from '../../../shared/field-issues.js';
import { clamp } from '../../../shared/limits.js';
import { checkSurfaces } from '../../../shared/app-surface.js';
import { withAppKey } from '../app/app-result.js';
import type { Session } from '../session.js';
import { hostName } from '../session.js';
import { createDurableRequest } from '../../durable-request.js';
import { toolError } from '../tool-result.js';
import { answerResult } from './approval-answers.js';

/** What elicit_approval and elicit_proposal return: the request, filed and waiting. */
export const CreatedOutputSchema = z.looseObject({
  elicitationId: z.string(),
  status: z.literal('pending'),
  expiresAt: z.string(),
  reviewer: z.looseObject({ connected: z.boolean() }),
});

type Checked<T> = { ok: true; request: T; displayTemplate: string | null } | { ok: false; issues: FieldIssue[] };

/** Shared by elicit_approval and elicit_proposal: check, render the template, store durably, answer at once. */
export async function createReviewRequest<T extends ReviewedRequest>(
  ctx: ServerContext,
  session: Session,
  args: { timeoutSeconds?: number; surfaces?: unknown; assurance?: 'passkey' },
  check: (input: unknown) => Checked<T>,
): Promise<CallToolResult> {
  const checked = check(args);
  const surfaces = checkSurfaces(args.surfaces);
  const issues = [...(checked.ok ? [] : checked.issues), ...(surfaces.ok ? [] : surfaces.issues)];
  if (!checked.ok || !surfaces.ok) return toolError({ code: 'invalid_arguments', issues, hint: 'Fix the named field and call again; nothing was sent to the reviewer.' });
  let renderedTemplate: string | null = null;
  if (checked.displayTemplate !== null) {
    // LiquidJS is loaded only for a request that has a template.
    const { renderTemplate } = await import('../../approvals/render-template.js');
    const rendered = await renderTemplate(checked.displayTemplate, checked.request.context);
    if (!rendered.ok) {
      const message = `displayTemplate: the LiquidJS template was refused: ${rendered.error}`;
      const hint = rendered.code === 'busy' ? 'Call again in a moment.' : 'Fix the template and call again.';
      return toolError({ code: 'invalid_arguments', message, hint, issues: [{ path: 'displayTemplate', rule: rendered.code, message }] });
    }
    renderedTemplate = rendered.html;
  }
  // The check clamps to the seed's 60 s minimum; ELICITLY_MIN_TIMEOUT_SECONDS may lower it (tests, demos).
  const timeoutSeconds = clamp(args.timeoutSeconds, 3600, session.minTimeoutSeconds, 86_400);
  const request: ReviewedRequest = { ...checked.request, timeoutSeconds };
  const answer = await createDurableRequest(session.approvals, {
    request,
    renderedTemplate,
    client: hostName(ctx, session),
    // The hub enforces this: without the app here no review can be shown, so none may decide.
    surfaces: surfaces.app && session.app ? ['extension', 'app'] : ['extension'],
    ...(args.assurance ? { assurance: args.assurance } : {}),
  });
  const result = answerResult(answer, session.retentionDays);
  return surfaces.app && answer.ok ? withAppKey(result, session, answer.value.elicitationId) : result;
}

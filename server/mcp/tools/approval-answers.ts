import type { CallToolResult } from '@modelcontextprotocol/server';
import * as z from 'zod';
import type { Answer, ServiceError, ServiceErrorCode } from '../../../shared/peer-calls.js';
import { structured, toolError } from '../tool-result.js';

export const ElicitationIdSchema = z.string().trim().min(1).max(100).describe('The elicitationId returned by elicit_approval or elicit_proposal.');

function hint(code: ServiceErrorCode, retentionDays: number): string {
  const kept = retentionDays === 1 ? '1 day' : `${retentionDays} days`;
  const hints: Record<ServiceErrorCode, string> = {
    not_found: `Check the elicitationId; requests are kept ${kept} after they end.`,
    pending: 'Call elicit_await with this elicitationId to wait for the decision, then elicit_result.',
    expired: 'Nobody decided in time and nothing was approved; create a new request if it still matters.',
    canceled: 'The request was withdrawn; create a new one if needed.',
    already_decided: 'Read the decision with elicit_result.',
    already_canceled: 'Nothing to do.',
    invalid: 'Fix the named field and call again.',
    limit: 'Wait for the person to decide, or withdraw requests you no longer need with elicit_cancel, then call again.',
    unavailable: 'The approval hub could not be reached; call again in a moment.',
    not_in_app: 'Decide it in the Elicitly browser extension.',
    forbidden: 'This server\'s key may not do that on the hub; see `elicitly-companion key list` on the hub\'s computer.',
    unknown_method: 'The hub is of another version; run the same elicitly-companion version on both sides.',
    rate_limited: 'Slow down, then call again.',
  };
  return hints[code];
}

/** A service error as an actionable isError result: the code, what happened, and what to do. */
export function approvalError(error: ServiceError, retentionDays: number): CallToolResult {
  return toolError({ code: error.code, message: error.message, hint: hint(error.code, retentionDays) });
}

/** Maps a service answer to the tool's result: the value as structured content, or an actionable isError. */
export function answerResult<T extends Record<string, unknown>>(answer: Answer<T>, retentionDays: number): CallToolResult {
  return answer.ok ? structured(answer.value) : approvalError(answer.error, retentionDays);
}

import type { CallToolResult } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { Answer } from '../approvals/service.js';
import { structured } from '../tool-result.js';

export const ElicitationIdSchema = z.string().trim().min(1).max(100).describe('The elicitationId returned by elicit_approval or elicit_proposal.');

const HINTS: Record<string, string> = {
  not_found: 'Check the elicitationId; requests are kept 7 days after they end.',
  pending: 'Call elicit_await with this elicitationId to wait for the decision, then elicit_result.',
  expired: 'Nobody decided in time and nothing was approved; create a new request if it still matters.',
  canceled: 'The request was withdrawn; create a new one if needed.',
  already_decided: 'Read the decision with elicit_result.',
  already_canceled: 'Nothing to do.',
  invalid: 'Fix the named field and call again.',
  unavailable: 'The approval hub could not be reached; call again in a moment.',
};

/** Maps a service answer to the tool's result: the value as structured content, or an actionable isError. */
export function answerResult<T extends object>(answer: Answer<T>): CallToolResult {
  if (answer.ok) return structured(answer.value as Record<string, unknown>);
  const body = { error: answer.error.code, message: answer.error.message, hint: HINTS[answer.error.code] ?? '' };
  return { content: [{ type: 'text', text: JSON.stringify(body) }], isError: true };
}

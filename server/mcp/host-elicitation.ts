import type { InputRequiredResult, ServerContext } from '@modelcontextprotocol/server';
import { ProtocolError, ProtocolErrorCode, SdkError, SdkErrorCode, inputRequired, inputResponse } from '@modelcontextprotocol/server';
import { deriveSupport } from './doctor/doctor-verdict.js';
import { clipReason } from '../../shared/limits.js';
import type { RequestedSchema } from '../../shared/requested-schema.js';
import { formatIssues } from '../../shared/field-issues.js';
import { validateValues } from '../../shared/requested-schema.js';
import { log } from '../log.js';
import type { RoundState, Session } from './session.js';
import { hostView } from './session.js';

export type ElicitOutcome =
  | { action: 'accept'; content: Record<string, unknown>; latencyMs: number }
  | { action: 'decline' | 'cancel'; latencyMs: number }
  | { action: 'error'; error: string; reason: 'not_advertised' | 'timed_out' | 'threw' | 'invalid_content'; latencyMs: number };

/** Either the finished answer, or (2026-07-28) the `input_required` result the tool must return to ask for it. */
type ElicitStep = { done: true; outcome: ElicitOutcome } | { done: false; result: InputRequiredResult };

export interface ElicitRequest {
  tool: string;
  message: string;
  requestedSchema: RequestedSchema;
  timeoutMs: number;
}

const INPUT_KEY = 'elicitly';
const PROGRESS_EVERY_MS = 5000;

export function hostAdvertisesForm(ctx: ServerContext, session: Session): boolean {
  return deriveSupport(hostView(ctx, session).capabilities).elicitationForm;
}

/** The SDK checks accepted content on one era only; checking here gives both eras the same answer. */
function accepted(schema: RequestedSchema, content: unknown, latencyMs: number): ElicitOutcome {
  const checked = validateValues(schema, content ?? {}, { prefix: 'content' });
  if (!checked.ok) {
    return { action: 'error', reason: 'invalid_content', error: clipReason(`the host returned content that does not match the schema: ${formatIssues(checked.issues)}`), latencyMs };
  }
  return { action: 'accept', content: checked.values, latencyMs };
}

/** While a human is deciding, tell a host that asked for progress that the call is alive. */
export function startProgress(ctx: ServerContext, startedAt: number, what = "the person's answer"): () => void {
  const token = ctx.mcpReq._meta?.progressToken;
  if (token === undefined) return () => undefined;
  let ticks = 0;
  const timer = setInterval(() => {
    ticks += 1;
    const waited = Math.round((Date.now() - startedAt) / 1000);
    ctx.mcpReq
      .notify({ method: 'notifications/progress', params: { progressToken: token, progress: ticks, message: `waiting for ${what} (${waited} s)` } })
      .catch((error: unknown) => log('debug', 'progress notification failed', { error: String(error) }));
  }, PROGRESS_EVERY_MS);
  return () => clearInterval(timer);
}

async function elicitPushed(ctx: ServerContext, request: ElicitRequest): Promise<ElicitOutcome> {
  const startedAt = Date.now();
  const stopProgress = startProgress(ctx, startedAt);
  try {
    const result = await ctx.mcpReq.elicitInput(
      { mode: 'form', message: request.message, requestedSchema: request.requestedSchema as never },
      { timeout: request.timeoutMs, signal: ctx.mcpReq.signal },
    );
    const latencyMs = Date.now() - startedAt;
    if (result.action === 'accept') return accepted(request.requestedSchema, result.content, latencyMs);
    return { action: result.action, latencyMs };
  } catch (error) {
    const latencyMs = Date.now() - startedAt;
    const timedOut = error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout;
    const message = timedOut ? `no answer within ${Math.round(request.timeoutMs / 1000)} s` : String((error as Error).message ?? error);
    // The SDK checks accepted content itself on this era: the dialog worked, its answer did not fit the schema.
    const invalid = error instanceof ProtocolError && error.code === ProtocolErrorCode.InvalidParams && message.includes('does not match requested schema');
    return { action: 'error', reason: timedOut ? 'timed_out' : invalid ? 'invalid_content' : 'threw', error: clipReason(message), latencyMs };
  } finally {
    stopProgress();
  }
}

async function elicitRoundTrip(ctx: ServerContext, session: Session, request: ElicitRequest): Promise<ElicitStep> {
  const state = ctx.mcpReq.requestState<RoundState>();
  const view = inputResponse(ctx.mcpReq.inputResponses, INPUT_KEY);
  if (state === undefined || state.tool !== request.tool) {
    const round: RoundState = { tool: request.tool, startedAt: Date.now(), timeoutMs: request.timeoutMs };
    return {
      done: false,
      result: inputRequired({
        inputRequests: { [INPUT_KEY]: inputRequired.elicit({ message: request.message, requestedSchema: request.requestedSchema as never }) },
        requestState: await session.stateCodec.mint(round),
      }),
    };
  }
  const latencyMs = Date.now() - state.startedAt;
  if (view.kind !== 'elicit') {
    // The 2026 analogue of a thrown elicitation: the host came back without an answer to our form.
    return { done: true, outcome: { action: 'error', reason: 'threw', error: 'the host retried the call without answering the form', latencyMs } };
  }
  if (latencyMs > state.timeoutMs) {
    return { done: true, outcome: { action: 'error', reason: 'timed_out', error: `no answer within ${Math.round(state.timeoutMs / 1000)} s`, latencyMs } };
  }
  if (view.action === 'accept') return { done: true, outcome: accepted(request.requestedSchema, view.content, latencyMs) };
  return { done: true, outcome: { action: view.action, latencyMs } };
}

/**
 * Asks the host for one form, written once for both eras: a pushed `elicitation/create` with an explicit timeout,
 * progress and cancellation on 2025 connections; an `input_required` round trip on 2026-07-28 ones.
 */
export async function elicitFromHost(ctx: ServerContext, session: Session, request: ElicitRequest): Promise<ElicitStep> {
  if (!hostAdvertisesForm(ctx, session)) {
    return { done: true, outcome: { action: 'error', reason: 'not_advertised', error: 'client did not advertise elicitation', latencyMs: 0 } };
  }
  if (session.era === '2026-07-28') return elicitRoundTrip(ctx, session, request);
  return { done: true, outcome: await elicitPushed(ctx, request) };
}


import { randomBytes } from 'node:crypto';
import type { CallToolResult, InputRequiredResult, ServerContext } from '@modelcontextprotocol/server';
import { AUTOCANCEL_THRESHOLD_MS } from '../../shared/doctor-verdict.js';
import type { Ask, AskResult, Via } from '../../shared/ask-input.js';
import * as z from 'zod';
import { AnsweredViaSchema, AskResultSchema, WAIT } from '../../shared/ask-input.js';
import { requestSizeIssues } from '../../shared/approval-input.js';
import { clamp } from '../../shared/limits.js';
import type { ElicitOutcome, ElicitRequest } from './host-elicitation.js';
import { elicitFromHost, hostAdvertisesForm, startProgress } from './host-elicitation.js';
import type { Session } from './session.js';
import { hostView } from './session.js';
import { withAppKey } from './app/app-result.js';
import { invalidArguments, structured } from './tool-result.js';
import { approvalError } from './tools/approval-answers.js';

export type Route = { via: 'host' | 'extension'; why: string };

/** The result of elicit_form and elicit_selection: the seed's `action` and answer, plus `pending` and `via` (docs/tools.md). */
export function askOutputSchema<Answer extends z.ZodRawShape>(answer: Answer) {
  return z.looseObject({
    action: z.enum(['accept', 'decline', 'cancel', 'error', 'pending']),
    ...answer,
    error: z.string().optional(),
    via: AnsweredViaSchema.optional(),
  });
}

/**
 * Where an `auto` ask goes now: the host's dialog while the host advertises form elicitation and nothing in this
 * session has shown it broken; the extension otherwise.
 */
export function autoRoute(ctx: ServerContext, session: Session): Route {
  if (!hostAdvertisesForm(ctx, session)) return { via: 'extension', why: 'the host did not advertise form elicitation, so its dialog cannot show it' };
  if (session.dialog.broken) return { via: 'extension', why: `the host's dialog was shown broken in this session: ${session.dialog.broken}` };
  return { via: 'host', why: "the host advertises form elicitation and nothing in this session has shown its dialog broken" };
}

/** Remembered for the rest of the session: later `auto` asks go to the extension. */
export function markDialogBroken(session: Session, why: string): void {
  session.dialog.broken ??= why;
}

/** A "no" faster than a person could read the question never came from one: the host answered for them. */
function fastNo(outcome: ElicitOutcome): boolean {
  return (outcome.action === 'decline' || outcome.action === 'cancel') && outcome.latencyMs < AUTOCANCEL_THRESHOLD_MS;
}

export interface AskSpec {
  via: Via;
  /** The dialog to show when the ask goes to the host. */
  host: ElicitRequest;
  /** The seed shape from the host's answer (the caller adds nothing: `via` is added here). */
  fromHost(outcome: ElicitOutcome): Record<string, unknown>;
  /** The request the person answers in the extension. */
  ask: Ask;
  /** The seed shape from the extension's answer (already carries `via`). */
  fromExtension(result: AskResult): Record<string, unknown>;
  /** The seed shape of an ask nobody answered (expired or withdrawn): the host's "cancel". */
  unanswered: Record<string, unknown>;
  /** The fields that stand for "no answer yet" in this ask's shape, e.g. `{ confirmed: null }`. */
  noAnswerYet: Record<string, unknown>;
  waitSeconds?: number;
}

/**
 * Runs an ask where it can reach the person. `host`: the host's dialog (both eras). `extension`: a durable request the
 * person answers in the extension. `auto`: the host unless it is known not to work, and the extension when the host
 * answers "no" faster than a person could (the same call goes on there, and the session remembers).
 */
export async function runAsk(ctx: ServerContext, session: Session, spec: AskSpec): Promise<CallToolResult | InputRequiredResult> {
  // The cap every request has, checked before any route: the hub would refuse it too, but only once it got there.
  const tooLarge = requestSizeIssues(spec.ask);
  if (tooLarge.length > 0) return invalidArguments(tooLarge, 'Make the named field smaller and call again; nothing was shown to the person.');
  const route: Route = spec.via === 'auto' ? autoRoute(ctx, session) : { via: spec.via, why: `via: "${spec.via}" was asked for` };
  if (route.via === 'host') {
    const step = await elicitFromHost(ctx, session, spec.host);
    if (!step.done) return step.result;
    const outcome = step.outcome;
    const auto = spec.via === 'auto';
    if (auto && fastNo(outcome)) {
      markDialogBroken(session, `an ask was answered "${outcome.action}" in ${outcome.latencyMs} ms, faster than a person can (< ${AUTOCANCEL_THRESHOLD_MS} ms)`);
    } else if (auto && outcome.action === 'error' && outcome.reason === 'threw') {
      markDialogBroken(session, `the host's dialog failed: ${outcome.error}`);
    } else {
      if (auto && outcome.action === 'error' && outcome.reason === 'timed_out') markDialogBroken(session, 'an ask got no answer before its timeout');
      return structured({ ...spec.fromHost(outcome), via: 'host' });
    }
  }
  return askInExtension(ctx, session, spec);
}

/** How to reach the person when no extension is connected: what the hub said (a pairing code), or how to start one. */
const CONNECT_ONE =
  'No Elicitly browser extension is connected, so nobody sees this question yet. Ask the person to open the Elicitly ' +
  'extension in their browser (it connects to the hub on this computer by itself; the first time it needs the pairing ' +
  'code from `npx elicitly-companion pair`). The question waits until it expires; continue with elicit_await and elicit_result.';

async function askInExtension(ctx: ServerContext, session: Session, spec: AskSpec): Promise<CallToolResult> {
  // The ask's own timeout clamp is the seed's 60 s minimum; ELICITLY_MIN_TIMEOUT_SECONDS may lower it (tests, demos).
  const timeoutSeconds = clamp(spec.ask.timeoutSeconds, 3600, session.minTimeoutSeconds, 86_400);
  const info = hostView(ctx, session).clientInfo;
  const client = typeof info === 'object' && info !== null && 'name' in info && typeof info.name === 'string' ? info.name.slice(0, 100) : null;
  const created = await session.approvals.call('create', {
    id: `el_${randomBytes(12).toString('base64url')}`,
    request: { ...spec.ask, timeoutSeconds },
    renderedTemplate: null,
    timeoutMs: Math.round(timeoutSeconds * 1000),
    requester: { client, pid: process.pid },
    // The hub enforces this: without the app here no review can be shown, so none may decide.
    surfaces: session.app ? ['extension', 'app'] : ['extension'],
  });
  if (!created.ok) return approvalError(created.error, session.retentionDays);
  const { elicitationId, expiresAt, reviewer } = created.value;
  const pending = (next: string) =>
    withAppKey(structured({ ...spec.noAnswerYet, action: 'pending', elicitationId, expiresAt, reviewer, next, via: 'extension' }), session, elicitationId);
  // Nobody can answer now: say so at once rather than hold the call for nothing.
  if (!reviewer.connected) return pending(created.value.next ?? CONNECT_ONE);

  const waitMs = clamp(spec.waitSeconds, WAIT.fallback, WAIT.min, WAIT.max) * 1000;
  const stopProgress = startProgress(ctx, Date.now(), 'the person, in the Elicitly extension');
  try {
    const waited = await session.approvals.call('await', { id: elicitationId, waitMs }, ctx.mcpReq.signal);
    if (!waited.ok) return approvalError(waited.error, session.retentionDays);
    const { status } = waited.value;
    if (status === 'pending') {
      return pending(
        `The person has not answered yet in the Elicitly extension. Call elicit_await with elicitationId "${elicitationId}" to wait ` +
          'for the answer, then elicit_result for it (same shape as this tool returns).',
      );
    }
    if (status === 'expired' || status === 'canceled') return structured({ ...spec.unanswered, via: 'extension' });
    const result = await session.approvals.call('result', { id: elicitationId });
    if (!result.ok) return approvalError(result.error, session.retentionDays);
    const answer = AskResultSchema.safeParse(result.value);
    if (!answer.success) return approvalError({ code: 'unavailable', message: 'the hub answered this ask with a result of another kind' }, session.retentionDays);
    return structured(spec.fromExtension(answer.data));
  } finally {
    stopProgress();
    // The host cancelled the call before the agent saw the elicitationId: nobody could ever read this answer, so the
    // person is not left answering it.
    if (ctx.mcpReq.signal.aborted) await session.approvals.call('cancel', { id: elicitationId });
  }
}

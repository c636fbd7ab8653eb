import { DEFAULT_AUTOMATIC_NO_MS } from '../config.js';
import type { CallToolResult, InputRequiredResult, ServerContext } from '@modelcontextprotocol/server';
import type { Ask, Via } from '../../shared/ask-input.js';
import { AskResultSchema, WAIT } from '../../shared/ask-input.js';
import { requestSizeIssues } from '../../shared/approval-input.js';
import { clamp, clipReason } from '../../shared/limits.js';
import type { ElicitOutcome, ElicitRequest } from './host-elicitation.js';
import { elicitFromHost, hostAdvertisesForm, startProgress } from './host-elicitation.js';
import type { Session } from './session.js';
import { hostName, hostView } from './session.js';
import { createDurableRequest } from '../durable-request.js';
import { withAppKey } from './app/app-result.js';
import type { KnownHost } from './known-hosts.js';
import { knownHostWhy, matchKnownHost } from './known-hosts.js';
import { structured, toolError } from './tool-result.js';
import { approvalError } from './tools/approval-answers.js';

/** `knownHost`: the row of the table of known hosts that sent this route to the extension. */
export type Route = { via: 'host' | 'extension'; why: string; knownHost?: Pick<KnownHost, 'id' | 'evidence'> };

/**
 * Where an `auto` ask goes now: the host's dialog while the host advertises form elicitation, nothing in this session
 * has shown it broken and the table of known hosts names no behaviour of it; the extension otherwise.
 */
export function autoRoute(ctx: ServerContext, session: Session): Route {
  if (!hostAdvertisesForm(ctx, session)) return { via: 'extension', why: 'the host did not advertise form elicitation, so its dialog cannot show it' };
  if (session.dialog.broken) return { via: 'extension', why: `the host's dialog was shown broken in this session: ${session.dialog.broken}` };
  const host = hostView(ctx, session);
  const known = matchKnownHost({ clientInfo: host.clientInfo, capabilities: host.capabilities, era: session.era, requestMeta: ctx.mcpReq._meta });
  if (known) return { via: 'extension', why: knownHostWhy(known), knownHost: { id: known.id, evidence: known.evidence } };
  return { via: 'host', why: `the host advertises form elicitation and nothing in this session has shown its dialog broken (a "no" under ${session.automaticNoMs} ms would)` };
}

/** Remembered for the rest of the session: later `auto` asks go to the extension. */
export function markDialogBroken(session: Session, why: string): void {
  session.dialog.broken ??= why;
}

/**
 * A "no" this fast never came from a person: hosts that answer by themselves were measured at 1-25 ms (Claude Code
 * print mode, Codex exec), and a person's quick click at 300 ms. Only such a "no" sends an ask on to the extension;
 * the doctor's verdicts keep seed 001's 2000 ms.
 */
export const REROUTE_THRESHOLD_MS = DEFAULT_AUTOMATIC_NO_MS;

export function automaticNo(outcome: Pick<ElicitOutcome, 'action' | 'latencyMs'>, thresholdMs = REROUTE_THRESHOLD_MS): boolean {
  return (outcome.action === 'decline' || outcome.action === 'cancel') && outcome.latencyMs < thresholdMs;
}

export interface AskSpec {
  via: Via;
  /** The dialog to show when the ask goes to the host. */
  host: ElicitRequest;
  /** The seed shape from the host's answer (the caller adds nothing: `via` is added here). */
  fromHost(outcome: ElicitOutcome): Record<string, unknown>;
  /** The request the person answers in the extension; its answer is already the seed shape, `via` included. */
  ask: Ask;
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
  if (tooLarge.length > 0) return toolError({ code: 'invalid_arguments', issues: tooLarge, hint: 'Make the named field smaller and call again; nothing was shown to the person.' });
  const route: Route = spec.via === 'auto' ? autoRoute(ctx, session) : { via: spec.via, why: `via: "${spec.via}" was asked for` };
  let why = route.why;
  if (route.via === 'host') {
    const step = await elicitFromHost(ctx, session, spec.host);
    if (!step.done) return step.result;
    const outcome = step.outcome;
    const auto = spec.via === 'auto';
    if (auto && automaticNo(outcome, session.automaticNoMs)) {
      const fast = `answered "${outcome.action}" in ${outcome.latencyMs} ms, faster than a person can (< ${session.automaticNoMs} ms)`;
      why = `the host ${fast}`;
      markDialogBroken(session, `an ask was ${fast}`);
    } else if (auto && outcome.action === 'error' && outcome.reason === 'threw') {
      why = `the host's dialog failed: ${outcome.error}`;
      markDialogBroken(session, why);
    } else {
      if (auto && outcome.action === 'error' && outcome.reason === 'timed_out') markDialogBroken(session, 'an ask got no answer before its timeout');
      return structured({ ...spec.fromHost(outcome), via: 'host' });
    }
  }
  if (spec.via === 'auto' && !session.app && (await nothingPaired(session))) return nobodyCanAnswer(spec, why);
  return askInExtension(ctx, session, spec);
}

/** What to do when nobody can answer: pair an extension. Never the code: it is for the person, from their terminal. */
const PAIR_FIRST =
  'Ask the person to install the Elicitly browser extension, run `npx elicitly-companion pair` in a terminal on this ' +
  'computer and enter the code it prints in the extension (Settings, "Pairing code", "Pair"); then ask again. Nothing ' +
  'was filed: this question is not waiting anywhere.';

/**
 * Whether no extension has ever been paired with this computer, as the hub reads its state dir. Asking joins (or
 * starts) the hub, which the extension needs to pair at all. Unknown (a hub of an earlier build, a paired-extensions
 * file that cannot be read) is not "nothing": the ask is filed as before.
 */
async function nothingPaired(session: Session): Promise<boolean> {
  const answer = await session.approvals.call('paired', {});
  return answer.ok && answer.value.paired === 0;
}

/**
 * Seed 000's error shape (the host-error shape of each ask) for an `auto` ask nobody could answer: the host's dialog
 * cannot show it, no chat app renders it and no extension was ever paired. No request is filed: nothing could decide it.
 */
function nobodyCanAnswer(spec: AskSpec, why: string): CallToolResult {
  const error = clipReason(`nobody can answer this question here: ${why}, and no Elicitly browser extension is paired with this computer`);
  return structured({ ...spec.fromHost({ action: 'error', reason: 'not_advertised', error, latencyMs: 0 }), next: PAIR_FIRST });
}

/** How to reach the person when no extension is connected: what the hub said (a pairing code), or how to start one. */
const CONNECT_ONE =
  'No Elicitly browser extension is connected, so nobody sees this question yet. Ask the person to open the Elicitly ' +
  'extension in their browser (it connects to the hub on this computer by itself; the first time it needs the pairing ' +
  'code from `npx elicitly-companion pair`). The question waits until it expires; continue with elicit_await and elicit_result.';

/** A client that renders MCP Apps shows the question in the chat, under this result: someone can see it. */
const IN_THE_CHAT =
  'The question is shown in the chat, in the Elicitly review under this result: the person can answer it there (and in ' +
  'the Elicitly browser extension, once one is connected). Continue with elicit_await and elicit_result.';

/** The decided ask's answer, read (and consumed) from the hub. */
async function answerOf(session: Session, elicitationId: string): Promise<CallToolResult> {
  const result = await session.approvals.call('result', { id: elicitationId });
  if (!result.ok) return approvalError(result.error, session.retentionDays);
  const answer = AskResultSchema.safeParse(result.value);
  if (!answer.success) return approvalError({ code: 'unavailable', message: 'the hub answered this ask with a result of another kind' }, session.retentionDays);
  return structured(answer.data);
}

async function askInExtension(ctx: ServerContext, session: Session, spec: AskSpec): Promise<CallToolResult> {
  // The ask's own timeout clamp is the seed's 60 s minimum; ELICITLY_MIN_TIMEOUT_SECONDS may lower it (tests, demos).
  const timeoutSeconds = clamp(spec.ask.timeoutSeconds, 3600, session.minTimeoutSeconds, 86_400);
  const created = await createDurableRequest(session.approvals, {
    request: { ...spec.ask, timeoutSeconds },
    client: hostName(ctx, session),
    // The hub enforces this: without the app here no review can be shown, so none may decide.
    surfaces: session.app ? ['extension', 'app'] : ['extension'],
  });
  if (!created.ok) return approvalError(created.error, session.retentionDays);
  const { elicitationId, expiresAt, reviewer } = created.value;
  // One of the person's own rules answered it at creation ("Always yes to this"): there is nothing to wait for.
  if (created.value.status !== 'pending') return answerOf(session, elicitationId);
  const pending = (next: string) =>
    withAppKey(structured({ ...spec.noAnswerYet, action: 'pending', elicitationId, expiresAt, reviewer, next, via: 'extension' }), session, elicitationId);
  // The review inside the chat is drawn only once this call returns: hand it over at once, rather than hold it hidden.
  if (session.app && !reviewer.connected) return pending(IN_THE_CHAT);
  // Nobody can answer now: say so at once rather than hold the call for nothing.
  if (!reviewer.connected) return pending(created.value.next ?? CONNECT_ONE);

  const waitMs = clamp(spec.waitSeconds, WAIT.fallback, WAIT.min, WAIT.max) * 1000;
  const stopProgress = startProgress(ctx, Date.now(), 'the person, in the Elicitly extension');
  try {
    const waited = await session.approvals.call('await', { id: elicitationId, waitMs }, ctx.mcpReq.signal);
    if (!waited.ok) return approvalError(waited.error, session.retentionDays);
    const { status } = waited.value;
    if (status === 'pending') {
      const where = session.app ? 'in the Elicitly review shown in the chat or in the Elicitly extension' : 'in the Elicitly extension';
      return pending(
        `The person has not answered yet ${where}. Call elicit_await with elicitationId "${elicitationId}" to wait ` +
          'for the answer, then elicit_result for it (same shape as this tool returns).',
      );
    }
    if (status === 'expired' || status === 'canceled') return structured({ ...spec.unanswered, via: 'extension' });
    return await answerOf(session, elicitationId);
  } finally {
    stopProgress();
    // The host cancelled the call before the agent saw the elicitationId: nobody could ever read this answer, so the
    // person is not left answering it.
    if (ctx.mcpReq.signal.aborted) await session.approvals.call('cancel', { id: elicitationId });
  }
}

import type { HostConnection } from './host-connection.js';
import type { CallToolResult } from './host-messages.js';
import { AppDecideInputSchema, AppDecideResultSchema, AppErrorSchema, type AppDecideInput, type AppError } from '../shared/app-surface.js';
import type { DecidedVia } from '../shared/lifecycle.js';
import { DecisionRefusalSchema, type DecisionRefusal } from '../shared/wire-fields.js';
import type { ReviewerClient, DecideReply, Decision } from '../kit/messages.js';

export type { CallToolResult };

/** What the adapter needs of the host connection: a `HostConnection`, or a fake in tests. */
export type ToolCaller = Pick<HostConnection, 'callServerTool'>;

/** Who decided and when, as the app-only tools say it. */
export interface Decided { via: DecidedVia; at: number }

/** Why this review can no longer decide: its decision was taken, or the request ended without it. */
export interface Ended {
  /** The server took this review's decision. */
  decidedHere: boolean;
  /** Who decided first and when, when the server said (a decision refused as `already_decided`). */
  decided?: Decided;
}

export interface AppClientHooks {
  /** Reads the request again: the extension client's `reconnect()` (re-fetch what is shown). */
  refresh(): Promise<void>;
  /** The answer ended this review's part: read the request again to show how it ended. */
  onEnded?(ended: Ended): void;
}

/** Refusals after which the request cannot be decided by anyone; `invalid` is not one (correct and send again). */
const FINAL_REFUSALS: ReadonlySet<DecisionRefusal> = new Set(['already_decided', 'expired', 'withdrawn', 'not_found']);

/** A fresh idempotency key: a UUID, as the extension's background mints them (opaque origins may lack randomUUID). */
export function newIdempotencyKey(): string {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = ((b[6] ?? 0) & 0x0f) | 0x40;
  b[8] = ((b[8] ?? 0) & 0x3f) | 0x80;
  const hex = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The text items of a result, for an error the SDK raised before our tool ran (input validation, unknown tool). */
export function resultText(result: CallToolResult): string {
  return result.content.flatMap((c) => (c.type === 'text' && c.text !== undefined ? [c.text] : [])).join('\n').trim();
}

const KEY_PROBLEM: Record<'token_missing' | 'token_invalid' | 'token_spent', string> = {
  token_missing: 'The chat did not pass this review\'s key, so it cannot decide here. Decide this in the Elicitly browser extension.',
  token_invalid: 'The server did not accept this review\'s key. Decide this in the Elicitly browser extension.',
  token_spent: 'This review\'s key was already used by a decision made here.',
};

/** A refusal of the app-only tools in words, with the server's code and message (which name the field). */
export function appErrorText({ error }: AppError): string {
  const lead = error.code in KEY_PROBLEM ? KEY_PROBLEM[error.code as keyof typeof KEY_PROBLEM] : 'The server refused the decision.';
  return `${lead} (${error.code}: ${error.message})`;
}

/**
 * The extension's `ReviewerClient` over the MCP App bridge: a decision goes to `elicit_app_decide` with the
 * review's single-use key, the same path through the engine as the extension's. Each decision gets a fresh idempotency
 * key; only when the host did not answer (a transport error: the server may or may not have taken it) does a second
 * attempt at the same decision reuse the key, so the server can recognise the retry. Any answer ends the key's use.
 */
export function createAppClient(app: ToolCaller, token: string, hooks: AppClientHooks): ReviewerClient {
  let unanswered: { decision: string; key: string } | null = null;
  return {
    async decide(decision: Decision): Promise<DecideReply> {
      const fingerprint = JSON.stringify(decision);
      const key = unanswered?.decision === fingerprint ? unanswered.key : newIdempotencyKey();
      const input: AppDecideInput = { ...decision, idempotencyKey: key, token };
      const checked = AppDecideInputSchema.safeParse(input);
      if (!checked.success) return { state: 'error', message: `This decision cannot be sent: ${checked.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}` };
      let result: CallToolResult;
      try {
        result = await app.callServerTool({ name: 'elicit_app_decide', arguments: checked.data });
      } catch (err) {
        unanswered = { decision: fingerprint, key };
        const why = err instanceof Error ? err.message : String(err);
        return { state: 'error', message: `The chat did not pass the decision on (${why}). It may not have been recorded: submit again to retry it.` };
      }
      unanswered = null;
      if (result.isError) {
        const refusal = AppErrorSchema.safeParse(result.structuredContent);
        if (!refusal.success) return { state: 'error', message: resultText(result) || 'The server refused the decision.' };
        const { error, issues, decided } = refusal.data;
        const reason = DecisionRefusalSchema.safeParse(error.code);
        // Refused by the engine, as the extension's decisions are: the review says why (and marks an invalid field).
        if (reason.success) {
          if (FINAL_REFUSALS.has(reason.data)) hooks.onEnded?.({ decidedHere: false, ...(decided ? { decided } : {}) });
          return { state: 'answered', ok: false, reason: reason.data, ...(issues ? { issues } : {}) };
        }
        if (error.code === 'token_spent') hooks.onEnded?.({ decidedHere: false });
        return { state: 'error', message: appErrorText(refusal.data) };
      }
      const answer = AppDecideResultSchema.safeParse(result.structuredContent);
      if (!answer.success) return { state: 'error', message: 'The server\'s answer to the decision could not be read.' };
      hooks.onEnded?.({ decidedHere: true });
      return { state: 'answered', ok: true, status: answer.data.status };
    },
    reconnect: () => hooks.refresh(),
  };
}

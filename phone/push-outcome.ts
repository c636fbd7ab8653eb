import type { PushAction, PushPayload } from '../shared/push-notice.js';
import type { DecisionRefusal } from '../shared/wire-fields.js';
import type { DecideOnceResult } from './decide-once.js';

/**
 * What the notification says once an action's decision has its answer. It replaces the request's notification (the same
 * tag), so the lock screen never keeps offering a decision that is made, or says "sent" for one that is not.
 */
export interface OutcomeNotice {
  title: string;
  body: string;
  /** Offer the actions again: nothing was decided and the question still stands (the hub could not be reached). */
  retry: boolean;
}

const REFUSED: Record<DecisionRefusal, string> = {
  already_decided: 'it was already decided elsewhere',
  expired: 'it has expired',
  withdrawn: 'the agent withdrew it',
  not_found: 'the hub no longer has it',
  shown_mismatch: 'it changed after this notification: open it to review it again',
  passkey_required: 'it needs your passkey: open it to decide',
  passkey_invalid: 'it needs your passkey: open it to decide',
  invalid: 'the hub refused it as invalid',
};

/** The question as the notification showed it, its first line alone. */
function question(payload: PushPayload): string {
  return payload.body.split('\n')[0] ?? '';
}

export function outcomeNotice(payload: PushPayload, action: PushAction, result: DecideOnceResult): OutcomeNotice {
  const body = question(payload);
  if (result.state === 'answered') {
    if (result.answer.ok) return { title: `${action.title}: sent and recorded`, body, retry: false };
    const why = result.answer.reason ? REFUSED[result.answer.reason] : (result.answer.issues?.[0]?.message ?? 'the hub refused it');
    return { title: `Not recorded: ${why}`, body, retry: false };
  }
  if (result.state === 'no_answer') return { title: 'No answer from the hub: open the review to see whether it was recorded', body, retry: false };
  if (result.state === 'unproven') return { title: 'Not sent: this phone is not paired with the hub any more', body, retry: false };
  if (result.state === 'refused') return { title: `Not recorded: ${result.message}`, body, retry: false };
  return { title: 'Not sent: the hub could not be reached. Try again, or open the review', body: payload.body, retry: true };
}

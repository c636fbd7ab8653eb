import type { DecisionAnswer } from '../../shared/wire-fields.js';
import type { DecideReply } from '../messages.js';

/** The hub's answer to a decision as the review shows it, whichever socket carried it (the extension's or the phone's). */
export function answeredReply(answer: DecisionAnswer): DecideReply {
  return {
    state: 'answered',
    ok: answer.ok,
    ...(answer.status ? { status: answer.status } : {}),
    ...(answer.reason ? { reason: answer.reason } : {}),
    ...(answer.issues ? { issues: answer.issues } : {}),
  };
}

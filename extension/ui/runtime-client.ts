import type { ReviewerClient, DecideReply, PasskeyReply, RuleReply } from '../../kit/messages.js';
import type { UiMessage } from '../messages.js';
import { loadChecks } from './page-reads.js';

const NO_ANSWER: DecideReply = { state: 'error', message: 'The extension background did not answer.' };
const NO_RULE_ANSWER: RuleReply = { state: 'error', message: 'The extension background did not answer.' };
const NO_PASSKEY_ANSWER: PasskeyReply = { state: 'error', message: 'The extension background did not answer.' };

/**
 * The pages' side of runtime messaging. The answer is validated like any other boundary: a worker that was restarting
 * (no listener yet) or answered something else is reported as such, never trusted.
 */
export function createRuntimeClient(send: (message: UiMessage) => Promise<unknown>): ReviewerClient {
  const ruleChange = async (message: UiMessage): Promise<RuleReply> => {
    try {
      const answer = await send(message);
      const parsed = (await loadChecks()).RuleReplySchema.safeParse(answer);
      return parsed.success ? parsed.data : NO_RULE_ANSWER;
    } catch {
      return NO_RULE_ANSWER;
    }
  };
  return {
    saveRule: (id, rule, approval) => ruleChange({ type: 'rule.save', ...(id === undefined ? {} : { id }), rule, ...(approval ? { approval } : {}) }),
    deleteRule: (id) => ruleChange({ type: 'rule.delete', id }),
    shown(elicitationId, shownHash) {
      // Best effort: a showing the hub does not hear of is only missing from its ledger.
      send({ type: 'shown', elicitationId, shownHash }).catch(() => undefined);
    },
    async passkey(method, params) {
      try {
        const parsed = (await loadChecks()).PasskeyReplySchema.safeParse(await send({ type: 'passkey', method, params }));
        return parsed.success ? parsed.data : NO_PASSKEY_ANSWER;
      } catch {
        return NO_PASSKEY_ANSWER;
      }
    },
    async decide(request) {
      let answer: unknown;
      try {
        answer = await send({ type: 'decide', ...request });
      } catch {
        return NO_ANSWER;
      }
      const parsed = (await loadChecks()).DecideReplySchema.safeParse(answer);
      return parsed.success ? parsed.data : NO_ANSWER;
    },
    async reconnect() {
      await send({ type: 'reconnect' });
    },
  };
}

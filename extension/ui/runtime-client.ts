import { DecideReplySchema, type BackgroundClient, type DecideReply, type UiMessage } from '../messages.js';

const NO_ANSWER: DecideReply = { state: 'error', message: 'The extension background did not answer.' };

/**
 * The pages' side of runtime messaging. The answer is validated like any other boundary: a worker that was restarting
 * (no listener yet) or answered something else is reported as such, never trusted.
 */
export function createRuntimeClient(send: (message: UiMessage) => Promise<unknown>): BackgroundClient {
  return {
    async decide(request) {
      let answer: unknown;
      try {
        answer = await send({ type: 'decide', ...request });
      } catch {
        return NO_ANSWER;
      }
      const parsed = DecideReplySchema.safeParse(answer);
      return parsed.success ? parsed.data : NO_ANSWER;
    },
    async reconnect() {
      await send({ type: 'reconnect' });
    },
  };
}

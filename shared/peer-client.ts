import { fail, parseResult, type Answer, type PeerMethod, type Params, type PeerNotice, type Result, type ServiceError } from './peer-calls.js';
import { firstIssue, type AnswerFrame, type CallFrame } from './wire-protocol.js';

/** The timer functions a client waits with: the platform's, or a test's manual clock. */
export interface CallTimers<H> {
  setTimeout(fn: () => void, ms: number): H;
  clearTimeout(handle: H): void;
}

interface CallClientOptions<H> {
  /** Sends a frame on the current socket; false when there is none to send it on. */
  send(frame: CallFrame | PeerNotice): boolean;
  timers: CallTimers<H>;
}

/**
 * Why a call got no answer from the hub: it was never sent (no socket), its time ran out, or its socket closed first.
 * It reads as an `unavailable` error to a caller that does not care which; one that does (was a decision maybe
 * recorded?) tells them apart.
 */
type Unanswered = { ok: false; error: ServiceError; unanswered: 'not_connected' | 'timeout' | 'closed' };
export type CallAnswer<T> = Answer<T> | Unanswered;

function unanswered(why: Unanswered['unanswered'], message: string): Unanswered {
  return { ...fail('unavailable', message), unanswered: why };
}

interface Waiting {
  settle(frame: AnswerFrame | null): void;
}

/**
 * The calling side of the peer call map (`peer-calls.ts`), written once for every peer: the relays, the extension's
 * background and the phone page. Every call is answered exactly once: by the hub's answer carrying its id (the result
 * checked against the method's schema), by its timeout, or by `closeAll` when the socket goes. An aborted call tells
 * the hub (`abort`), which answers it at once.
 */
export class CallClient<H> {
  private readonly waiting = new Map<string, Waiting>();
  private sequence = 0;

  constructor(private readonly options: CallClientOptions<H>) {}

  /** Calls still waiting for their answer. */
  get size(): number {
    return this.waiting.size;
  }

  call<M extends PeerMethod>(method: M, params: Params<M>, options: { timeoutMs: number; signal?: AbortSignal }): Promise<CallAnswer<Result<M>>> {
    const { send, timers } = this.options;
    const { timeoutMs, signal } = options;
    this.sequence += 1;
    const id = `c${this.sequence}`;
    return new Promise((resolve) => {
      const abort = () => send({ method: 'abort', params: { id } });
      const finish = (answer: CallAnswer<Result<M>>) => {
        timers.clearTimeout(timer);
        signal?.removeEventListener('abort', abort);
        this.waiting.delete(id);
        resolve(answer);
      };
      const timer = timers.setTimeout(() => finish(unanswered('timeout', `the hub did not answer ${method} within ${timeoutMs} ms`)), timeoutMs);
      this.waiting.set(id, {
        settle: (frame) => {
          if (frame === null) return finish(unanswered('closed', 'the connection to the hub closed before it answered'));
          if ('error' in frame) return finish({ ok: false, error: frame.error });
          const checked = parseResult(method, frame.result);
          finish(checked.success ? { ok: true, value: checked.data } : fail('unavailable', `the hub answered ${method} with an invalid value: ${firstIssue(checked.error)}`));
        },
      });
      if (!send({ id, method, params })) return finish(unanswered('not_connected', 'not connected to the hub'));
      signal?.addEventListener('abort', abort, { once: true });
      if (signal?.aborted) abort();
    });
  }

  /** Settles the call this answer is for; false when none waits for its id (late, after a timeout, or never made). */
  receive(frame: AnswerFrame): boolean {
    const waiting = frame.id === null ? undefined : this.waiting.get(frame.id);
    if (!waiting) return false;
    waiting.settle(frame);
    return true;
  }

  /** The socket is gone: every call still waiting is answered now, never left to its timeout. */
  closeAll(): void {
    for (const waiting of [...this.waiting.values()]) waiting.settle(null);
  }
}

import type { Answer, ApprovalMethod, ApprovalService, CallParams, CallResult, Created } from '../../shared/approval-calls.js';
import type { ApprovalEngine, EngineCreated, EngineMethod } from '../approvals/approval-engine.js';

/** What the hub knows of the people who can decide: its reviewers' sockets, and the keys paired with it. */
export interface Reviewers {
  /** Extensions and devices (a phone with the page open) connected now: both can decide. */
  connected(): number;
  /** When a reviewer last sent anything (ms since the epoch), or null when none has yet. */
  lastSeenAt(): number | null;
  /** Extensions and devices paired; null when their files cannot be read. Kept by the hub, so asking reads no file. */
  paired(): number | null;
}

type Handlers = { [M in ApprovalMethod]: (params: CallParams<M>, signal?: AbortSignal) => Promise<Answer<CallResult<M>>> };

/**
 * The approval service as the hub offers it to its own tools and to every relay: the engine's calls, with what only the
 * hub knows added (who can decide, and what an agent should tell the person when nobody can). The engine stays a
 * domain object that knows nothing of sockets or pairing.
 */
export class HubService implements ApprovalService {
  private readonly handlers: Handlers;

  constructor(engine: Pick<ApprovalEngine, 'call' | 'pendingCount'>, reviewers: Reviewers) {
    const pass =
      <M extends Exclude<EngineMethod, 'create'>>(method: M) =>
      (params: CallParams<M>, signal?: AbortSignal) =>
        engine.call(method, params, signal);
    this.handlers = {
      create: async (params, signal) => {
        const answer = await engine.call('create', params, signal);
        // Read after the engine answered: a pairing or a reviewer that came meanwhile is counted.
        return answer.ok ? { ok: true, value: withReviewers(answer.value, reviewers) } : answer;
      },
      status: pass('status'),
      await: pass('await'),
      result: pass('result'),
      cancel: pass('cancel'),
      view: pass('view'),
      appDecide: pass('appDecide'),
      rules: pass('rules'),
      ruleRemove: pass('ruleRemove'),
      paired: async () => ({ ok: true, value: { paired: reviewers.paired() } }),
      info: async () => ({
        ok: true,
        value: { pid: process.pid, extensionsConnected: reviewers.connected(), lastSeenAt: reviewers.lastSeenAt(), pending: engine.pendingCount() },
      }),
    };
  }

  call<M extends ApprovalMethod>(method: M, params: CallParams<M>, signal?: AbortSignal): Promise<Answer<CallResult<M>>> {
    const handler: Handlers[M] = this.handlers[method];
    return handler(params, signal);
  }
}

function withReviewers(created: EngineCreated, reviewers: Reviewers): Created {
  const { elicitationId, expiresAt, ...decided } = created;
  const next = pairingHint(reviewers.paired());
  return { elicitationId, expiresAt, reviewer: { connected: reviewers.connected() > 0 }, ...(next === undefined ? {} : { next }), ...decided };
}

/**
 * With no extension paired yet, what an agent's new request tells it to ask of the person. Never the code: the agent
 * may be exactly who must not pair (a sandboxed agent that paired a fake extension could approve its own requests),
 * so the code goes only to the person, from the `pair` command in their terminal.
 */
function pairingHint(paired: number | null): string | undefined {
  if (paired === null || paired > 0) return undefined;
  return (
    'No browser extension is paired with this computer yet, so nobody can see this request. Ask the person to install the ' +
    'Elicitly browser extension, run `npx elicitly-companion pair` in a terminal on this computer, and enter the code it ' +
    'prints in the extension\'s Settings under "Pairing code", then press "Pair". The code is for the person only: do not ' +
    'ask them for it. The request waits meanwhile.'
  );
}

import type { Answer, Caller, Grant, Params, PeerMethod, Result, ServiceError } from '../../shared/peer-calls.js';
import { PEER_CALLS, callerFor, fail, grantFor, isPeerMethod, parseParams } from '../../shared/peer-calls.js';
import { first, fromZod } from '../../shared/field-issues.js';
import type { CallFrame } from '../../shared/wire-protocol.js';

/**
 * Who a socket is, from the key it proved (and where it came from): the only source of what it may call. Nothing a
 * frame says changes it.
 */
export type Principal =
  | { role: 'unproven' }
  /** The install key: a process on this computer (an agent's server, a hook, a command), or the hub's own tools. */
  | { role: 'local' }
  /** A key exported for a relay on another machine, with what it was granted at export. */
  | { role: 'remote'; keyId: string; grants: readonly Grant[] }
  | { role: 'extension'; keyId: string; origin: string }
  | { role: 'device'; keyId: string; origin: string };

export const UNPROVEN: Principal = { role: 'unproven' };
export const LOCAL: Principal = { role: 'local' };

/**
 * The callers of the call map (`peer-calls.ts`) a principal acts as. A local relay also serves the review inside its
 * chat, and has checked that view's single-use key before it calls for it: it calls the app's methods as `app`.
 */
export function callersOf(principal: Principal): readonly Caller[] {
  return principal.role === 'local' ? ['local', 'app'] : [principal.role];
}

function describe(principal: Principal): string {
  switch (principal.role) {
    case 'unproven':
      return 'a socket that has not proved a key (send hello, then auth)';
    case 'local':
      return 'a relay on this computer';
    case 'remote':
      return `the relay key ${principal.keyId}`;
    case 'extension':
      return 'a browser extension';
    case 'device':
      return 'a phone';
  }
}

/** What every handler is told of its call. */
export interface CallContext {
  principal: Principal;
  /** The caller of the method's list this principal calls as (`callersOf`). */
  caller: Caller;
  signal?: AbortSignal;
}

/** The socket was closed instead of answering (a failed proof): the close code is the answer. */
export const ANSWERED = 'answered';
export type Outcome<M extends PeerMethod> = Answer<Result<M>> | typeof ANSWERED;
export type Handlers<C extends CallContext> = { [M in PeerMethod]: (params: Params<M>, context: C) => Promise<Outcome<M>> };

/**
 * The role × method table, checked in this one place for every call, from a socket or in-process: the method lists the
 * caller, and a remote key holds the grant these params need.
 */
export function permit(principal: Principal, method: PeerMethod, params: unknown): { ok: true; caller: Caller } | { ok: false; error: ServiceError } {
  const caller = callerFor(method, callersOf(principal));
  if (caller === null) return { ok: false, error: { code: 'forbidden', message: `${method} is not for ${describe(principal)}` } };
  if (principal.role === 'remote') {
    const grant = grantFor(method, params);
    if (grant !== null && !principal.grants.includes(grant)) {
      return { ok: false, error: { code: 'forbidden', message: `${method} of this request needs a relay key exported with --allow ${grant}; ${principal.keyId} was not` } };
    }
  }
  return { ok: true, caller };
}

/**
 * The hub's one dispatcher. The engine and the handshake answer in domain terms; this checks the table, validates the
 * params against the method's schema, and runs the handler, so no method is reachable any other way.
 */
export class PeerDispatcher<C extends CallContext> {
  constructor(private readonly handlers: Handlers<C>) {}

  /** A call frame from a socket: one answer (or a close), whatever it holds. */
  async dispatch(frame: CallFrame, principal: Principal, context: (caller: Caller) => C): Promise<Answer<unknown> | typeof ANSWERED> {
    const { method } = frame;
    if (!isPeerMethod(method)) return fail('unknown_method', `no method ${JSON.stringify(method.slice(0, 50))}`);
    const allowed = permit(principal, method, frame.params);
    if (!allowed.ok) return { ok: false, error: allowed.error };
    const params = parseParams(method, frame.params);
    if (!params.success) {
      // Paths are the params' own (`values.name`), as the engine's refusals name them, so a review puts each by its field.
      const issues = fromZod(PEER_CALLS[method].params, params.error.issues, frame.params, { whole: 'params' });
      return { ok: false, error: { code: 'invalid', message: first(issues, 'params: invalid'), issues } };
    }
    return this.run(method, params.data, context(allowed.caller));
  }

  /** A call of the hub's own tools, in-process: the same table, params already typed. */
  async call<M extends PeerMethod>(method: M, params: Params<M>, principal: Principal, context: (caller: Caller) => C): Promise<Answer<Result<M>>> {
    const allowed = permit(principal, method, params);
    if (!allowed.ok) return { ok: false, error: allowed.error };
    const outcome = await this.run(method, params, context(allowed.caller));
    return outcome === ANSWERED ? fail('unavailable', `${method} closed the connection`) : outcome;
  }

  private run<M extends PeerMethod>(method: M, params: Params<M>, context: C): Promise<Outcome<M>> {
    const handler: Handlers<C>[M] = this.handlers[method];
    return handler(params, context);
  }
}

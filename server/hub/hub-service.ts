import type { Answer, Caller, Created, Params, PeerMethod, Result } from '../../shared/peer-calls.js';
import { fail } from '../../shared/peer-calls.js';
import type { DecidedVia } from '../../shared/lifecycle.js';
import type { RuleDraft } from '../../shared/rules.js';
import type { ApprovalEngine, DecidingReviewer, EngineCreated, Scope } from '../approvals/approval-engine.js';
import type { Asker, PasskeyRefusal } from '../passkeys/passkey-registry.js';
import type { CallContext } from './peer-dispatcher.js';
import { pushEndpointProblem, type PushSubscription } from '../../shared/push-notice.js';
import type { Directory } from '../directory.js';
import { vapidPublicKey } from '../remote/web-push.js';

/** What the hub knows of the people who can decide: its reviewers' sockets, and the keys paired with it. */
export interface Reviewers {
  /** Extensions and devices (a phone with the page open) connected now: both can decide. */
  connected(): number;
  /** When a reviewer last sent anything (ms since the epoch), or null when none has yet. */
  lastSeenAt(): number | null;
  /** Extensions and devices paired; null when their files cannot be read. Kept by the hub, so asking reads no file. */
  paired(): number | null;
  /** Of those, the phones (devices); null when unknown. */
  devices(): number | null;
  /** The reviewer a paired key belongs to (`pair --reviewer`), with their groups, if any. */
  reviewerOf(keyId: string): DecidingReviewer | undefined;
  /** A team's hub (`reviewer add` made reviewers): its advice speaks of the team's reviewers, not of one person's computer. */
  team(): boolean;
}

/** Devices' push subscriptions, kept with their pairing (`paired-devices.json`): gone when the device is removed. */
export interface DevicePush {
  info(keyId: string): Promise<Result<'push.info'>>;
  subscribe(keyId: string, subscription: PushSubscription | null): Promise<Result<'push.subscribe'>>;
}

/** The directory's push subscriptions and VAPID key, with the one rule on where the hub posts. */
export function devicePush(state: Pick<Directory, 'pairedDevices' | 'setDevicePush' | 'vapidKeys'>, services: readonly string[]): DevicePush {
  return {
    info: async (keyId) => ({ publicKey: vapidPublicKey(await state.vapidKeys()), subscribed: state.pairedDevices().some((d) => d.keyId === keyId && d.push !== undefined) }),
    subscribe: async (keyId, subscription) => {
      const problem = subscription === null ? null : pushEndpointProblem(subscription.endpoint, services);
      if (problem !== null) return { subscribed: false, issues: [{ path: 'subscription.endpoint', rule: 'push_service', message: `subscription.endpoint: ${problem}` }] };
      if (!(await state.setDevicePush(keyId, subscription))) return { subscribed: false, issues: [{ path: '(device)', rule: 'not_paired', message: 'this device is no longer paired' }] };
      return { subscribed: subscription !== null };
    },
  };
}

/** What a service handler is told of its call besides the caller. */
export interface ServiceContext extends CallContext {
  /** Ties a request filed with `bound` to the connection that filed it; absent in-process (the hub's own tools). */
  bind?(elicitationId: string): void;
}

type ServiceMethod = Exclude<PeerMethod, 'hello' | 'auth'>;
export type ServiceHandlers = { [M in ServiceMethod]: (params: Params<M>, context: ServiceContext) => Promise<Answer<Result<M>>> };

/** The surface a decision is recorded as made on: the caller's, never a field of the call. */
const SURFACE: Partial<Record<Caller, Exclude<DecidedVia, 'rule'>>> = { extension: 'extension', device: 'phone', app: 'app' };

/** Whose requests a caller sees: every one on this computer, its own from another machine. */
function scopeOf(context: CallContext): Scope {
  return context.principal.role === 'remote' ? context.principal.keyId : null;
}

type EngineView = Pick<ApprovalEngine, 'call' | 'pendingCount' | 'decide' | 'saveRule' | 'deleteRule' | 'passkeys' | 'ruleList'>;

/** The origin a reviewer's socket proved at the upgrade; null for the terminal and the hub's own tools. */
function originOf(context: CallContext): string | null {
  const { principal } = context;
  return principal.role === 'extension' || principal.role === 'device' ? principal.origin : null;
}

function askerOf(context: CallContext): Asker {
  const origin = originOf(context);
  return origin === null ? { kind: 'terminal' } : { kind: 'surface', origin };
}

/** A save that only ends an existing rule now (its expiry set to the past or present): the Rules view's "End now". */
function endsRule(params: { id?: string; rule: RuleDraft }, engine: EngineView): boolean {
  if (params.id === undefined || params.rule.expiresAt === null || params.rule.expiresAt > Date.now()) return false;
  const existing = engine.ruleList().find((r) => r.id === params.id);
  return existing !== undefined && existing.effect === params.rule.effect && JSON.stringify(existing.match) === JSON.stringify(params.rule.match);
}

const UNRECORDED_PASSKEY = 'the hub could not record this change; try again in a moment';

/** A change to the passkeys as the call answers it: a refusal names the field; one the hub could not write is `unavailable`. */
async function passkeyChange(run: () => Promise<{ ok: true; id?: string; removed?: boolean } | PasskeyRefusal>): Promise<Answer<Result<'passkey.remove'>>> {
  let changed: Awaited<ReturnType<typeof run>>;
  try {
    changed = await run();
  } catch {
    return fail('unavailable', UNRECORDED_PASSKEY);
  }
  if (changed.ok) return { ok: true, value: changed };
  if (changed.code === 'unavailable') return fail('unavailable', UNRECORDED_PASSKEY);
  return { ok: true, value: { ok: false, reason: changed.code, issues: changed.issues } };
}

/**
 * The hub's answers to every call but the handshake's: the engine's, with what only the hub knows added (who can
 * decide, and what an agent should tell the person when nobody can). The engine stays a domain object that knows
 * nothing of sockets, keys or pairing; the dispatcher has checked who may call what before any of these runs.
 */
export function serviceHandlers(engine: EngineView, reviewers: Reviewers, push: DevicePush): ServiceHandlers {
  return {
    create: async (params, context) => {
      const answer = await engine.call('create', params, scopeOf(context), context.signal);
      if (!answer.ok) return answer;
      if (params.bound && answer.value.status === 'pending') context.bind?.(answer.value.elicitationId);
      // Read after the engine answered: a pairing or a reviewer that came meanwhile is counted.
      return { ok: true, value: withReviewers(answer.value, reviewers) };
    },
    status: (params, context) => engine.call('status', params, scopeOf(context), context.signal),
    await: (params, context) => engine.call('await', params, scopeOf(context), context.signal),
    result: (params, context) => engine.call('result', params, scopeOf(context), context.signal),
    cancel: (params, context) => engine.call('cancel', params, scopeOf(context), context.signal),
    view: (params, context) => engine.call('view', params, scopeOf(context), context.signal),
    rules: (params, context) => engine.call('rules', params, scopeOf(context), context.signal),
    info: async (_params, context) => ({
      ok: true,
      value: { pid: process.pid, extensionsConnected: reviewers.connected(), lastSeenAt: reviewers.lastSeenAt(), pending: engine.pendingCount(scopeOf(context)) },
    }),
    paired: async () => ({ ok: true, value: { paired: reviewers.paired() } }),
    decide: async (params, context) => {
      const surface = SURFACE[context.caller];
      if (surface === undefined) return fail('forbidden', `a ${context.caller} does not decide`);
      const { principal } = context;
      const by = principal.role === 'extension' || principal.role === 'device' ? reviewers.reviewerOf(principal.keyId) : undefined;
      return engine.decide(params, surface, by);
    },
    'passkey.info': async (_params, context) => ({ ok: true, value: engine.passkeys.info(originOf(context)) }),
    'passkey.nonce': async () => ({ ok: true, value: engine.passkeys.nonce() }),
    'passkey.register': async (params, context) => {
      const origin = originOf(context);
      if (origin === null) return fail('forbidden', 'a passkey is registered from a page, which has an authenticator');
      return passkeyChange(() => engine.passkeys.register(origin, params));
    },
    'passkey.remove': (params, context) => passkeyChange(() => engine.passkeys.remove(askerOf(context), params)),
    'passkey.require': (params, context) => passkeyChange(() => engine.passkeys.setRequire(askerOf(context), params)),
    'push.info': async (_params, context) => {
      if (context.principal.role !== 'device') return fail('forbidden', 'push notifications are a device\'s');
      const { keyId } = context.principal;
      return unlessDown(async () => ({ ok: true, value: await push.info(keyId) }));
    },
    'push.subscribe': async (params, context) => {
      if (context.principal.role !== 'device') return fail('forbidden', 'push notifications are a device\'s');
      const { keyId } = context.principal;
      return unlessDown(async () => ({ ok: true, value: await push.subscribe(keyId, params.subscription) }));
    },
    'rule.save': async (params) => {
      // With the person's setting `rules`, a passkey approves every save but ending a rule (which only brings questions back).
      if (engine.passkeys.require().includes('rules') && !endsRule(params, engine)) {
        const { nonce, proof } = params;
        const approved = await engine.passkeys.approve({ ...(nonce ? { nonce } : {}), ...(proof ? { proof } : {}) }, { rule: { id: params.id ?? null, draft: params.rule } });
        if (!approved.ok) return approved.code === 'unavailable' ? fail('unavailable', UNRECORDED_PASSKEY) : { ok: true, value: { ok: false, issues: approved.issues } };
      }
      const saved = await engine.saveRule(params.rule, params.id === undefined ? {} : { id: params.id });
      if (saved.ok) return { ok: true, value: { ok: true, id: saved.rule.id } };
      return saved.reason === 'unavailable' ? fail('unavailable', 'the hub could not record this change; try again in a moment') : { ok: true, value: { ok: false, issues: saved.issues } };
    },
    'rule.delete': async (params) => {
      const removed = await engine.deleteRule(params.id);
      return removed === 'unavailable' ? fail('unavailable', 'the hub could not record this change; try again in a moment') : { ok: true, value: { removed } };
    },
  };
}

function withReviewers(created: EngineCreated, reviewers: Reviewers): Created {
  const { elicitationId, expiresAt, ...decided } = created;
  const next = decided.status === 'pending' ? (pairingHint(reviewers) ?? phoneHint(reviewers)) : pairingHint(reviewers);
  return { elicitationId, expiresAt, reviewer: { connected: reviewers.connected() > 0 }, ...(next === undefined ? {} : { next }), ...decided };
}

/**
 * With nobody's review open but a phone paired: the person can decide there, so the agent says so instead of that nobody
 * can. Never a link or a code: where the page is and how to reach it is the person's.
 */
function phoneHint(reviewers: Reviewers): string | undefined {
  const devices = reviewers.devices();
  if (reviewers.connected() > 0 || devices === null || devices === 0) return undefined;
  if (reviewers.team()) {
    return (
      'None of the team\'s reviewers has a review open right now, but some have a phone paired with this hub: they can ' +
      'decide this there (it notifies them when they turned notifications on). The request waits until it expires; wait ' +
      'for it with elicit_await.'
    );
  }
  return (
    'Nobody has a review open right now, but the person has a phone paired with this computer: they can decide this ' +
    'there (it notifies them when they turned notifications on) or in the browser extension. The request waits until ' +
    'it expires; wait for it with elicit_await, or tell the person it is waiting on their phone.'
  );
}

/**
 * With no extension paired yet, what an agent's new request tells it to ask of the person. Never the code: the agent
 * may be exactly who must not pair (a sandboxed agent that paired a fake extension could approve its own requests),
 * so the code goes only to the person, from the `pair` command in their terminal.
 */
function pairingHint(reviewers: Reviewers): string | undefined {
  const paired = reviewers.paired();
  if (paired === null || paired > 0) return undefined;
  if (reviewers.team()) {
    return (
      'No reviewer\'s browser or phone is paired with this team\'s hub yet, so nobody can see this request. Ask whoever ' +
      'runs the hub to pair one (`elicitly-companion remote pair --reviewer <name>` on the hub\'s server). The code or ' +
      'link is for the reviewer only: do not ask for it. The request waits meanwhile.'
    );
  }
  return (
    'No browser extension is paired with this computer yet, so nobody can see this request. Ask the person to install the ' +
    'Elicitly browser extension, run `npx elicitly-companion pair` in a terminal on this computer, and enter the code it ' +
    'prints in the extension\'s Settings under "Pairing code", then press "Pair". The code is for the person only: do not ' +
    'ask them for it. The request waits meanwhile.'
  );
}

/** A directory that could not be read or written (a team's database down) answers `unavailable`, never a crash. */
async function unlessDown<T>(run: () => Promise<Answer<T>>): Promise<Answer<T>> {
  try {
    return await run();
  } catch (error) {
    return fail('unavailable', `the hub could not reach its directory: ${error instanceof Error ? error.message : String(error)}`);
  }
}

// The hub's one dispatcher (server/hub/peer-dispatcher.ts) on its own, with recording handlers: the role × method table
// checked before anything runs, from a socket (`dispatch`) and in-process (`call`) alike; the `permission` grant of an
// exported key; params checked against the method's schema, refusals naming the params' own paths.
import { describe, expect, it } from 'vitest';
import { ANSWERED, LOCAL, PeerDispatcher, UNPROVEN, callersOf, permit, type CallContext, type Handlers, type Outcome, type Principal } from '../../server/hub/peer-dispatcher.js';
import { checkApprovalInput } from '../../shared/approval-input.js';
import { CALLERS, PEER_CALLS, PEER_METHODS, fail, type Caller, type Params, type PeerMethod } from '../../shared/peer-calls.js';
import { PROTOCOL_VERSION } from '../../shared/wire-protocol.js';
import { bashPermission } from '../fixtures/permission.js';

const KEY_ID = 'k_0123456789abcdef';
const REMOTE: Principal = { role: 'remote', keyId: KEY_ID, grants: [] };
const GRANTED: Principal = { role: 'remote', keyId: KEY_ID, grants: ['permission'] };
const EXTENSION: Principal = { role: 'extension', keyId: KEY_ID, origin: 'chrome-extension://abc' };
const DEVICE: Principal = { role: 'device', keyId: KEY_ID, origin: 'http://127.0.0.1:17391' };

function approvalRequest() {
  const checked = checkApprovalInput({ message: 'Deploy?', context: { service: 'api' } });
  if (!checked.ok) throw new Error('fixture invalid');
  return checked.request;
}

/** Params that pass each method's schema: what a call of each method carries when only the caller is in question. */
const VALID: { [M in PeerMethod]: Params<M> } = {
  hello: { protocol: PROTOCOL_VERSION, role: 'relay', client: { name: 'test', version: '1' }, nonce: 'a'.repeat(64) },
  auth: { proof: 'b'.repeat(64) },
  create: { id: 'el_1', request: approvalRequest(), renderedTemplate: null, timeoutMs: 60_000, requester: { client: 'test', pid: 1 } },
  status: { id: 'el_1' },
  await: { id: 'el_1', waitMs: 1000 },
  result: { id: 'el_1' },
  cancel: { id: 'el_1' },
  info: {},
  paired: {},
  view: { id: 'el_1' },
  decide: { elicitationId: 'el_1', idempotencyKey: 'k1', decision: 'approved' },
  rules: {},
  'rule.save': { rule: { effect: 'allow', match: { tool: 'Bash' }, expiresAt: null } },
  'rule.delete': { id: 'rule_0123456789abcdef' },
  'passkey.info': {},
  'passkey.nonce': {},
  'passkey.register': { nonce: 'n'.repeat(43), registration: { id: 'AAAA', rawId: 'AAAA', type: 'public-key', response: { clientDataJSON: 'AA', attestationObject: 'AA' }, clientExtensionResults: {} }, label: 'test' },
  'passkey.remove': { id: 'AAAA' },
  'passkey.require': { require: [] },
  'push.info': {},
  'push.subscribe': { subscription: null },
};

/** The role × method table, written out: a change to any method's `callers` in the map is a change to this test. */
const TABLE: Record<Principal['role'], readonly PeerMethod[]> = {
  unproven: ['hello', 'auth'],
  local: ['create', 'status', 'await', 'result', 'cancel', 'info', 'paired', 'view', 'decide', 'rules', 'passkey.info', 'passkey.remove', 'passkey.require', 'rule.delete'],
  remote: ['create', 'status', 'await', 'result', 'cancel', 'info', 'paired'],
  extension: ['decide', 'rule.save', 'passkey.info', 'passkey.nonce', 'passkey.register', 'passkey.remove', 'passkey.require', 'rule.delete'],
  device: ['decide', 'passkey.info', 'passkey.nonce', 'passkey.register', 'passkey.remove', 'passkey.require', 'push.info', 'push.subscribe'],
};
const PRINCIPALS: [string, Principal][] = [
  ['unproven', UNPROVEN],
  ['local', LOCAL],
  ['remote', REMOTE],
  ['extension', EXTENSION],
  ['device', DEVICE],
];

interface Ran {
  method: PeerMethod;
  params: unknown;
  context: CallContext;
}

/** Handlers that record what ran, each answering `outcome` (an ok by default; ANSWERED where the test says). */
function recording(answered: readonly PeerMethod[] = []) {
  const ran: Ran[] = [];
  const h =
    <M extends PeerMethod>(method: M, outcome: Outcome<M>) =>
    async (params: Params<M>, context: CallContext): Promise<Outcome<M>> => {
      ran.push({ method, params, context });
      return answered.includes(method) ? ANSWERED : outcome;
    };
  const handlers: Handlers<CallContext> = {
    hello: h('hello', { ok: true, value: { nonce: 'c'.repeat(64), proof: 'd'.repeat(64) } }),
    auth: h('auth', { ok: true, value: { welcome: { protocol: PROTOCOL_VERSION, hubPid: 1, pending: [], rules: [] } } }),
    create: h('create', { ok: true, value: { elicitationId: 'el_1', status: 'pending', expiresAt: '2030-01-01T00:00:00.000Z', reviewer: { connected: false } } }),
    status: h('status', { ok: true, value: { status: 'pending' } }),
    await: h('await', { ok: true, value: { status: 'pending' } }),
    result: h('result', fail('pending', 'nobody decided yet')),
    cancel: h('cancel', { ok: true, value: { status: 'canceled' } }),
    info: h('info', { ok: true, value: { pid: 1, extensionsConnected: 0, lastSeenAt: null, pending: 0 } }),
    paired: h('paired', { ok: true, value: { paired: 1 } }),
    view: h('view', fail('not_found', 'no request el_1')),
    decide: h('decide', { ok: true, value: { ok: true, status: 'approved' } }),
    rules: h('rules', { ok: true, value: { rules: [] } }),
    'rule.save': h('rule.save', { ok: true, value: { ok: true } }),
    'rule.delete': h('rule.delete', { ok: true, value: { removed: false } }),
    'passkey.info': h('passkey.info', { ok: true, value: { hub: '0'.repeat(16), require: [], passkeys: [], rpId: null } }),
    'passkey.nonce': h('passkey.nonce', { ok: true, value: { nonce: 'n'.repeat(43), expiresAt: 1 } }),
    'passkey.register': h('passkey.register', { ok: true, value: { ok: true } }),
    'passkey.remove': h('passkey.remove', { ok: true, value: { ok: true, removed: false } }),
    'passkey.require': h('passkey.require', { ok: true, value: { ok: true } }),
    'push.info': h('push.info', { ok: true, value: { publicKey: 'A'.repeat(87), subscribed: false } }),
    'push.subscribe': h('push.subscribe', { ok: true, value: { subscribed: false } }),
  };
  return { ran, dispatcher: new PeerDispatcher(handlers) };
}

/** The context factory a socket gives: records which caller the dispatcher chose. */
function contextFor(principal: Principal, chosen: Caller[] = []) {
  return (caller: Caller): CallContext => {
    chosen.push(caller);
    return { principal, caller };
  };
}

let ids = 0;
const frame = (method: string, params: unknown) => ({ id: `c${++ids}`, method, params });

describe('who a socket is, as the table reads it', () => {
  it('callersOf: a local relay is `local` and the app it serves; every other principal is its own role', () => {
    expect(callersOf(LOCAL)).toEqual(['local', 'app']);
    expect(callersOf(UNPROVEN)).toEqual(['unproven']);
    expect(callersOf(REMOTE)).toEqual(['remote']);
    expect(callersOf(EXTENSION)).toEqual(['extension']);
    expect(callersOf(DEVICE)).toEqual(['device']);
  });

  it('no method lists both `local` and `app`: a local socket calls every method as exactly one caller', () => {
    for (const method of PEER_METHODS) {
      const callers: readonly Caller[] = PEER_CALLS[method].callers;
      expect(callers.includes('local') && callers.includes('app'), method).toBe(false);
      for (const caller of callers) expect(CALLERS).toContain(caller);
    }
  });

  it('the table: each principal may call exactly the methods listed for it here', () => {
    for (const [, principal] of PRINCIPALS) {
      const allowed = PEER_METHODS.filter((method) => permit(principal, method, VALID[method]).ok);
      expect(allowed, principal.role).toEqual(TABLE[principal.role]);
    }
  });
});

describe('dispatch: one answer per call frame, the table checked before anything runs', () => {
  it('a method the map does not have is unknown_method, whoever calls, and runs nothing', async () => {
    const { ran, dispatcher } = recording();
    for (const method of ['reviewer', 'appDecide', 'ruleRemove', 'call', '__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
      for (const [, principal] of PRINCIPALS) {
        expect(await dispatcher.dispatch(frame(method, {}), principal, contextFor(principal)), `${method} by ${principal.role}`).toEqual({
          ok: false,
          error: { code: 'unknown_method', message: `no method ${JSON.stringify(method)}` },
        });
      }
    }
    // A long name is not echoed whole.
    const long = await dispatcher.dispatch(frame('x'.repeat(50), {}), LOCAL, contextFor(LOCAL));
    expect(long).toMatchObject({ ok: false, error: { code: 'unknown_method' } });
    expect(ran).toEqual([]);
  });

  it.each(PRINCIPALS)('%s: every method not in its list is forbidden, naming the method; every one in it runs as the caller the list names', async (_name, principal) => {
    for (const method of PEER_METHODS) {
      const { ran, dispatcher } = recording();
      const chosen: Caller[] = [];
      const answer = await dispatcher.dispatch(frame(method, VALID[method]), principal, contextFor(principal, chosen));
      if (TABLE[principal.role].includes(method)) {
        const caller = callersOf(principal).find((c) => (PEER_CALLS[method].callers as readonly Caller[]).includes(c));
        expect(answer, method).not.toMatchObject({ ok: false, error: { code: 'forbidden' } });
        expect(ran, method).toEqual([{ method, params: VALID[method], context: { principal, caller } }]);
        expect(chosen, method).toEqual([caller]);
      } else {
        expect(answer, method).toEqual({ ok: false, error: { code: 'forbidden', message: expect.stringMatching(new RegExp(`^${method.replace('.', '\\.')} is not for `)) } });
        expect(ran, method).toEqual([]);
        expect(chosen, method).toEqual([]);
      }
    }
  });

  it('a local socket reads a request and decides as the app (the review it serves), and files as itself', async () => {
    const { ran, dispatcher } = recording();
    await dispatcher.dispatch(frame('view', VALID.view), LOCAL, contextFor(LOCAL));
    await dispatcher.dispatch(frame('decide', VALID.decide), LOCAL, contextFor(LOCAL));
    await dispatcher.dispatch(frame('create', VALID.create), LOCAL, contextFor(LOCAL));
    await dispatcher.dispatch(frame('rule.delete', VALID['rule.delete']), LOCAL, contextFor(LOCAL));
    expect(ran.map((r) => [r.method, r.context.caller])).toEqual([
      ['view', 'app'],
      ['decide', 'app'],
      ['create', 'local'],
      ['rule.delete', 'local'],
    ]);
  });

  it('a forbidden caller is refused before its params are read: bad params of a method not its own are forbidden, not invalid', async () => {
    const { ran, dispatcher } = recording();
    expect(await dispatcher.dispatch(frame('create', { nonsense: true }), EXTENSION, contextFor(EXTENSION))).toMatchObject({ ok: false, error: { code: 'forbidden' } });
    expect(await dispatcher.dispatch(frame('rule.save', 'not an object'), LOCAL, contextFor(LOCAL))).toMatchObject({ ok: false, error: { code: 'forbidden' } });
    expect(await dispatcher.dispatch(frame('decide', null), UNPROVEN, contextFor(UNPROVEN))).toMatchObject({ ok: false, error: { code: 'forbidden' } });
    expect(ran).toEqual([]);
  });

  it('a handler that closed the socket instead of answering (a failed proof) is passed on as such', async () => {
    const { dispatcher } = recording(['auth']);
    expect(await dispatcher.dispatch(frame('auth', VALID.auth), UNPROVEN, contextFor(UNPROVEN))).toBe(ANSWERED);
  });
});

describe('params failing the method\'s schema: invalid, with issues named by the params\' own paths', () => {
  it.each<[string, PeerMethod, Principal, unknown, string[]]>([
    ['a negative wait', 'await', LOCAL, { id: 'el_1', waitMs: -5 }, ['waitMs']],
    ['a rule condition that is empty', 'decide', EXTENSION, { ...VALID.decide, rule: { effect: 'allow', match: { tool: '' }, expiresAt: null } }, ['rule.match.tool']],
    ['a decision that is neither', 'decide', DEVICE, { ...VALID.decide, decision: 'maybe' }, ['decision']],
    ['values that are no object', 'decide', LOCAL, { ...VALID.decide, values: 'yes' }, ['values']],
    ['a key the method does not have', 'status', REMOTE, { id: 'el_1', scope: null }, ['scope']],
    ['a missing id', 'rule.delete', EXTENSION, {}, ['id']],
    ['a hello nonce not in lowercase hex', 'hello', UNPROVEN, { ...VALID.hello, nonce: 'A'.repeat(64) }, ['nonce']],
  ])('%s', async (_name, method, principal, params, paths) => {
    const { ran, dispatcher } = recording();
    const answer = await dispatcher.dispatch(frame(method, params), principal, contextFor(principal));
    if (answer === ANSWERED || answer.ok) throw new Error(`expected a refusal, got ${JSON.stringify(answer)}`);
    expect(answer.error.code).toBe('invalid');
    expect(answer.error.issues?.map((i) => i.path)).toEqual(paths);
    // The message names the first field the same way (never `params.…`).
    expect(answer.error.message.startsWith(`${paths[0]}: `)).toBe(true);
    expect(ran).toEqual([]);
  });

  it('params that are not an object at all are named as the params', async () => {
    const { dispatcher } = recording();
    const answer = await dispatcher.dispatch(frame('status', 'el_1'), LOCAL, contextFor(LOCAL));
    expect(answer).toMatchObject({ ok: false, error: { code: 'invalid', issues: [{ path: 'params' }] } });
  });
});

describe('the `permission` grant of an exported relay key', () => {
  const permissionCreate = { ...VALID.create, request: bashPermission('npm test') };

  it('without it, a remote key filing a host\'s permission prompt is forbidden, naming `--allow permission`, and nothing runs', async () => {
    const { ran, dispatcher } = recording();
    const answer = await dispatcher.dispatch(frame('create', permissionCreate), REMOTE, contextFor(REMOTE));
    expect(answer).toEqual({ ok: false, error: { code: 'forbidden', message: expect.stringContaining('--allow permission') } });
    expect(answer).toMatchObject({ error: { message: expect.stringContaining(KEY_ID) } });
    expect(ran).toEqual([]);
  });

  it('with it, the handler runs, as the remote caller', async () => {
    const { ran, dispatcher } = recording();
    expect(await dispatcher.dispatch(frame('create', permissionCreate), GRANTED, contextFor(GRANTED))).toMatchObject({ ok: true });
    expect(ran).toEqual([{ method: 'create', params: permissionCreate, context: { principal: GRANTED, caller: 'remote' } }]);
  });

  it('a remote key needs no grant for its plain requests, and the install key none at all', async () => {
    const { ran, dispatcher } = recording();
    expect(await dispatcher.dispatch(frame('create', VALID.create), REMOTE, contextFor(REMOTE))).toMatchObject({ ok: true });
    expect(await dispatcher.dispatch(frame('create', permissionCreate), LOCAL, contextFor(LOCAL))).toMatchObject({ ok: true });
    expect(ran.map((r) => r.context.caller)).toEqual(['remote', 'local']);
  });
});

describe('call: the hub\'s own tools, in-process, through the same table', () => {
  it('runs what the principal may call, as the caller the table names', async () => {
    const { ran, dispatcher } = recording();
    expect(await dispatcher.call('status', VALID.status, LOCAL, contextFor(LOCAL))).toEqual({ ok: true, value: { status: 'pending' } });
    expect(await dispatcher.call('decide', VALID.decide, LOCAL, contextFor(LOCAL))).toEqual({ ok: true, value: { ok: true, status: 'approved' } });
    expect(ran.map((r) => [r.method, r.context.caller])).toEqual([
      ['status', 'local'],
      ['decide', 'app'],
    ]);
  });

  it('refuses what the table refuses, the same way as from a socket', async () => {
    const { ran, dispatcher } = recording();
    for (const [, principal] of PRINCIPALS) {
      for (const method of PEER_METHODS) {
        if (TABLE[principal.role].includes(method)) continue;
        const inProcess = await dispatcher.call(method, VALID[method], principal, contextFor(principal));
        expect(inProcess, `${method} by ${principal.role}`).toEqual(await dispatcher.dispatch(frame(method, VALID[method]), principal, contextFor(principal)));
        expect(inProcess).toMatchObject({ ok: false, error: { code: 'forbidden' } });
      }
    }
    expect(await dispatcher.call('create', { ...VALID.create, request: bashPermission('ls') }, REMOTE, contextFor(REMOTE))).toMatchObject({
      ok: false,
      error: { code: 'forbidden', message: expect.stringContaining('--allow permission') },
    });
    expect(ran).toEqual([]);
  });

  it('a handler that would close a socket answers an in-process call unavailable', async () => {
    const { dispatcher } = recording(['status']);
    expect(await dispatcher.call('status', VALID.status, LOCAL, contextFor(LOCAL))).toMatchObject({ ok: false, error: { code: 'unavailable' } });
  });
});

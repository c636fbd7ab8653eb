// The hub's answers to every call but the handshake's (server/hub/hub-service.ts `serviceHandlers`): the engine's calls,
// decorated with what only the hub knows (its reviewers and the paired count), scoped to what the caller may see, on a
// real engine in a temp dir and reviewers the test sets. Who may call what is the dispatcher's (peer-dispatcher.test.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApprovalEngine } from '../../server/approvals/approval-engine.js';
import { NO_PUSH } from '../helpers/hub-fakes.js';
import { serviceHandlers, type Reviewers, type ServiceContext, type ServiceHandlers } from '../../server/hub/hub-service.js';
import { LOCAL, type Principal } from '../../server/hub/peer-dispatcher.js';
import type { Caller, CreateParams, Params } from '../../shared/peer-calls.js';
import { checkApprovalInput } from '../../shared/approval-input.js';
import { bashPermission } from '../fixtures/permission.js';

const KEY_ID = 'k_0123456789abcdef';
/** The reviewers paired keys belong to (`pair --reviewer`). */
const NAMES = new Map([['k_aaaaaaaaaaaaaaaa', 'Ana Pérez'], ['k_bbbbbbbbbbbbbbbb', "Li O'Neil"]]);
const REMOTE: Principal = { role: 'remote', keyId: KEY_ID, grants: [] };

let dir: string;
let engine: ApprovalEngine;
let reviewers: { connected: number; lastSeenAt: number | null; paired: number | null; devices: number | null; team?: boolean };
let handlers: ServiceHandlers;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'elicitly-hub-service-'));
  engine = await ApprovalEngine.open({ dir, retentionMs: 86_400_000 });
  reviewers = { connected: 0, lastSeenAt: null, paired: 1, devices: 0 };
  const live: Reviewers = {
    connected: () => reviewers.connected, lastSeenAt: () => reviewers.lastSeenAt, paired: () => reviewers.paired, devices: () => reviewers.devices,
    reviewerOf: (keyId) => {
      const name = NAMES.get(keyId);
      return name === undefined ? undefined : { name, groups: [] };
    },
    team: () => reviewers.team === true,
  };
  handlers = serviceHandlers(engine, live, NO_PUSH);
});
afterEach(async () => {
  await engine.close();
  rmSync(dir, { recursive: true, force: true });
});

type ServiceMethod = keyof ServiceHandlers;

/** The context the dispatcher gives a handler: a local relay (calling as `local`) unless the test says otherwise. */
function context(fields: Partial<ServiceContext> = {}): ServiceContext {
  return { principal: LOCAL, caller: 'local', ...fields };
}

/** Runs one handler, as the dispatcher does once it has checked the caller and the params. */
function run<M extends ServiceMethod>(method: M, params: Params<M>, ctx: ServiceContext = context()) {
  const handler: ServiceHandlers[M] = handlers[method];
  return handler(params, ctx);
}

function create(id: string): CreateParams {
  const checked = checkApprovalInput({ message: id, context: { id } });
  if (!checked.ok) throw new Error('fixture invalid');
  return { id, request: checked.request, renderedTemplate: null, timeoutMs: 60_000, requester: { client: 'test', pid: 1 } };
}

describe('what the hub adds to a create', () => {
  it.each<[string, { connected: number; paired: number | null; devices: number | null }, { connected: boolean; next: 'pair' | 'phone' | null }]>([
    ['a reviewer connected', { connected: 1, paired: 1, devices: 0 }, { connected: true, next: null }],
    ['an extension paired, none connected', { connected: 0, paired: 2, devices: 0 }, { connected: false, next: null }],
    ['a phone paired, nobody connected: the agent hears it can be decided on the phone', { connected: 0, paired: 2, devices: 1 }, { connected: false, next: 'phone' }],
    ['a phone paired and a reviewer connected', { connected: 1, paired: 2, devices: 1 }, { connected: true, next: null }],
    ['nothing paired', { connected: 0, paired: 0, devices: 0 }, { connected: false, next: 'pair' }],
    ['the paired count unknown (a damaged file): no advice rather than wrong advice', { connected: 0, paired: null, devices: null }, { connected: false, next: null }],
  ])('%s', async (_name, now, expected) => {
    reviewers = { ...reviewers, ...now };
    const answer = await run('create', create(`el_${_name.length}_${now.connected}`));
    if (!answer.ok) throw new Error(answer.error.message);
    expect(answer.value.reviewer).toEqual({ connected: expected.connected });
    expect('next' in answer.value).toBe(expected.next !== null);
    if (expected.next === 'pair') {
      expect(answer.value.next).toContain('npx elicitly-companion pair');
      expect(answer.value.next).toContain('do not ask them for it');
    }
    if (expected.next === 'phone') expect(answer.value.next).toContain('phone paired with this computer');
  });

  it.each<[string, { connected: number; paired: number; devices: number }, string]>([
    ['nothing paired', { connected: 0, paired: 0, devices: 0 }, "No reviewer's browser or phone is paired with this team's hub yet"],
    ['a phone paired, nobody connected', { connected: 0, paired: 1, devices: 1 }, "None of the team's reviewers has a review open right now"],
  ])('on a team\'s hub the advice speaks of its reviewers, never of this computer: %s', async (_name, now, says) => {
    reviewers = { ...reviewers, ...now, team: true };
    const answer = await run('create', create(`el_team_${now.paired}`));
    if (!answer.ok) throw new Error(answer.error.message);
    expect(answer.value.next).toContain(says);
    expect(answer.value.next).not.toContain('this computer');
  });

  it('keeps the engine\'s fields and the wire\'s order: id, deadline, reviewer, advice, then the status', async () => {
    reviewers.paired = 0;
    const answer = await run('create', create('el_order'));
    if (!answer.ok) throw new Error(answer.error.message);
    expect(Object.keys(answer.value)).toEqual(['elicitationId', 'expiresAt', 'reviewer', 'next', 'status']);
    expect(answer.value).toMatchObject({ elicitationId: 'el_order', status: 'pending' });
  });

  it('counts the reviewers once the engine has answered, not before', async () => {
    reviewers.paired = 0;
    const engineCall = engine.call.bind(engine);
    vi.spyOn(engine, 'call').mockImplementation(async (method, params, scope, signal) => {
      const answer = await engineCall(method, params, scope, signal);
      // A pairing and a reviewer that came while the request was being written.
      reviewers = { connected: 1, lastSeenAt: 5, paired: 1, devices: 0 };
      return answer;
    });
    const answer = await run('create', create('el_late'));
    expect(answer).toMatchObject({ ok: true, value: { reviewer: { connected: true } } });
    expect(answer.ok && 'next' in answer.value).toBe(false);
  });

  it('passes a refused create on as the engine said it', async () => {
    await engine.close();
    expect(await run('create', create('el_new'))).toEqual(await engine.call('create', create('el_new'), null));
    expect(await run('create', create('el_new'))).toMatchObject({ ok: false, error: { code: 'unavailable' } });
  });

  it('a create from another machine is filed under its key: only that key sees it', async () => {
    expect(await run('create', create('el_theirs'), context({ principal: REMOTE, caller: 'remote' }))).toMatchObject({ ok: true });
    expect(await run('status', { id: 'el_theirs' }, context({ principal: REMOTE, caller: 'remote' }))).toEqual({ ok: true, value: { status: 'pending' } });
    const other: Principal = { role: 'remote', keyId: 'k_fedcba9876543210', grants: [] };
    expect(await run('status', { id: 'el_theirs' }, context({ principal: other, caller: 'remote' }))).toMatchObject({ ok: false, error: { code: 'not_found' } });
    // This computer sees every request.
    expect(await run('status', { id: 'el_theirs' })).toEqual({ ok: true, value: { status: 'pending' } });
  });
});

describe('a request that lives with its connection (`bound`)', () => {
  it('is tied to the connection that filed it while it waits', async () => {
    const bind = vi.fn<(id: string) => void>();
    expect(await run('create', { ...create('el_bound'), bound: true }, context({ bind }))).toMatchObject({ ok: true, value: { status: 'pending' } });
    expect(bind).toHaveBeenCalledExactlyOnceWith('el_bound');
  });

  it('is not tied when the create did not ask for it, nor when a rule decided it at once, nor when it was refused', async () => {
    const bind = vi.fn<(id: string) => void>();
    await run('create', create('el_free'), context({ bind }));
    // A rule decides the permission prompt at creation: nothing waits, so nothing is bound.
    expect(await engine.saveRule({ effect: 'allow', match: { tool: 'Bash', commandPrefix: 'ls' }, expiresAt: null })).toMatchObject({ ok: true });
    const decided = await run('create', { id: 'el_ruled', request: bashPermission('ls'), renderedTemplate: null, timeoutMs: 60_000, requester: { client: 'test', pid: 1 }, bound: true }, context({ bind }));
    expect(decided).toMatchObject({ ok: true, value: { status: 'approved', decidedVia: 'rule' } });
    await engine.close();
    expect(await run('create', { ...create('el_refused'), bound: true }, context({ bind }))).toMatchObject({ ok: false });
    expect(bind).not.toHaveBeenCalled();
  });

  it('without a connection (the hub\'s own tools) a bound create is filed all the same', async () => {
    expect(await run('create', { ...create('el_inproc'), bound: true })).toMatchObject({ ok: true, value: { status: 'pending' } });
  });
});

describe('what only the hub answers', () => {
  it('paired: the hub\'s count, without asking the engine', async () => {
    const spy = vi.spyOn(engine, 'call');
    reviewers.paired = 3;
    expect(await run('paired', {})).toEqual({ ok: true, value: { paired: 3 } });
    reviewers.paired = null;
    expect(await run('paired', {})).toEqual({ ok: true, value: { paired: null } });
    expect(spy).not.toHaveBeenCalled();
  });

  it('info: this process, the reviewers connected and last seen, and the engine\'s pending count', async () => {
    await run('create', create('el_a'));
    await run('create', create('el_b'));
    reviewers = { connected: 2, lastSeenAt: 1234, paired: 2, devices: 0 };
    expect(await run('info', {})).toEqual({ ok: true, value: { pid: process.pid, extensionsConnected: 2, lastSeenAt: 1234, pending: 2 } });
  });

  it('info for a key from another machine counts its own pending requests only', async () => {
    await run('create', create('el_local'));
    await run('create', create('el_remote'), context({ principal: REMOTE, caller: 'remote' }));
    expect(await run('info', {}, context({ principal: REMOTE, caller: 'remote' }))).toMatchObject({ ok: true, value: { pending: 1 } });
    expect(await run('info', {})).toMatchObject({ ok: true, value: { pending: 2 } });
  });

  it('answers even while the engine refuses everything: it reads no store', async () => {
    await engine.close();
    expect(await run('paired', {})).toMatchObject({ ok: true });
    expect(await run('info', {})).toMatchObject({ ok: true, value: { pending: 0 } });
  });
});

describe('every other call is the engine\'s own', () => {
  const calls = [
    ['status', { id: 'el_x' }],
    ['await', { id: 'el_x', waitMs: 1 }],
    ['view', { id: 'el_x' }],
    ['cancel', { id: 'el_x' }],
    ['result', { id: 'el_x' }],
    ['rules', {}],
  ] as const;

  it.each<[string, Principal, string | null]>([
    ['this computer: every request (scope null)', LOCAL, null],
    ['a key from another machine: its own (scope its key id)', REMOTE, KEY_ID],
  ])('%s: with its params, scope and signal, and its answer unchanged', async (_name, principal, scope) => {
    await run('create', create('el_x'), context({ principal, caller: principal.role === 'remote' ? 'remote' : 'local' }));
    const spy = vi.spyOn(engine, 'call');
    const signal = new AbortController().signal;
    for (const [method, params] of calls) {
      spy.mockClear();
      const caller: Caller = method === 'view' ? 'app' : principal.role === 'remote' ? 'remote' : 'local';
      const answer = await run(method, params, context({ principal, caller, signal }));
      expect(spy).toHaveBeenCalledWith(method, params, scope, signal);
      expect(answer).toEqual(await spy.mock.results[0]?.value);
    }
  });
});

describe('a decision: the surface recorded is the caller\'s, never a field', () => {
  it.each<[Caller, string]>([
    ['extension', 'extension'],
    ['device', 'phone'],
    ['app', 'app'],
  ])('a %s decides as %s', async (caller, surface) => {
    await run('create', create('el_d'));
    const spy = vi.spyOn(engine, 'decide');
    const params = { elicitationId: 'el_d', idempotencyKey: 'k1', decision: 'approved' as const };
    expect(await run('decide', params, context({ caller }))).toEqual({ ok: true, value: { ok: true, status: 'approved' } });
    expect(spy).toHaveBeenCalledExactlyOnceWith(params, surface, undefined);
    expect(await run('view', { id: 'el_d' }, context({ caller: 'app' }))).toMatchObject({ ok: true, value: { outcome: { decidedVia: surface } } });
  });

  it('a caller that is no surface decides nothing (the dispatcher never lets one through; this holds without it)', async () => {
    await run('create', create('el_nd'));
    const spy = vi.spyOn(engine, 'decide');
    for (const caller of ['local', 'remote', 'unproven'] as const) {
      expect(await run('decide', { elicitationId: 'el_nd', idempotencyKey: 'k', decision: 'approved' }, context({ caller }))).toMatchObject({ ok: false, error: { code: 'forbidden' } });
    }
    expect(spy).not.toHaveBeenCalled();
    expect(await run('status', { id: 'el_nd' })).toEqual({ ok: true, value: { status: 'pending' } });
  });

  it('the engine\'s refusals pass through: not_in_app for an app decision of an extension-only request, unavailable when it cannot record', async () => {
    await run('create', { ...create('el_ext'), surfaces: ['extension'] });
    expect(await run('decide', { elicitationId: 'el_ext', idempotencyKey: 'k', decision: 'approved' }, context({ caller: 'app' }))).toMatchObject({ ok: false, error: { code: 'not_in_app' } });
    await engine.close();
    expect(await run('decide', { elicitationId: 'el_ext', idempotencyKey: 'k', decision: 'approved' }, context({ caller: 'extension' }))).toMatchObject({ ok: false, error: { code: 'unavailable' } });
  });
});

describe('rule changes: the engine\'s, in the call map\'s terms', () => {
  const draft = { effect: 'allow' as const, match: { tool: 'Bash', commandPrefix: 'npm test' }, expiresAt: null };

  it('rule.save: a new rule answers its id; the same id replaces it; a refusal names the field', async () => {
    const saved = await run('rule.save', { rule: draft }, context({ caller: 'extension' }));
    if (!saved.ok || !saved.value.id) throw new Error(`not saved: ${JSON.stringify(saved)}`);
    expect(saved.value).toEqual({ ok: true, id: expect.stringMatching(/^rule_[0-9a-f]{16}$/) });
    const id = saved.value.id;
    expect(await run('rule.save', { id, rule: { ...draft, effect: 'deny' } }, context({ caller: 'extension' }))).toEqual({ ok: true, value: { ok: true, id } });
    expect(engine.ruleList()).toEqual([expect.objectContaining({ id, effect: 'deny' })]);
    expect(await run('rule.save', { rule: { ...draft, expiresAt: 1 } }, context({ caller: 'extension' }))).toEqual({
      ok: true,
      value: { ok: false, issues: [expect.objectContaining({ path: 'rule.expiresAt' })] },
    });
    expect(await run('rule.save', { id: 'rule_00000000000000ff', rule: draft }, context({ caller: 'extension' }))).toEqual({
      ok: true,
      value: { ok: false, issues: [expect.objectContaining({ path: 'id' })] },
    });
  });

  it('rule.delete: whether there was one', async () => {
    const saved = await engine.saveRule(draft);
    if (!saved.ok) throw new Error('not saved');
    expect(await run('rule.delete', { id: saved.rule.id })).toEqual({ ok: true, value: { removed: true } });
    expect(await run('rule.delete', { id: saved.rule.id }, context({ caller: 'extension' }))).toEqual({ ok: true, value: { removed: false } });
  });

  it('a change the engine cannot record is the error unavailable, not a refusal of the rule', async () => {
    await engine.close();
    expect(await run('rule.save', { rule: draft }, context({ caller: 'extension' }))).toMatchObject({ ok: false, error: { code: 'unavailable' } });
    expect(await run('rule.delete', { id: 'rule_00000000000000ff' })).toMatchObject({ ok: false, error: { code: 'unavailable' } });
  });
});

describe('who decided, on a team\'s hub', () => {
  it.each([
    ['an extension paired for a reviewer', { role: 'extension', keyId: 'k_aaaaaaaaaaaaaaaa', origin: 'chrome-extension://x' }, 'extension', 'Ana Pérez'],
    ['a phone paired for a reviewer', { role: 'device', keyId: 'k_bbbbbbbbbbbbbbbb', origin: 'https://hub.example' }, 'device', "Li O'Neil"],
    ['an extension paired for nobody (a single person\'s hub)', { role: 'extension', keyId: 'k_cccccccccccccccc', origin: 'chrome-extension://x' }, 'extension', undefined],
  ] as const)('%s: the outcome records the name its key was paired for, never one the call names', async (_what, principal, caller, name) => {
    const id = `el_by_${caller}_${name === undefined ? 'none' : 'named'}`;
    expect((await run('create', create(id))).ok).toBe(true);
    const decided = await run('decide', { elicitationId: id, idempotencyKey: `k-${id}`, decision: 'approved' }, context({ principal, caller }));
    expect(decided).toMatchObject({ ok: true, value: { ok: true } });
    const view = await run('view', { id });
    if (!view.ok) throw new Error('no view');
    expect(view.value.outcome?.decidedBy).toBe(name);
  });
});

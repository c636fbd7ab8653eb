// The person's rules in the background: the Dexie v5 table (the v4 rows kept), the hub's list from the welcome and
// every `rules.changed` notice (validated, replaced whole), Rules-view changes sent as rule.save/rule.delete calls and
// answered from the hub's answer within a bound, decisions that carry a rule (sent, queued and replayed with it), and
// requests a rule decided at creation (stored decided, named in the history, never notified).
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { Dexie } from 'dexie';
import { beforeEach, describe, expect, it } from 'vitest';
import type { Rule } from '../../shared/rules.js';
import type { RequestView } from '../../shared/wire-protocol.js';
import { openDb } from '../../extension/db/database.js';
import { getRequest } from '../../extension/db/requests-repo.js';
import { listRules, replaceRules, rulesById } from '../../extension/db/rules-repo.js';
import { decisionSummary } from '../../kit/ui/request-summary.js';
import { decideCalls, harness, type Harness } from './background-harness.js';
import { jsonApprovalRow, proposalView, settle, until } from './fakes.js';
import { bashPermission } from './review-helpers.js';

const RULE: Rule = {
  id: 'rule_00000000000000a1',
  effect: 'allow',
  match: { tool: 'Bash', commandPrefix: 'npm test', agent: 'claude-code', directory: '/home/dev/project' },
  createdAt: 1_000,
  expiresAt: null,
};
const DENY_RULE: Rule = { id: 'rule_00000000000000b2', effect: 'deny', match: { tool: 'Bash', commandPrefix: 'rm' }, createdAt: 2_000, expiresAt: 5_000_000 };

function permissionView(id: string, createdAt: number, overrides: Partial<RequestView> = {}): RequestView {
  const request = bashPermission();
  return {
    elicitationId: id, kind: 'permission', status: 'pending', message: request.message, createdAt, expiresAt: createdAt + 110_000,
    requester: { client: 'claude-code', pid: 7 }, request, renderedTemplate: null, ...overrides,
  };
}

describe('Dexie v5: the rules table', () => {
  it('opens a v4 database with its requests, outbox and settings kept, and an empty rules table', async () => {
    const indexedDB = new IDBFactory();
    // The v4 schema as it shipped, written by the previous version of the extension.
    const v4 = new Dexie('elicitly', { indexedDB, IDBKeyRange });
    v4.version(4).stores({
      requests: 'elicitationId, [createdAt+elicitationId], [kind+createdAt+elicitationId], [verdict+createdAt+elicitationId], [agent+createdAt+elicitationId], [kind+verdict+createdAt+elicitationId], [kind+agent+createdAt+elicitationId], [verdict+agent+createdAt+elicitationId], [kind+verdict+agent+createdAt+elicitationId], [status+createdAt+elicitationId], *words',
      outbox: 'idempotencyKey, elicitationId, queuedAt',
      settings: 'key',
      connection: 'key',
    });
    const row = { ...jsonApprovalRow('el_old', 1000), verdict: 'pending' as const };
    await v4.table('requests').put(row);
    await v4.table('outbox').put({ idempotencyKey: 'k-1', elicitationId: 'el_old', decision: 'approved', queuedAt: 5 });
    await v4.table('settings').put({ key: 'current', value: { port: 17391 } });
    v4.close();

    const db = openDb({ indexedDB, IDBKeyRange });
    expect(db.verno).toBe(5);
    expect(await getRequest(db, 'el_old')).toEqual(row);
    expect(await db.outbox.toArray()).toEqual([{ idempotencyKey: 'k-1', elicitationId: 'el_old', decision: 'approved', queuedAt: 5 }]);
    expect((await db.settings.get('current'))?.value).toEqual({ port: 17391 });
    expect(await listRules(db)).toEqual([]);
    db.close();
  });

  it('keeps only rules that fit the schema, replacing the whole list', async () => {
    const h = harness();
    await replaceRules(h.db, [RULE, DENY_RULE]);
    expect(await replaceRules(h.db, [DENY_RULE, { ...RULE, id: 'not-a-rule-id' }])).toEqual({ stored: 1, skipped: 1 });
    expect(await listRules(h.db)).toEqual([DENY_RULE]);
  });
});

describe('the background and the hub\'s rules', () => {
  let h: Harness;
  beforeEach(() => {
    h = harness();
  });

  it('stores the welcome\'s rules and replaces them with each `rules.changed` notice', async () => {
    const c = h.controller();
    await h.paired();
    c.start();
    await settle();
    const socket = h.sockets.at(-1)!;
    await h.accept(socket, [], [RULE]);
    expect(await listRules(h.db)).toEqual([RULE]);
    socket.deliver({ method: 'rules.changed', params: { rules: [DENY_RULE] } });
    await settle();
    expect(await listRules(h.db)).toEqual([DENY_RULE]);
    socket.deliver({ method: 'rules.changed', params: { rules: [] } });
    await settle();
    expect(await listRules(h.db)).toEqual([]);
  });

  it('a Rules-view save goes to the hub as a rule.save call and is answered from its answer', async () => {
    const c = h.controller();
    const socket = await h.connect(c, []);
    socket.onSent = (m) => {
      if (m.method === 'rule.save') socket.answer(m.id, { ok: true, id: RULE.id });
    };
    const draft = { effect: 'allow' as const, match: RULE.match, expiresAt: null };
    const reply = await c.handleUiMessage({ type: 'rule.save', rule: draft });
    expect(reply).toEqual({ state: 'answered', ok: true, id: RULE.id });
    expect(socket.sent.filter((m) => m.method === 'rule.save')).toEqual([{ id: expect.any(String), method: 'rule.save', params: { rule: draft } }]);
    // The list changes only with the hub's own list, never from the page's wish.
    expect(await listRules(h.db)).toEqual([]);
  });

  it('an edit names the rule it replaces; a delete and the hub\'s refusal are passed on', async () => {
    const c = h.controller();
    const socket = await h.connect(c, []);
    socket.onSent = (m) => {
      if (m.method === 'rule.save') socket.answer(m.id, { ok: false, issues: [{ path: 'rule.match.tool', rule: 'required', message: 'rule.match.tool: required' }] });
      if (m.method === 'rule.delete') socket.answer(m.id, { removed: true });
    };
    const draft = { effect: 'deny' as const, match: DENY_RULE.match, expiresAt: 10 };
    expect(await c.handleUiMessage({ type: 'rule.save', id: DENY_RULE.id, rule: draft })).toEqual({
      state: 'answered', ok: false, issues: [{ path: 'rule.match.tool', rule: 'required', message: 'rule.match.tool: required' }],
    });
    expect(await c.handleUiMessage({ type: 'rule.delete', id: DENY_RULE.id })).toEqual({ state: 'answered', ok: true });
    expect(socket.sent.filter((m) => m.method.startsWith('rule.'))).toEqual([
      { id: expect.any(String), method: 'rule.save', params: { id: DENY_RULE.id, rule: draft } },
      { id: expect.any(String), method: 'rule.delete', params: { id: DENY_RULE.id } },
    ]);
  });

  it('with no hub a rule change is not sent nor queued; a hub that does not answer in 5 s is said so', async () => {
    const c = h.controller();
    expect(await c.handleUiMessage({ type: 'rule.delete', id: RULE.id })).toEqual({ state: 'not_connected' });
    const socket = await h.connect(c, []);
    const waiting = c.handleUiMessage({ type: 'rule.delete', id: RULE.id });
    await settle();
    expect(socket.sent.filter((m) => m.method === 'rule.delete')).toHaveLength(1);
    h.clock.advance(5000);
    expect(await waiting).toEqual({ state: 'no_answer' });
  });

  it('a rule change with no hub is answered not_connected at once, nothing sent', async () => {
    await h.paired();
    const c = h.controller();
    c.start();
    await settle();
    // A socket is open but its hub has not welcomed it: calls go only to a welcomed hub.
    const socket = h.sockets.at(-1)!;
    socket.open();
    expect(await c.handleUiMessage({ type: 'rule.save', rule: { effect: 'allow', match: RULE.match, expiresAt: null } })).toEqual({ state: 'not_connected' });
    expect(socket.methods()).toEqual(['hello']);
  });

  it('a rule change the hub does not answer within 5 s is answered no_answer; its late answer changes nothing', async () => {
    const c = h.controller();
    const socket = await h.connect(c, []);
    const waiting = c.handleUiMessage({ type: 'rule.save', rule: { effect: 'allow', match: RULE.match, expiresAt: null } });
    await until(() => socket.sent.some((m) => m.method === 'rule.save'), 'the rule.save call');
    h.clock.advance(4999);
    await settle();
    h.clock.advance(1);
    expect(await waiting).toEqual({ state: 'no_answer' });
    socket.answer(socket.sent.find((m) => m.method === 'rule.save')?.id, { ok: true, id: RULE.id });
    await settle();
    expect(await listRules(h.db)).toEqual([]);
    expect(c.connection.connected).toBe(true);
  });

  it('a socket that closes while a rule change waits answers it no_answer at once, not after 5 s', async () => {
    const c = h.controller();
    const socket = await h.connect(c, []);
    let reply: unknown = null;
    void c.handleUiMessage({ type: 'rule.delete', id: RULE.id }).then((r) => (reply = r));
    await until(() => socket.sent.some((m) => m.method === 'rule.delete'), 'the rule.delete call');
    socket.drop();
    await until(() => reply !== null, 'the rule change to be answered');
    expect(reply).toEqual({ state: 'no_answer' });
  });

  it('a rule change the hub could not record (error unavailable) is answered not ok, naming the hub', async () => {
    const c = h.controller();
    const socket = await h.connect(c, []);
    socket.onSent = (m) => {
      if (m.method === 'rule.save') socket.deliver({ id: m.id ?? '', error: { code: 'unavailable', message: 'the hub could not record this change; try again in a moment' } });
    };
    expect(await c.handleUiMessage({ type: 'rule.save', rule: { effect: 'allow', match: RULE.match, expiresAt: null } })).toEqual({
      state: 'answered', ok: false, issues: [{ path: '(hub)', rule: 'unavailable', message: 'the hub could not record this change; try again in a moment' }],
    });
  });

  it('a page message that is not a rule draft is refused, never sent', async () => {
    const c = h.controller();
    const socket = await h.connect(c, []);
    const reply = await c.handleUiMessage({ type: 'rule.save', rule: { effect: 'maybe', match: { tool: 'Bash' }, expiresAt: null } });
    expect(reply).toMatchObject({ state: 'error' });
    expect(socket.sent.some((m) => m.method === 'rule.save')).toBe(false);
  });

  it('a decision with a rule carries it in the decide call, in the outbox, and again after a reconnect', async () => {
    const c = h.controller();
    const socket = await h.connect(c, [permissionView('el_p', h.clock.t - 1000)]);
    const rule = { effect: 'allow' as const, match: RULE.match, expiresAt: null };
    const decided = c.handleUiMessage({ type: 'decide', elicitationId: 'el_p', decision: 'approved', rule });
    await until(() => decideCalls(socket).length > 0, 'the decide call');
    const params = { elicitationId: 'el_p', idempotencyKey: expect.any(String), decision: 'approved', rule };
    expect(decideCalls(socket)).toEqual([{ id: expect.any(String), params }]);
    expect((await h.db.outbox.toArray()).map((e) => e.rule)).toEqual([rule]);
    expect((await getRequest(h.db, 'el_p'))?.outcome).toEqual({ decision: 'approved', action: 'submit', rule });
    socket.drop();
    h.clock.advance(5000);
    expect(await decided).toEqual({ state: 'queued' });
    const next = await h.reconnect([permissionView('el_p', h.clock.t - 1000)]);
    await until(() => decideCalls(next).length > 0, 'the decide call, again');
    expect(decideCalls(next)).toEqual([{ id: expect.any(String), params }]);
    expect(decideCalls(next)[0]?.params.idempotencyKey).toBe(decideCalls(socket)[0]?.params.idempotencyKey);
  });

  it('a request a rule decided at creation is stored decided, named by its rule in the history, and not notified', async () => {
    const c = h.controller();
    const socket = await h.connect(c, []);
    socket.deliver({ method: 'rules.changed', params: { rules: [RULE] } });
    socket.deliver({
      method: 'request.created',
      params: { request: permissionView('el_r', h.clock.t, { status: 'approved', decidedAt: h.clock.t, outcome: { decision: 'approved', action: 'submit', decidedVia: 'rule', ruleId: RULE.id } }) },
    });
    await settle();
    const row = (await getRequest(h.db, 'el_r'))!;
    expect(row).toMatchObject({ status: 'approved', verdict: 'approved', decidedVia: 'rule', ruleId: RULE.id, outcome: { decision: 'approved', action: 'submit' } });
    expect(h.platform.notified).toEqual([]);
    expect(decisionSummary(row, await rulesById(h.db))).toMatchObject({
      label: 'Allowed',
      note: 'Allowed by your rule: Always allow Bash commands starting with "npm test" from claude-code in /home/dev/project until removed · not collected yet',
    });
    socket.deliver({ method: 'rules.changed', params: { rules: [] } });
    await settle();
    expect(decisionSummary(row, await rulesById(h.db)).note).toBe('Allowed by a rule since removed · not collected yet');
    // A request the person must decide is still notified.
    socket.deliver({ method: 'request.created', params: { request: proposalView('el_new', h.clock.t) } });
    await settle();
    expect(h.platform.notified.map((r) => r.elicitationId)).toEqual(['el_new']);
  });
});

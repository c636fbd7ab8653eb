// The person's rules in the background: the Dexie v5 table (the v4 rows kept), the hub's list from the welcome and
// every `rules` frame (validated, replaced whole), Rules-view changes sent as rule.save/rule.delete and answered from
// rule.result within a bound, decisions that carry a rule (sent, queued and replayed with it), and requests a rule
// decided at creation (stored decided, named in the history, never notified).
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { Dexie } from 'dexie';
import { beforeEach, describe, expect, it } from 'vitest';
import type { Rule } from '../../shared/rules.js';
import type { RequestView } from '../../shared/wire-protocol.js';
import { openDb } from '../../extension/db/database.js';
import { getRequest } from '../../extension/db/requests-repo.js';
import { listRules, replaceRules, rulesById } from '../../extension/db/rules-repo.js';
import { decisionSummary } from '../../extension/ui/request-summary.js';
import { harness, type Harness } from './background-harness.js';
import { jsonApprovalRow, proposalView, settle } from './fakes.js';
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

  it('stores the welcome\'s rules and replaces them with each `rules` frame', async () => {
    const c = h.controller();
    await h.paired();
    c.start();
    await settle();
    const socket = h.sockets.at(-1)!;
    await h.accept(socket, [], [RULE]);
    expect(await listRules(h.db)).toEqual([RULE]);
    socket.deliver({ type: 'rules', rules: [DENY_RULE] });
    await settle();
    expect(await listRules(h.db)).toEqual([DENY_RULE]);
    socket.deliver({ type: 'rules', rules: [] });
    await settle();
    expect(await listRules(h.db)).toEqual([]);
  });

  it('a Rules-view save goes to the hub as rule.save and is answered from its rule.result', async () => {
    const c = h.controller();
    const socket = await h.connect(c, []);
    socket.onSent = (m) => {
      if (m.type === 'rule.save') socket.deliver({ type: 'rule.result', changeId: m.changeId, ok: true, id: RULE.id });
    };
    const draft = { effect: 'allow' as const, match: RULE.match, expiresAt: null };
    const reply = await c.handleUiMessage({ type: 'rule.save', rule: draft });
    expect(reply).toEqual({ state: 'answered', ok: true, id: RULE.id });
    expect(socket.sent.filter((m) => m.type === 'rule.save')).toEqual([{ type: 'rule.save', changeId: expect.any(String), rule: draft }]);
    // The list changes only with the hub's own list, never from the page's wish.
    expect(await listRules(h.db)).toEqual([]);
  });

  it('an edit names the rule it replaces; a delete and the hub\'s refusal are passed on', async () => {
    const c = h.controller();
    const socket = await h.connect(c, []);
    socket.onSent = (m) => {
      if (m.type === 'rule.save') socket.deliver({ type: 'rule.result', changeId: m.changeId, ok: false, issues: [{ path: 'rule.match.tool', rule: 'required', message: 'rule.match.tool: required' }] });
      if (m.type === 'rule.delete') socket.deliver({ type: 'rule.result', changeId: m.changeId, ok: true });
    };
    const draft = { effect: 'deny' as const, match: DENY_RULE.match, expiresAt: 10 };
    expect(await c.handleUiMessage({ type: 'rule.save', id: DENY_RULE.id, rule: draft })).toEqual({
      state: 'answered', ok: false, issues: [{ path: 'rule.match.tool', rule: 'required', message: 'rule.match.tool: required' }],
    });
    expect(await c.handleUiMessage({ type: 'rule.delete', id: DENY_RULE.id })).toEqual({ state: 'answered', ok: true });
    expect(socket.sent.filter((m) => m.type.startsWith('rule.'))).toEqual([
      { type: 'rule.save', changeId: expect.any(String), id: DENY_RULE.id, rule: draft },
      { type: 'rule.delete', changeId: expect.any(String), id: DENY_RULE.id },
    ]);
  });

  it('with no hub a rule change is not sent nor queued; a hub that does not answer in 5 s is said so', async () => {
    const c = h.controller();
    expect(await c.handleUiMessage({ type: 'rule.delete', id: RULE.id })).toEqual({ state: 'not_connected' });
    const socket = await h.connect(c, []);
    const waiting = c.handleUiMessage({ type: 'rule.delete', id: RULE.id });
    await settle();
    expect(socket.sent.filter((m) => m.type === 'rule.delete')).toHaveLength(1);
    h.clock.advance(5000);
    expect(await waiting).toEqual({ state: 'no_answer' });
  });

  it('a page message that is not a rule draft is refused, never sent', async () => {
    const c = h.controller();
    const socket = await h.connect(c, []);
    const reply = await c.handleUiMessage({ type: 'rule.save', rule: { effect: 'maybe', match: { tool: 'Bash' }, expiresAt: null } });
    expect(reply).toMatchObject({ state: 'error' });
    expect(socket.sent.some((m) => m.type === 'rule.save')).toBe(false);
  });

  it('a decision with a rule carries it in the decide frame, in the outbox, and again after a reconnect', async () => {
    const c = h.controller();
    const socket = await h.connect(c, [permissionView('el_p', h.clock.t - 1000)]);
    const rule = { effect: 'allow' as const, match: RULE.match, expiresAt: null };
    const decided = c.handleUiMessage({ type: 'decide', elicitationId: 'el_p', decision: 'approved', rule });
    await settle();
    const frame = { type: 'decide', elicitationId: 'el_p', idempotencyKey: expect.any(String), decision: 'approved', rule };
    expect(socket.sent.filter((m) => m.type === 'decide')).toEqual([frame]);
    expect((await h.db.outbox.toArray()).map((e) => e.rule)).toEqual([rule]);
    expect((await getRequest(h.db, 'el_p'))?.outcome).toEqual({ decision: 'approved', action: 'submit', rule });
    socket.drop();
    h.clock.advance(5000);
    expect(await decided).toEqual({ state: 'queued' });
    const next = await h.reconnect([permissionView('el_p', h.clock.t - 1000)]);
    expect(next.sent.filter((m) => m.type === 'decide')).toEqual([frame]);
  });

  it('a request a rule decided at creation is stored decided, named by its rule in the history, and not notified', async () => {
    const c = h.controller();
    const socket = await h.connect(c, []);
    socket.deliver({ type: 'rules', rules: [RULE] });
    socket.deliver({
      type: 'request.created',
      request: permissionView('el_r', h.clock.t, { status: 'approved', decidedAt: h.clock.t, outcome: { decision: 'approved', action: 'submit', decidedVia: 'rule', ruleId: RULE.id } }),
    });
    await settle();
    const row = (await getRequest(h.db, 'el_r'))!;
    expect(row).toMatchObject({ status: 'approved', verdict: 'approved', decidedVia: 'rule', ruleId: RULE.id, outcome: { decision: 'approved', action: 'submit' } });
    expect(h.platform.notified).toEqual([]);
    expect(decisionSummary(row, await rulesById(h.db))).toMatchObject({
      label: 'Allowed',
      note: 'Allowed by your rule: Always allow Bash commands starting with "npm test" from claude-code in /home/dev/project until removed · not collected yet',
    });
    socket.deliver({ type: 'rules', rules: [] });
    await settle();
    expect(decisionSummary(row, await rulesById(h.db)).note).toBe('Allowed by a rule since removed · not collected yet');
    // A request the person must decide is still notified.
    socket.deliver({ type: 'request.created', request: proposalView('el_new', h.clock.t) });
    await settle();
    expect(h.platform.notified.map((r) => r.elicitationId)).toEqual(['el_new']);
  });
});

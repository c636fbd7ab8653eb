// The hub's engine in process, with the real journal on a temp dir and a fault seam on its fsync.
import { mkdtempSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApprovalEngine } from '../../server/approvals/approval-engine.js';
import { checkApprovalInput } from '../../shared/approval-input.js';
import type { Answer } from '../../shared/peer-calls.js';
import type { DecideParams, DecisionAnswer } from '../../shared/wire-fields.js';
import { FaultIo } from '../helpers/fault-io.js';

const DAY_MS = 86_400_000;
let dir: string;
let engines: ApprovalEngine[];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'elicitly-engine-'));
  engines = [];
});
afterEach(async () => {
  await Promise.allSettled(engines.map((e) => e.close()));
  rmSync(dir, { recursive: true, force: true });
});

async function open(options: { io?: FaultIo; now?: () => number; purgeEveryMs?: number; retentionMs?: number; maxPending?: number } = {}): Promise<ApprovalEngine> {
  const engine = await ApprovalEngine.open({ dir, retentionMs: options.retentionMs ?? 7 * DAY_MS, io: options.io, now: options.now, purgeEveryMs: options.purgeEveryMs, maxPending: options.maxPending });
  engines.push(engine);
  return engine;
}

function request(message: string) {
  const checked = checkApprovalInput({ message, context: { message } });
  if (!checked.ok) throw new Error('fixture invalid');
  return checked.request;
}

async function create(engine: ApprovalEngine, id: string, timeoutMs = 3_600_000): Promise<void> {
  const created = await engine.call('create', { id, request: request(id), renderedTemplate: null, timeoutMs, requester: { client: 'test', pid: 1 } }, null);
  expect(created.ok).toBe(true);
}

const decision = (id: string, key: string, value: 'approved' | 'rejected' = 'approved'): DecideParams => ({ elicitationId: id, idempotencyKey: key, decision: value });

/**
 * Lets every chain the engine started run as far as it can without the held fsync: to its end from memory, or to the
 * hold. Every engine write ends in an fsync the hold keeps, so what is left is promise turns and, at most, one file
 * operation (a write, a close) queued before this one on the same thread pool.
 */
async function quiesce(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
  await writeFile(join(dir, 'quiesce-probe'), 'x');
  for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
}

/** Whether a promise has settled once the engine had the chance (`quiesce`; the hold keeps fsync from finishing meanwhile). */
async function settledSoon(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void promise.then(() => (settled = true), () => (settled = true));
  await quiesce();
  return settled;
}

describe('the engine answers only for what is on disk', () => {
  it('a repeated decision while the first fsync is slow gets no ok before the decision is on disk', async () => {
    const io = new FaultIo();
    const engine = await open({ io });
    await create(engine, 'el_slow');
    io.hold();
    const first = engine.decide(decision('el_slow', 'k1'), 'extension');
    await io.blocked();
    const repeat = engine.decide(decision('el_slow', 'k1'), 'extension');
    const other = engine.decide(decision('el_slow', 'k2', 'rejected'), 'extension');
    expect(await settledSoon(repeat)).toBe(false);
    expect(await settledSoon(first)).toBe(false);
    expect(await settledSoon(other)).toBe(false);
    // Nothing durable yet, so nothing visible either.
    expect(await engine.call('status', { id: 'el_slow' }, null)).toEqual({ ok: true, value: { status: 'pending' } });

    io.release();
    const answers: Answer<DecisionAnswer>[] = await Promise.all([first, repeat, other]);
    // Answers carry no ids now (the call's id does): they are read in the order the three decisions were made (k1, k1, k2).
    expect(answers).toEqual([
      { ok: true, value: { ok: true, status: 'approved' } },
      { ok: true, value: { ok: true, status: 'approved' } },
      { ok: true, value: { ok: false, reason: 'already_decided', status: 'approved' } },
    ]);
    await engine.close();
    const reopened = await open();
    expect(await reopened.call('status', { id: 'el_slow' }, null)).toEqual({ ok: true, value: { status: 'approved' } });
  });

  it('a store that fails answers unavailable (never ok from memory) and tells its owner once', async () => {
    const io = new FaultIo();
    const engine = await open({ io });
    await create(engine, 'el_ok');
    const failures: string[] = [];
    engine.onFailure((error) => failures.push(error.message));
    io.fail();
    const created = await engine.call('create', { id: 'el_lost', request: request('lost'), renderedTemplate: null, timeoutMs: 60_000, requester: { client: null, pid: 1 } }, null);
    expect(created).toMatchObject({ ok: false, error: { code: 'unavailable' } });
    // A decision it cannot record is an error of the call (the outbox keeps it), not a domain refusal.
    expect(await engine.decide(decision('el_ok', 'k'), 'extension')).toMatchObject({ ok: false, error: { code: 'unavailable' } });
    expect(await engine.call('status', { id: 'el_ok' }, null)).toMatchObject({ ok: false, error: { code: 'unavailable' } });
    expect(failures).toEqual(['EIO: i/o error, fsync']);
  });

  it('close lets a change already under way finish, then refuses new ones', async () => {
    const io = new FaultIo();
    const engine = await open({ io });
    await create(engine, 'el_drain');
    io.hold();
    const deciding = engine.decide(decision('el_drain', 'k'), 'extension');
    await io.blocked();
    const closing = engine.close();
    expect(await engine.decide(decision('el_drain', 'k2'), 'extension')).toMatchObject({ ok: false, error: { code: 'unavailable' } });
    expect(await settledSoon(closing)).toBe(false);
    io.release();
    expect(await deciding).toEqual({ ok: true, value: { ok: true, status: 'approved' } });
    await closing;
    const reopened = await open();
    expect(await reopened.call('status', { id: 'el_drain' }, null)).toEqual({ ok: true, value: { status: 'approved' } });
  });
});

describe('one availability guard', () => {
  it('a closed engine refuses every call, whichever it is, the same way', async () => {
    const engine = await open();
    await create(engine, 'el_open');
    await engine.close();
    const answers: Answer<unknown>[] = await Promise.all([
      engine.call('create', { id: 'el_late', request: request('late'), renderedTemplate: null, timeoutMs: 60_000, requester: { client: null, pid: 1 } }, null),
      engine.call('status', { id: 'el_open' }, null),
      engine.call('await', { id: 'el_open', waitMs: 1000 }, null),
      engine.call('result', { id: 'el_open' }, null),
      engine.call('cancel', { id: 'el_open' }, null),
      engine.call('view', { id: 'el_open' }, null),
      engine.call('rules', {}, null),
      // A decision from any surface (protocol 9: `decide` is the engine's own method, `appDecide` is gone).
      engine.decide({ elicitationId: 'el_open', idempotencyKey: 'k', decision: 'approved' }, 'app'),
      engine.decide({ elicitationId: 'el_open', idempotencyKey: 'k', decision: 'approved' }, 'extension'),
    ]);
    for (const answer of answers) expect(answer).toEqual({ ok: false, error: { code: 'unavailable', message: expect.stringContaining('it is shutting down') } });
    // The rule changes (the call `ruleRemove` is now `deleteRule`) answer in their own terms, and refuse just as well.
    expect(await engine.deleteRule('rule_0123456789abcdef')).toBe('unavailable');
    expect(await engine.saveRule({ effect: 'allow', match: { tool: 'Bash' }, expiresAt: null })).toEqual({ ok: false, reason: 'unavailable', issues: [] });
  });
});

describe('the engine keeps its own house', () => {
  it('a long-lived hub purges ended requests past retention on its timer, not only at open', async () => {
    let now = 1_000_000;
    const engine = await open({ now: () => now, purgeEveryMs: 20, retentionMs: DAY_MS });
    await create(engine, 'el_old');
    await create(engine, 'el_live');
    expect(await engine.decide(decision('el_old', 'k'), 'extension')).toMatchObject({ ok: true, value: { ok: true } });
    expect((await engine.call('result', { id: 'el_old' }, null)).ok).toBe(true);
    now += 2 * DAY_MS;
    // The purge has no event of its own: its timer (every 20 ms here) is polled for, bounded.
    await expect.poll(() => engine.call('status', { id: 'el_old' }, null), { timeout: 2000, interval: 10 }).toMatchObject({ ok: false, error: { code: 'not_found' } });
    // Pending requests are never purged, however old (this one is past its deadline, so it reads as expired).
    expect(await engine.call('status', { id: 'el_live' }, null)).toMatchObject({ ok: true });
  });

  it('caps the pending requests it keeps, naming the limit; a decision makes room again', async () => {
    const engine = await open({ maxPending: 3 });
    for (const id of ['el_p1', 'el_p2', 'el_p3']) await create(engine, id);
    const refused = await engine.call('create', { id: 'el_p4', request: request('one too many'), renderedTemplate: null, timeoutMs: 60_000, requester: { client: null, pid: 1 } }, null);
    expect(refused).toMatchObject({ ok: false, error: { code: 'limit', message: expect.stringContaining('the most it keeps (3)') } });
    expect(await engine.call('status', { id: 'el_p4' }, null)).toMatchObject({ ok: false, error: { code: 'not_found' } });
    expect(await engine.decide(decision('el_p1', 'k'), 'extension')).toMatchObject({ ok: true, value: { ok: true } });
    await create(engine, 'el_p4');
    // A reopened hub counts what is pending on disk, not from zero.
    await engine.close();
    const reopened = await open({ maxPending: 3 });
    expect(await reopened.call('create', { id: 'el_p5', request: request('again'), renderedTemplate: null, timeoutMs: 60_000, requester: { client: null, pid: 1 } }, null)).toMatchObject({ ok: false, error: { code: 'limit' } });
  });

  it('an aborted await stops waiting at once', async () => {
    const engine = await open();
    await create(engine, 'el_wait');
    const controller = new AbortController();
    const started = Date.now();
    const waiting = engine.call('await', { id: 'el_wait', waitMs: 60_000 }, null, controller.signal);
    // Aborted once the await is parked (it parks without I/O), so the abort is heard by a waiting call, not checked first.
    await quiesce();
    controller.abort();
    expect(await waiting).toEqual({ ok: true, value: { status: 'pending' } });
    expect(Date.now() - started).toBeLessThan(1000);
  });
});

describe('every create is held to the same caps', () => {
  const form = (description: string) => ({ kind: 'form' as const, message: 'Release?', requestedSchema: { type: 'object' as const, properties: { v: { type: 'string' as const, description } } }, timeoutSeconds: 60 });

  it('finding 7: an 8 MB form ask is refused by the hub, naming the field and the rule, and nothing is stored', async () => {
    const engine = await open();
    const refused = await engine.call('create', { id: 'el_big', request: form('x'.repeat(8 * 1024 * 1024)), renderedTemplate: null, timeoutMs: 60_000, requester: { client: null, pid: 1 } }, null);
    expect(refused).toMatchObject({ ok: false, error: { code: 'invalid', message: expect.stringMatching(/too_large.*requestedSchema: .*524288 bytes/) } });
    expect(await engine.call('status', { id: 'el_big' }, null)).toMatchObject({ ok: false, error: { code: 'not_found' } });
    // Just under the cap is stored.
    expect((await engine.call('create', { id: 'el_ok', request: form('x'.repeat(500 * 1024)), renderedTemplate: null, timeoutMs: 60_000, requester: { client: null, pid: 1 } }, null)).ok).toBe(true);
  });

  it('text that is not Unicode (a lone surrogate) is refused at every door, naming the field, and the hub goes on', async () => {
    const engine = await open();
    const lone = JSON.parse('"a \\ud800 b"') as string;
    const refused = await engine.call('create', { id: 'el_lone', request: { ...form('x'), message: lone }, renderedTemplate: null, timeoutMs: 60_000, requester: { client: null, pid: 1 } }, null);
    expect(refused).toMatchObject({ ok: false, error: { code: 'invalid', message: expect.stringMatching(/unicode.*request\.message: holds a lone UTF-16 surrogate/) } });
    expect((await engine.call('create', { id: 'el_fine', request: form('x'), renderedTemplate: null, timeoutMs: 60_000, requester: { client: null, pid: 1 } }, null)).ok).toBe(true);
    const decided = await engine.decide({ elicitationId: 'el_fine', idempotencyKey: 'k', decision: 'approved', values: { v: lone } }, 'extension');
    expect(decided).toMatchObject({ ok: true, value: { ok: false, reason: 'invalid', issues: [{ path: 'values.v', rule: 'unicode' }] } });
    const rule = await engine.saveRule({ effect: 'allow', match: { tool: 'Bash', commandPrefix: lone }, expiresAt: null });
    expect(rule).toMatchObject({ ok: false, reason: 'invalid', issues: [{ path: 'rule.match.commandPrefix', rule: 'unicode' }] });
    // Nothing of it reached the ledger, which still hashes and signs as before.
    expect(await engine.decide({ elicitationId: 'el_fine', idempotencyKey: 'k2', decision: 'approved', values: { v: 'ok' } }, 'extension')).toMatchObject({ ok: true, value: { ok: true } });
    const result = await engine.call('result', { id: 'el_fine' }, null);
    expect(result.ok).toBe(true);
  });

  it('finding 9: parallel creates past the pending cap: exactly the cap succeed, the rest are refused as limit', async () => {
    const io = new FaultIo();
    const engine = await open({ io, maxPending: 5 });
    // Every write waits on the hold, so all twelve creates are in flight together, as parallel callers are.
    io.hold();
    const creates = Array.from({ length: 12 }, (_, i) =>
      engine.call('create', { id: `el_par${i}`, request: request(`par ${i}`), renderedTemplate: null, timeoutMs: 60_000, requester: { client: null, pid: 1 } }, null),
    );
    await io.blocked();
    // Each create has passed (or failed) the cap check by then: the check comes before its write.
    await quiesce();
    io.release();
    const answers = await Promise.all(creates);
    expect(answers.filter((a) => a.ok)).toHaveLength(5);
    const refused = answers.filter((a) => !a.ok);
    expect(refused).toHaveLength(7);
    for (const a of refused) expect(a).toMatchObject({ ok: false, error: { code: 'limit', message: expect.stringContaining('the most it keeps (5)') } });
    expect(engine.pendingCount()).toBe(5);
    // Refused creates held no slot: a decision frees exactly one.
    const first = answers.findIndex((a) => a.ok);
    expect(await engine.decide(decision(`el_par${first}`, 'k'), 'extension')).toMatchObject({ ok: true, value: { ok: true } });
    expect((await engine.call('create', { id: 'el_after', request: request('after'), renderedTemplate: null, timeoutMs: 60_000, requester: { client: null, pid: 1 } }, null)).ok).toBe(true);
    expect(await engine.call('create', { id: 'el_over', request: request('over'), renderedTemplate: null, timeoutMs: 60_000, requester: { client: null, pid: 1 } }, null)).toMatchObject({ ok: false, error: { code: 'limit' } });
  });

  it('finding 9: a create refused for its size holds no slot under the cap', async () => {
    const engine = await open({ maxPending: 1 });
    const big = await engine.call('create', { id: 'el_big', request: form('x'.repeat(600 * 1024)), renderedTemplate: null, timeoutMs: 60_000, requester: { client: null, pid: 1 } }, null);
    expect(big).toMatchObject({ ok: false, error: { code: 'invalid' } });
    await create(engine, 'el_one');
  });
});

describe('where a request may be decided is enforced by the hub', () => {
  const params = (id: string, surfaces?: ('extension' | 'app')[]) => ({ id, request: request(id), renderedTemplate: null, timeoutMs: 60_000, requester: { client: null, pid: 1 }, ...(surfaces ? { surfaces } : {}) });
  const appDecision = (id: string) => ({ elicitationId: id, idempotencyKey: `app-${id}`, decision: 'approved' as const });

  it('finding 13: an app decision for a request created with surfaces ["extension"] is refused as not_in_app; it stays pending', async () => {
    const engine = await open();
    expect((await engine.call('create', params('el_ext', ['extension']), null)).ok).toBe(true);
    expect(await engine.decide(appDecision('el_ext'), 'app')).toMatchObject({ ok: false, error: { code: 'not_in_app', message: expect.stringContaining('surfaces ["extension"]') } });
    expect(await engine.call('status', { id: 'el_ext' }, null)).toEqual({ ok: true, value: { status: 'pending' } });
    // Still so after a restart: the surfaces are stored with the request.
    await engine.close();
    const reopened = await open();
    expect(await reopened.decide(appDecision('el_ext'), 'app')).toMatchObject({ ok: false, error: { code: 'not_in_app' } });
    // The extension decides it as ever.
    expect(await reopened.decide(decision('el_ext', 'k'), 'extension')).toEqual({ ok: true, value: { ok: true, status: 'approved' } });
  });

  it('control for finding 13: with the app among its surfaces (or none given, as before), an app decision decides it', async () => {
    const engine = await open();
    for (const [id, surfaces] of [['el_both', ['extension', 'app']], ['el_default', undefined]] as const) {
      expect((await engine.call('create', params(id, surfaces ? [...surfaces] : undefined), null)).ok).toBe(true);
      expect(await engine.decide(appDecision(id), 'app')).toEqual({ ok: true, value: { ok: true, status: 'approved' } });
      expect(await engine.call('view', { id }, null)).toMatchObject({ ok: true, value: { status: 'approved', outcome: { decidedVia: 'app' } } });
    }
  });
});

describe('recentViews: a device’s history', () => {
  it('the last n ended requests, newest first, with their effective status; pending ones are not history', async () => {
    let clock = 1_000_000;
    const engine = await open({ now: () => clock });
    for (const id of ['el_a', 'el_b', 'el_c', 'el_d']) await create(engine, id);
    await create(engine, 'el_short', 1000);
    await create(engine, 'el_waiting');
    clock += 10;
    expect(await engine.decide(decision('el_b', 'k'), 'phone')).toMatchObject({ ok: true, value: { ok: true } });
    clock += 10;
    expect(await engine.decide(decision('el_a', 'k', 'rejected'), 'extension')).toMatchObject({ ok: true, value: { ok: true } });
    clock += 10;
    expect((await engine.call('cancel', { id: 'el_c' }, null)).ok).toBe(true);
    // Past its deadline but not swept yet: expired at its deadline, which is after the three above.
    clock += 2000;
    expect(engine.recentViews(10).map((v) => [v.elicitationId, v.status])).toEqual([
      ['el_short', 'expired'],
      ['el_c', 'canceled'],
      ['el_a', 'rejected'],
      ['el_b', 'approved'],
    ]);
    expect(engine.recentViews(2).map((v) => v.elicitationId)).toEqual(['el_short', 'el_c']);
    expect(engine.recentViews(10).find((v) => v.elicitationId === 'el_b')?.outcome?.decidedVia).toBe('phone');
  });
});

describe('requests bound to a connection, and requests of an exported key', () => {
  const params = (id: string, fields: { bound?: true } = {}) => ({ id, request: request(id), renderedTemplate: null, timeoutMs: 60_000, requester: { client: null, pid: 1 }, ...fields });

  it('a hub that starts withdraws the bound requests a gone hub left waiting; decided and unbound ones are kept', async () => {
    const engine = await open();
    for (const [id, fields] of [['el_b1', { bound: true }], ['el_b2', { bound: true }], ['el_plain', {}]] as const) {
      expect(await engine.call('create', params(id, fields), null)).toMatchObject({ ok: true, value: { status: 'pending' } });
    }
    expect(await engine.decide(decision('el_b2', 'k'), 'extension')).toMatchObject({ ok: true, value: { ok: true } });
    await engine.close();
    const reopened = await open();
    expect(await reopened.call('status', { id: 'el_b1' }, null)).toEqual({ ok: true, value: { status: 'canceled' } });
    expect(await reopened.call('status', { id: 'el_b2' }, null)).toEqual({ ok: true, value: { status: 'approved' } });
    expect(await reopened.call('status', { id: 'el_plain' }, null)).toEqual({ ok: true, value: { status: 'pending' } });
    expect(reopened.pendingCount()).toBe(1);
  });

  it('withdrawBound withdraws only what still waits', async () => {
    const engine = await open();
    await engine.call('create', params('el_w1', { bound: true }), null);
    await engine.call('create', params('el_w2', { bound: true }), null);
    expect(await engine.decide(decision('el_w2', 'k', 'rejected'), 'phone')).toMatchObject({ ok: true, value: { ok: true } });
    await engine.withdrawBound(['el_w1', 'el_w2', 'el_unknown']);
    expect(await engine.call('status', { id: 'el_w1' }, null)).toEqual({ ok: true, value: { status: 'canceled' } });
    expect(await engine.call('status', { id: 'el_w2' }, null)).toEqual({ ok: true, value: { status: 'rejected' } });
  });

  it('a key\'s requests are its own: another key reads them as not found and cannot take their id; this computer sees all', async () => {
    const mine = 'k_0123456789abcdef';
    const theirs = 'k_fedcba9876543210';
    const engine = await open();
    expect(await engine.call('create', params('el_mine'), mine)).toMatchObject({ ok: true });
    for (const method of ['status', 'result', 'cancel', 'view'] as const) {
      expect(await engine.call(method, { id: 'el_mine' }, theirs), method).toMatchObject({ ok: false, error: { code: 'not_found' } });
    }
    expect(await engine.call('await', { id: 'el_mine', waitMs: 1 }, theirs)).toMatchObject({ ok: false, error: { code: 'not_found' } });
    // A retry of the create by its own key answers the stored request; another key's create of that id is refused.
    expect(await engine.call('create', params('el_mine'), mine)).toMatchObject({ ok: true, value: { elicitationId: 'el_mine', status: 'pending' } });
    expect(await engine.call('create', params('el_mine'), theirs)).toMatchObject({ ok: false, error: { code: 'invalid', message: expect.stringContaining('taken') } });
    expect(engine.pendingCount(mine)).toBe(1);
    expect(engine.pendingCount(theirs)).toBe(0);
    expect(await engine.call('status', { id: 'el_mine' }, mine)).toEqual({ ok: true, value: { status: 'pending' } });
    expect(await engine.call('status', { id: 'el_mine' }, null)).toEqual({ ok: true, value: { status: 'pending' } });
    expect(engine.pendingCount()).toBe(1);
  });
});

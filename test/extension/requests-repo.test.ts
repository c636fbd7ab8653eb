import { Dexie } from 'dexie';
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { openDb, type ElicitlyDb } from '../../extension/db/database.js';
import { queueDecision } from '../../extension/db/outbox-repo.js';
import { historyAgents, historyPage, type HistoryCursor, type HistoryQuery } from '../../extension/db/history-queries.js';
import { applyWelcome, getRequest, pendingRequests, pruneHistory, sweepExpired, upsertView } from '../../extension/db/requests-repo.js';
import { rowFromView, type RequestRow } from '../../kit/rows/rows.js';
import type { Status } from '../../shared/lifecycle.js';
import type { RequestView } from '../../shared/wire-protocol.js';
import { BackgroundController } from '../../extension/background/background-controller.js';
import { decideCalls, harness } from './background-harness.js';
import { FakeSocket, proposalView, until } from './fakes.js';

const T0 = 1_700_000_000_000;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

let factory: IDBFactory;
let db: ElicitlyDb;

beforeEach(() => {
  factory = new IDBFactory();
  db = openDb({ indexedDB: factory, IDBKeyRange });
});
afterEach(() => db.close());

function view(id: string, createdAt: number, overrides: Partial<RequestView> = {}): RequestView {
  const message = overrides.message ?? `Request ${id}`;
  const kind = overrides.kind ?? 'approval';
  return {
    elicitationId: id,
    kind,
    status: 'pending',
    message,
    createdAt,
    expiresAt: createdAt + HOUR,
    requester: { client: 'claude-code', pid: 4242 },
    request: kind === 'proposal'
      ? { ...proposalView(id, createdAt).request, message }
      : { kind: 'approval', message, mode: 'json', context: null, requestedSchema: null, labels: { ok: 'Approve', cancel: 'Reject' }, timeoutSeconds: 3600 },
    renderedTemplate: null,
    ...overrides,
  };
}

function row(id: string, createdAt: number, overrides: Partial<RequestView> = {}): RequestRow {
  return rowFromView(view(id, createdAt, overrides));
}

async function seed(rows: RequestRow[]): Promise<void> {
  await db.requests.bulkPut(rows);
}

/** Every page of a query, following `next` until it is null. */
async function allPages(query: HistoryQuery, limit: number): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let cursor: HistoryCursor | undefined;
  let pages = 0;
  for (;;) {
    const page = await historyPage(db, query, cursor, limit);
    pages++;
    ids.push(...page.rows.map((r) => r.elicitationId));
    if (!page.next) break;
    cursor = page.next;
    if (pages > 10_000) throw new Error('paging does not end');
  }
  return { ids, pages };
}

function newestFirst(rows: RequestRow[]): string[] {
  return [...rows]
    .sort((a, b) => b.createdAt - a.createdAt || (a.elicitationId < b.elicitationId ? 1 : -1))
    .map((r) => r.elicitationId);
}

describe('upsertView', () => {
  it('is true only the first time a request is seen, and keeps the reviewer side on a re-sent view', async () => {
    expect((await upsertView(db, view('a', T0))).isNew).toBe(true);
    await db.requests.update('a', { delivery: 'queued', outcome: { decision: 'approved' } });
    expect((await upsertView(db, view('a', T0))).isNew).toBe(false);
    const stored = await getRequest(db, 'a');
    expect(stored).toMatchObject({ elicitationId: 'a', delivery: 'queued', outcome: { decision: 'approved' }, words: ['request', 'a'] });
  });
});

describe('applyWelcome', () => {
  it('cancels pending rows the hub no longer lists, expires those past deadline, keeps queued decisions', async () => {
    const now = T0 + 2 * HOUR;
    await seed([
      row('listed', now - 60_000, { expiresAt: now + HOUR }),
      row('withdrawn', now - 60_000, { expiresAt: now + HOUR }),
      row('late', T0, { expiresAt: T0 + HOUR }),
      row('queued', now - 60_000, { expiresAt: now + HOUR }),
      row('done', T0, { status: 'approved', decidedAt: T0 + 1000 }),
    ]);
    await db.outbox.put({ idempotencyKey: 'k1', elicitationId: 'queued', decision: 'approved', queuedAt: now - 1000 });

    const { added, skipped } = await applyWelcome(db, [view('listed', now - 60_000, { expiresAt: now + HOUR }), view('fresh', now - 1000)], now);

    expect(added.map((r) => r.elicitationId)).toEqual(['fresh']);
    expect(skipped).toEqual([]);
    expect(await getRequest(db, 'listed')).toMatchObject({ status: 'pending' });
    expect(await getRequest(db, 'fresh')).toMatchObject({ status: 'pending' });
    expect(await getRequest(db, 'withdrawn')).toMatchObject({ status: 'canceled', decidedAt: now });
    expect(await getRequest(db, 'late')).toMatchObject({ status: 'expired', decidedAt: now });
    expect(await getRequest(db, 'queued')).toMatchObject({ status: 'pending' });
    expect(await getRequest(db, 'done')).toMatchObject({ status: 'approved', decidedAt: T0 + 1000 });
  });

  it('is one transaction: a decision queued while a welcome is applied is either kept by it or refused, never orphaned', async () => {
    const now = T0 + 2 * HOUR;
    // Gone from the hub while we were away; a page decides it at the very moment the welcome arrives.
    await seed([row('left', now - 60_000, { expiresAt: now + HOUR })]);
    const entry = { idempotencyKey: 'k1', elicitationId: 'left', decision: 'approved' as const, queuedAt: now };
    const [, queued] = await Promise.all([applyWelcome(db, [], now), queueDecision(db, entry, null)]);
    const inOutbox = (await db.outbox.count()) === 1;
    const stored = await getRequest(db, 'left');
    // Either the decision got in first (the welcome keeps the row for the hub's answer) or the welcome did (the row is
    // withdrawn and the decision is not queued); an outbox entry for a row marked withdrawn is the torn state.
    expect({ inOutbox, status: stored?.status, queued: queued.state }).toEqual(
      inOutbox ? { inOutbox, status: 'pending', queued: 'queued' } : { inOutbox, status: 'canceled', queued: 'not_pending' },
    );
  });
});

describe('a stored request', () => {
  it('is read with the shared request schema: a row whose request does not fit is skipped', async () => {
    const good = row('good', T0);
    const bad = { ...row('bad', T0 + 1), request: { ...good.request, labels: { ok: '' } } };
    await db.requests.bulkPut([good, bad as unknown as RequestRow]);
    expect(await getRequest(db, 'bad')).toBeUndefined();
    expect((await pendingRequests(db)).map((r) => r.elicitationId)).toEqual(['good']);
    const wrongKind = { ...row('wrong', T0 + 2), request: { kind: 'survey', message: 'x' } };
    await db.requests.put(wrongKind as unknown as RequestRow);
    expect(await getRequest(db, 'wrong')).toBeUndefined();
  });
});

describe('sweepExpired', () => {
  it('expires pending rows past their deadline at the deadline, and nothing else', async () => {
    const now = T0 + 2 * HOUR;
    await seed([
      row('due', T0, { expiresAt: T0 + HOUR }),
      row('live', now - 1000, { expiresAt: now + HOUR }),
      row('decided', T0, { status: 'rejected', decidedAt: T0 + 5 }),
    ]);
    expect(await sweepExpired(db, now)).toBe(1);
    expect(await getRequest(db, 'due')).toMatchObject({ status: 'expired', decidedAt: T0 + HOUR });
    expect(await getRequest(db, 'live')).toMatchObject({ status: 'pending' });
    expect(await getRequest(db, 'decided')).toMatchObject({ status: 'rejected', decidedAt: T0 + 5 });
    expect((await pendingRequests(db, now)).map((r) => r.elicitationId)).toEqual(['live']);
    expect(await sweepExpired(db, now)).toBe(0);
  });
});

describe('pruneHistory', () => {
  it('forgets finished rows older than the retention and keeps pending and recent ones', async () => {
    const now = T0 + 100 * DAY;
    await seed([
      row('old-done', T0, { status: 'approved', decidedAt: T0 }),
      row('old-expired', T0 + DAY, { status: 'expired' }),
      row('old-pending', T0, { expiresAt: now + HOUR }),
      row('recent-done', now - 5 * DAY, { status: 'rejected' }),
      row('at-cutoff', now - 30 * DAY, { status: 'canceled' }),
    ]);
    expect(await pruneHistory(db, 30, now)).toBe(2);
    const left = (await db.requests.toArray()).map((r) => r.elicitationId).sort();
    expect(left).toEqual(['at-cutoff', 'old-pending', 'recent-done']);
  });
});

describe('historyPage', () => {
  const statuses: Status[] = ['pending', 'approved', 'rejected', 'canceled', 'expired', 'consumed'];
  const agents = ['claude-code', 'cursor', 'constructor'];

  /** 230 rows, ten of them sharing one timestamp, ids not in time order, statuses, kinds and agents interleaved. */
  function many(): RequestRow[] {
    const rows: RequestRow[] = [];
    for (let i = 0; i < 230; i++) {
      const createdAt = i >= 100 && i < 110 ? T0 + 100 * 1000 : T0 + i * 1000;
      const id = `r-${String((i * 37) % 230).padStart(3, '0')}`;
      rows.push(row(id, createdAt, {
        status: statuses[i % statuses.length],
        kind: i % 4 === 0 ? 'proposal' : 'approval',
        message: i % 5 === 0 ? `Deploy service ${i} to production` : `Update record ${i}`,
        requester: { client: agents[i % 7 % 3]!, pid: 4242 },
      }));
    }
    return rows;
  }

  it('pages newest first by keyset: over ties of createdAt no row is skipped or repeated', async () => {
    const rows = many();
    await seed(rows);
    const first = await historyPage(db, {}, undefined, 10);
    expect(first.rows.map((r) => r.elicitationId)).toEqual(newestFirst(rows).slice(0, 10));
    for (const limit of [1, 7, 10, 25, 50]) {
      const { ids, pages } = await allPages({}, limit);
      expect(ids).toEqual(newestFirst(rows));
      expect(new Set(ids).size).toBe(230);
      expect(pages).toBe(Math.ceil(230 / limit));
    }
  });

  it('filters by kind, decision and agent in every combination, each a keyset range on its own index', async () => {
    const rows = many();
    await seed(rows);
    const cases: [HistoryQuery, (r: RequestRow) => boolean][] = [
      [{ verdict: 'approved' }, (r) => r.status === 'approved'],
      [{ verdict: 'withdrawn' }, (r) => r.status === 'canceled'],
      // Consumed with no decision seen here: decided elsewhere.
      [{ verdict: 'unknown' }, (r) => r.status === 'consumed'],
      [{ kind: 'proposal' }, (r) => r.kind === 'proposal'],
      [{ agent: 'cursor' }, (r) => r.agent === 'cursor'],
      [{ agent: 'constructor' }, (r) => r.agent === 'constructor'],
      [{ kind: 'approval', verdict: 'pending' }, (r) => r.kind === 'approval' && r.status === 'pending'],
      [{ kind: 'approval', agent: 'claude-code' }, (r) => r.kind === 'approval' && r.agent === 'claude-code'],
      [{ verdict: 'expired', agent: 'cursor' }, (r) => r.status === 'expired' && r.agent === 'cursor'],
      [{ kind: 'approval', verdict: 'rejected', agent: 'constructor' }, (r) => r.kind === 'approval' && r.status === 'rejected' && r.agent === 'constructor'],
    ];
    const walked: string[] = [];
    const where = vi.spyOn(db.requests, 'where');
    for (const [query, keep] of cases) {
      const expected = newestFirst(rows.filter(keep));
      expect(expected.length).toBeGreaterThan(2);
      where.mockClear();
      expect((await allPages(query, 4)).ids).toEqual(expected);
      walked.push(...new Set(where.mock.calls.map(([index]) => String(index))));
    }
    where.mockRestore();
    // Every page is a range on the index that leads with exactly the filters: no filter is applied by scanning.
    expect(walked).toEqual([
      '[verdict+createdAt+elicitationId]', '[verdict+createdAt+elicitationId]', '[verdict+createdAt+elicitationId]',
      '[kind+createdAt+elicitationId]', '[agent+createdAt+elicitationId]', '[agent+createdAt+elicitationId]',
      '[kind+verdict+createdAt+elicitationId]', '[kind+agent+createdAt+elicitationId]', '[verdict+agent+createdAt+elicitationId]',
      '[kind+verdict+agent+createdAt+elicitationId]',
    ]);
  });

  it('lists the agents it knows, one index skip each', async () => {
    await seed(many());
    expect(await historyAgents(db)).toEqual(['claude-code', 'constructor', 'cursor']);
    expect(await historyAgents(db, 2)).toEqual(['claude-code', 'constructor']);
  });

  it('searches word prefixes, several words at once, case-insensitively, combined with filters', async () => {
    const rows = many();
    await seed(rows);
    const deploy = newestFirst(rows.filter((r) => r.message.startsWith('Deploy')));
    expect(deploy).toHaveLength(46);
    expect((await allPages({ search: 'dep' }, 10)).ids).toEqual(deploy);
    expect((await allPages({ search: 'PRODUCTION Deploy' }, 10)).ids).toEqual(deploy);
    expect((await allPages({ search: 'deploy 10' }, 10)).ids).toEqual(
      newestFirst(rows.filter((r) => /^Deploy service 10\d? /.test(r.message))),
    );
    expect((await allPages({ search: 'deploy update' }, 10)).ids).toEqual([]);
    expect((await allPages({ search: 'nothing-like-this' }, 10)).ids).toEqual([]);
    expect((await allPages({ search: 'deploy', verdict: 'pending', kind: 'proposal' }, 3)).ids).toEqual(
      newestFirst(rows.filter((r) => r.message.startsWith('Deploy') && r.status === 'pending' && r.kind === 'proposal')),
    );
    expect((await allPages({ search: 'update', agent: 'cursor' }, 3)).ids).toEqual(
      newestFirst(rows.filter((r) => r.message.startsWith('Update') && r.agent === 'cursor')),
    );
  });

  it('takes the index walk above 2000 candidates and returns the same pages', async () => {
    const rows: RequestRow[] = [];
    for (let i = 0; i < 2100; i++) {
      const createdAt = T0 + Math.floor(i / 4) * 1000; // ties of four
      rows.push(row(`big-${String(i).padStart(4, '0')}`, createdAt, {
        status: i % 2 === 0 ? 'approved' : 'rejected',
        message: i % 10 === 0 ? `Alpha beta run ${i}` : `Alpha run ${i}`,
      }));
    }
    await seed(rows);
    expect(await db.requests.where('words').startsWith('alpha').count()).toBeGreaterThan(2000);

    expect((await allPages({ search: 'alpha beta' }, 25)).ids).toEqual(newestFirst(rows.filter((r) => r.message.includes('beta'))));
    expect((await allPages({ search: 'alp', verdict: 'approved' }, 100)).ids).toEqual(newestFirst(rows.filter((r) => r.status === 'approved')));
    const first = await historyPage(db, { search: 'alpha' }, undefined, 50);
    expect(first.rows.map((r) => r.elicitationId)).toEqual(newestFirst(rows).slice(0, 50));
    expect(first.next).not.toBeNull();
  });

  it('skips a corrupt row without cutting the pages short', async () => {
    const rows = Array.from({ length: 60 }, (_, i) => row(`ok-${String(i).padStart(2, '0')}`, T0 + i * 1000));
    await seed(rows);
    // Valid index keys, but not a row the schema accepts.
    await db.requests.put({ ...row('corrupt', T0 + 59_500), status: 'bogus' } as unknown as RequestRow);
    const { words: _words, ...wordless } = row('wordless', T0 + 30_500);
    await db.requests.put(wordless as unknown as RequestRow);

    expect(await getRequest(db, 'corrupt')).toBeUndefined();
    expect((await pendingRequests(db, 0)).map((r) => r.elicitationId)).not.toContain('corrupt');
    expect((await allPages({}, 50)).ids).toEqual(newestFirst(rows));
    expect((await allPages({}, 7)).ids).toEqual(newestFirst(rows));
    expect((await allPages({ search: 'request' }, 50)).ids).toEqual(newestFirst(rows));
  });
});

describe('the v1 → v2 migration', () => {
  it('back-fills the search words of rows stored before search existed', async () => {
    db.close();
    const v1 = new Dexie('elicitly', { indexedDB: factory, IDBKeyRange });
    v1.version(1).stores({
      requests: 'elicitationId, [createdAt+elicitationId], [status+createdAt+elicitationId], [kind+createdAt+elicitationId], [kind+status+createdAt+elicitationId], expiresAt',
      outbox: 'idempotencyKey, elicitationId, queuedAt',
      settings: 'key',
      connection: 'key',
    });
    const { words: _words, ...legacy } = row('legacy', T0, { message: 'Ship the Release notes' });
    await v1.table('requests').put(legacy);
    v1.close();

    db = openDb({ indexedDB: factory, IDBKeyRange });
    expect(await getRequest(db, 'legacy')).toMatchObject({ elicitationId: 'legacy', words: ['ship', 'the', 'release', 'notes'] });
    expect((await historyPage(db, { search: 'relea' })).rows.map((r) => r.elicitationId)).toEqual(['legacy']);
  });
});

describe('the v2 → v3 migration', () => {
  it('drops the unqueried expiresAt index and keeps every row and queued decision', async () => {
    db.close();
    const v2 = new Dexie('elicitly', { indexedDB: factory, IDBKeyRange });
    v2.version(2).stores({
      requests: 'elicitationId, [createdAt+elicitationId], [status+createdAt+elicitationId], [kind+createdAt+elicitationId], [kind+status+createdAt+elicitationId], expiresAt, *words',
      outbox: 'idempotencyKey, elicitationId, queuedAt',
      settings: 'key',
      connection: 'key',
    });
    await v2.table('requests').put(row('kept', T0, { message: 'Kept across versions' }));
    await v2.table('outbox').put({ idempotencyKey: 'k1', elicitationId: 'kept', decision: 'rejected', queuedAt: T0 });
    v2.close();

    db = openDb({ indexedDB: factory, IDBKeyRange });
    expect(await getRequest(db, 'kept')).toMatchObject({ elicitationId: 'kept', words: ['kept', 'across', 'versions'] });
    expect(await db.outbox.where('elicitationId').equals('kept').count()).toBe(1);
    expect(db.requests.schema.indexes.map((i) => i.name)).not.toContain('expiresAt');
    expect(db.outbox.schema.indexes.map((i) => i.name)).toEqual(['elicitationId', 'queuedAt']);
  });
});

describe('the v3 → v4 migration', () => {
  it('back-fills the verdict from what the row knows, so the decision filter finds rows stored before it existed', async () => {
    db.close();
    const v3 = new Dexie('elicitly', { indexedDB: factory, IDBKeyRange });
    v3.version(3).stores({
      requests: 'elicitationId, [createdAt+elicitationId], [status+createdAt+elicitationId], [kind+createdAt+elicitationId], [kind+status+createdAt+elicitationId], *words',
      outbox: 'idempotencyKey, elicitationId, queuedAt',
      settings: 'key',
      connection: 'key',
    });
    const legacy = (id: string, createdAt: number, overrides: Partial<RequestRow>) => {
      const { verdict: _verdict, ...rest } = { ...row(id, createdAt), ...overrides };
      return rest;
    };
    await v3.table('requests').bulkPut([
      legacy('approved-collected', T0, { status: 'consumed', outcome: { decision: 'approved', action: 'submit', values: {} }, delivery: 'delivered' }),
      legacy('rejected-collected', T0 + 1, { status: 'consumed', outcome: { decision: 'rejected', action: 'cancel' }, delivery: 'delivered' }),
      legacy('elsewhere', T0 + 2, { status: 'consumed' }),
      legacy('withdrawn', T0 + 3, { status: 'canceled' }),
      legacy('waiting', T0 + 4, {}),
    ]);
    v3.close();

    db = openDb({ indexedDB: factory, IDBKeyRange });
    const verdicts = Object.fromEntries((await db.requests.toArray()).map((r) => [r.elicitationId, r.verdict]));
    expect(verdicts).toEqual({
      'approved-collected': 'approved', 'rejected-collected': 'rejected', elsewhere: 'unknown', withdrawn: 'withdrawn', waiting: 'pending',
    });
    expect((await historyPage(db, { verdict: 'approved' })).rows.map((r) => r.elicitationId)).toEqual(['approved-collected']);
    const indexes = db.requests.schema.indexes.map((i) => i.name);
    expect(indexes).toContain('[kind+verdict+agent+createdAt+elicitationId]');
    expect(indexes).not.toContain('[kind+status+createdAt+elicitationId]');
  });
});

/** A context nested `depth` objects deep: a few KB of JSON that the browser's structured clone cannot copy. */
function deepContext(depth: number): unknown {
  let value: unknown = 'bottom';
  for (let i = 0; i < depth; i++) value = { next: value };
  return value;
}

describe('a request that cannot be stored', () => {
  const deepView = (id: string, createdAt: number) => {
    const v = view(id, createdAt);
    return { ...v, request: { ...v.request, context: deepContext(3000) } };
  };

  it('is skipped and named by a welcome, which still stores and sweeps everything else in one transaction', async () => {
    const now = T0 + 2 * HOUR;
    expect(JSON.stringify(deepView('x', now).request.context).length).toBeLessThan(30_000);
    await seed([row('gone', now - 60_000, { expiresAt: now + HOUR })]);

    const { added, skipped } = await applyWelcome(db, [view('before', now - 3000), deepView('deep', now - 2000), view('after', now - 1000)], now);

    expect(skipped).toEqual([{ elicitationId: 'deep', reason: expect.stringMatching(/call stack/i) }]);
    expect(added.map((r) => r.elicitationId)).toEqual(['before', 'after']);
    expect(await getRequest(db, 'deep')).toBeUndefined();
    expect((await pendingRequests(db)).map((r) => r.elicitationId)).toEqual(['after', 'before']);
    expect(await getRequest(db, 'gone')).toMatchObject({ status: 'canceled' });
  });

  it('does not stop the background: the rest of the welcome shows, queued decisions are re-sent, later frames apply', async () => {
    const h = harness();
    const logs: string[] = [];
    const c = new BackgroundController({
      db: h.db, platform: h.platform, clock: h.clock, client: { name: 'test', version: '1' }, log: (m) => logs.push(m),
      socketFactory: (url, protocols) => {
        const socket = new FakeSocket(url, protocols);
        h.sockets.push(socket);
        return socket;
      },
    });
    const at = h.clock.t;
    // A decision made while the hub was away, waiting in the outbox for the next welcome.
    await h.db.requests.put({ ...rowFromView(proposalView('el_decided', at - 5000)), outcome: { decision: 'approved', action: 'submit', values: {}, included: [] }, delivery: 'queued' });
    await h.db.outbox.put({ idempotencyKey: 'key-queued', elicitationId: 'el_decided', decision: 'approved', values: {}, included: [], queuedAt: at - 4000 });

    const socket = await h.connect(c, [proposalView('el_decided', at - 5000), proposalView('el_first', at - 3000), deepView('el_deep', at - 2000), proposalView('el_last', at - 1000)]);
    await until(() => decideCalls(socket).length > 0, 'the queued decision to be re-sent');

    expect((await pendingRequests(h.db)).map((r) => r.elicitationId)).toEqual(['el_last', 'el_first', 'el_decided']);
    expect(h.platform.notified.map((r) => r.elicitationId)).toEqual(['el_first', 'el_last']);
    expect(decideCalls(socket).map((call) => call.params)).toEqual([expect.objectContaining({ elicitationId: 'el_decided', idempotencyKey: 'key-queued' })]);
    expect(logs).toContainEqual(expect.stringMatching(/^skipped request el_deep of the welcome: it cannot be stored here \(.*call stack/i));

    socket.deliver({ method: 'request.created', params: { request: deepView('el_deep_again', h.clock.t) } });
    socket.deliver({ method: 'request.created', params: { request: proposalView('el_later', h.clock.t) } });
    await until(() => h.platform.notified.some((r) => r.elicitationId === 'el_later'), 'the later request to be stored');
    expect(await getRequest(h.db, 'el_later')).toMatchObject({ status: 'pending' });
    expect(logs).toContainEqual(expect.stringMatching(/^skipped request el_deep_again: it cannot be stored here/));
    await until(() => h.platform.badge.at(-1) === 4, 'the badge to count the four stored requests');
  });

  it('a welcome that fails as a whole is reported, and the queued decisions are still re-sent', async () => {
    const h = harness();
    const logs: string[] = [];
    const c = new BackgroundController({
      db: h.db, platform: h.platform, clock: h.clock, client: { name: 'test', version: '1' }, log: (m) => logs.push(m),
      socketFactory: (url, protocols) => {
        const socket = new FakeSocket(url, protocols);
        h.sockets.push(socket);
        return socket;
      },
    });
    const at = h.clock.t;
    await h.db.requests.put({ ...rowFromView(proposalView('el_decided', at - 5000)), outcome: { decision: 'rejected', action: 'cancel' }, delivery: 'queued' });
    await h.db.outbox.put({ idempotencyKey: 'key-queued', elicitationId: 'el_decided', decision: 'rejected', queuedAt: at - 4000 });
    // The welcome's first read fails (a storage error, say): nothing of it can be applied.
    vi.spyOn(h.db.requests, 'bulkGet').mockRejectedValueOnce(new Error('storage is gone'));

    const socket = await h.connect(c, [proposalView('el_decided', at - 5000), proposalView('el_new', at - 1000)]);
    await until(() => decideCalls(socket).length > 0, 'the queued decision to be re-sent');
    expect(decideCalls(socket).map((call) => call.params)).toEqual([expect.objectContaining({ elicitationId: 'el_decided', idempotencyKey: 'key-queued' })]);
    expect(logs).toContainEqual(expect.stringMatching(/^applying the welcome failed: .*storage is gone/));
  });
});

// One contract for the requests' store (server/store/record-store.ts), run against both: the embedded journal in a temp
// state dir and PostgreSQL in a throw-away cluster (Debian's binaries, test/helpers/pg-cluster.ts; never a mock).
// Each store brings only how to open it, how to plant a damaged entry, and how to break it mid-write.
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApprovalEngine } from '../../server/approvals/approval-engine.js';
import { checkApprovalInput } from '../../shared/approval-input.js';
import { JournalStore } from '../../server/store/journal-store.js';
import { PgRecordStore } from '../../server/store/pg-record-store.js';
import { MIGRATIONS } from '../../server/store/pg-schema.js';
import { PgRulesStore } from '../../server/store/pg-rules-store.js';
import { StaleRecord, type RecordStore, type StoredRecord } from '../../server/store/record-store.js';
import { FaultIo } from '../helpers/fault-io.js';
import { postgresBin, startPgCluster, type PgCluster } from '../helpers/pg-cluster.js';

interface Rec extends StoredRecord { id: string; updatedAt: number; status: string; n?: number; text?: string }
const parse = (raw: unknown): StoredRecord | undefined => {
  const r = raw as Partial<Rec> | null;
  return r && typeof r.id === 'string' && typeof r.updatedAt === 'number' && typeof r.status === 'string' ? (r as Rec) : undefined;
};

/** A store under test: a place that outlives each open, and the store-specific seams. */
interface Place {
  open(): Promise<RecordStore<Rec>>;
  /** Writes an entry the validator refuses, behind the store's back (as a bad release or an edit would). */
  plantDamaged(): Promise<void>;
  /** Makes the next write of `store` fail the way this store fails (an fsync error; the database session killed). */
  breakNextWrite(store: RecordStore<Rec>): Promise<void>;
  dispose(): Promise<void>;
}

interface Kind { name: string; available: boolean; place(): Promise<Place> }

let cluster: PgCluster | undefined;
let databases = 0;

/** A database of its own in the one throw-away cluster, for one place or one case: they do not see each other's rows. */
async function database(name: string): Promise<string> {
  cluster ??= startPgCluster();
  const admin = postgres(cluster.url, { max: 1, onnotice: () => undefined });
  await admin.unsafe(`create database ${name}`);
  await admin.end();
  return cluster.url.replace(/\/elicitly$/, `/${name}`);
}

const KINDS: Kind[] = [
  {
    name: 'journal',
    available: true,
    async place() {
      const dir = mkdtempSync(join(tmpdir(), 'elicitly-contract-'));
      const ios = new Map<RecordStore<Rec>, FaultIo>();
      return {
        async open() {
          const io = new FaultIo();
          const store = await JournalStore.open<Rec>({ dir, parse, io });
          ios.set(store, io);
          return store;
        },
        async plantDamaged() {
          appendFileSync(join(dir, 'requests.jsonl'), `${JSON.stringify({ id: 'el_bad', updatedAt: 1 })}\n`);
        },
        async breakNextWrite(store) {
          ios.get(store)?.fail();
        },
        async dispose() {
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  },
  {
    name: 'postgresql',
    available: postgresBin() !== null,
    async place() {
      const name = `contract_${++databases}`;
      const url = await database(name);
      const direct = postgres(url, { max: 1, onnotice: () => undefined });
      return {
        open: () => PgRecordStore.open<Rec>({ url, parse, commitTimeoutMs: 5000 }),
        async plantDamaged() {
          await direct`insert into elicitly_requests (id, updated_at, body) values ('el_bad', 1, ${JSON.stringify({ id: 'el_bad', updatedAt: 1 })})`;
        },
        async breakNextWrite() {
          // The hub's session ends under it (a restart, a network cut, an admin): its next commit must not land elsewhere.
          await direct`select pg_terminate_backend(pid) from pg_stat_activity where datname = ${name} and pid <> pg_backend_pid()`;
        },
        async dispose() {
          await direct.end();
        },
      };
    },
  },
];

afterAll(() => cluster?.stop());

const rec = (id: string, extra: Partial<Rec> = {}): Rec => ({ id, updatedAt: Date.now(), status: 'pending', ...extra });

// CI installs PostgreSQL (.ci/run) and makes a missing one a failure there; elsewhere the journal runs alone.
const required = process.env.ELICITLY_REQUIRE_POSTGRES === '1';
for (const kind of KINDS) {
  describe.skipIf(!kind.available && !required)(`the requests' store contract: ${kind.name}`, () => {
    let place: Place;
    beforeAll(async () => {
      place = await kind.place();
    }, 60_000);
    afterAll(async () => {
      await place?.dispose();
    });

    it('a put is visible once it resolved, and after a reopen; a delete too', async () => {
      const store = await place.open();
      const writing = store.put(rec('el_a', { n: 1 }));
      expect(store.get('el_a'), 'not before it is durable').toBeUndefined();
      await writing;
      expect(store.get('el_a')).toMatchObject({ id: 'el_a', n: 1 });
      await store.put(rec('el_b'));
      await store.delete('el_b');
      expect(store.get('el_b')).toBeUndefined();
      await store.close();
      const again = await place.open();
      expect(again.get('el_a')).toMatchObject({ id: 'el_a', n: 1 });
      expect(again.get('el_b')).toBeUndefined();
      expect(again.damage).toBeNull();
      await again.delete('el_a');
      await again.close();
    });

    it('1,000 puts at once, some of one id many times, some deleted in the same burst: a reopen reads the last of each', async () => {
      const store = await place.open();
      const writes: Promise<void>[] = [];
      for (let i = 0; i < 1000; i++) writes.push(store.put(rec(`el_${i % 400}`, { n: i })));
      for (let i = 0; i < 50; i++) writes.push(store.delete(`el_${i}`));
      await Promise.all(writes);
      const expected = new Map<string, number>();
      for (let i = 0; i < 1000; i++) expected.set(`el_${i % 400}`, i);
      for (let i = 0; i < 50; i++) expected.delete(`el_${i}`);
      const seen = (s: RecordStore<Rec>) => new Map(s.all().map((r) => [r.id, r.n]));
      expect(seen(store)).toEqual(expected);
      await store.close();
      const again = await place.open();
      expect(seen(again)).toEqual(expected);
      await Promise.all(again.all().map((r) => again.delete(r.id)));
      await again.close();
    });

    it('keeps the record as written: a change to the caller\'s object afterwards, and any text (NUL, emoji, quotes) survive', async () => {
      const store = await place.open();
      const text = 'nul \u0000 emoji 🦊 "quoted" \\ back';
      const mine = rec('el_text', { text });
      await store.put(mine);
      mine.status = 'approved';
      expect(store.get('el_text')?.status).toBe('pending');
      await store.close();
      const again = await place.open();
      expect(again.get('el_text')).toMatchObject({ status: 'pending', text });
      await again.delete('el_text');
      await again.close();
    });

    it('an entry its validator refuses is moved aside and reported, never silently dropped or served', async () => {
      const store = await place.open();
      await store.put(rec('el_good'));
      await store.close();
      await place.plantDamaged();
      const again = await place.open();
      expect(again.get('el_bad')).toBeUndefined();
      expect(again.get('el_good')).toBeDefined();
      expect(again.damage).toMatchObject({ quarantined: 1 });
      await again.close();
      const third = await place.open();
      expect(third.damage, 'moved once, not found again').toBeNull();
      await third.delete('el_good');
      await third.close();
    });

    it('a failed write fails the store once: nothing of it acknowledged, its owner told, every later write refused; a reopen serves what was durable', async () => {
      const store = await place.open();
      await store.put(rec('el_kept'));
      const told: Error[] = [];
      store.onFailure((error) => told.push(error));
      await place.breakNextWrite(store);
      await expect(store.put(rec('el_lost'))).rejects.toThrow();
      expect(store.get('el_lost')).toBeUndefined();
      expect(store.failed).toBeInstanceOf(Error);
      await expect(store.put(rec('el_after'))).rejects.toThrow(/unusable/);
      expect(told).toHaveLength(1);
      await store.close();
      const again = await place.open();
      expect(again.get('el_kept')).toBeDefined();
      expect(again.get('el_after')).toBeUndefined();
      // The failed write itself may have reached the disk (written, its fsync refused) without being acknowledged.
      await Promise.all(again.all().map((r) => again.delete(r.id)));
      await again.close();
    });

    it('close waits for the queued writes; a write after close is refused', async () => {
      const store = await place.open();
      const writes = Array.from({ length: 20 }, (_, i) => store.put(rec(`el_c${i}`)));
      await store.close();
      await Promise.all(writes);
      await expect(store.put(rec('el_late'))).rejects.toThrow(/closed/);
      const again = await place.open();
      expect(again.size()).toBe(20);
      await Promise.all(again.all().map((r) => again.delete(r.id)));
      await again.close();
    });
  });
}

describe.skipIf(postgresBin() === null && !required)('the PostgreSQL store alone', () => {
  /** Polls `check` every 10 ms until it holds or `ms` pass (bounded). */
  const eventually = async (check: () => boolean, ms: number) => {
    const until = Date.now() + ms;
    while (!check() && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 10));
    return check();
  };

  it('several hubs on one database: a change one commits reaches the others\' memory; a write from an outdated version is refused as stale, never written over the newer one', async () => {
    const url = await database('shared_hubs');
    const [a, b, c] = await Promise.all([0, 1, 2].map(() => PgRecordStore.open<Rec>({ url, parse })));
    if (!a || !b || !c) throw new Error('three stores');
    const heard: { id: string; before?: string; after?: string }[] = [];
    // A listener applies each change itself, as the engine does in the request's turn.
    b.onRemoteChange((change) => {
      const applied = change.apply();
      if (applied) heard.push({ id: change.id, before: applied.before?.status, after: applied.after?.status });
    });
    try {
      await a.put(rec('el_1', { status: 'pending' }));
      expect(await eventually(() => b.get('el_1') !== undefined && c.get('el_1') !== undefined, 5000)).toBe(true);
      expect(heard).toEqual([{ id: 'el_1', before: undefined, after: 'pending' }]);

      // Two hubs decide at once from the same version: the first COMMIT wins, the other is told it was stale.
      const outcomes = await Promise.allSettled([b.put(rec('el_1', { status: 'approved' })), c.put(rec('el_1', { status: 'rejected' }))]);
      const won = outcomes.filter((o) => o.status === 'fulfilled');
      const lost = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(1);
      expect(lost[0]?.reason).toBeInstanceOf(StaleRecord);
      const winner = outcomes[0]?.status === 'fulfilled' ? 'approved' : 'rejected';
      const loser = winner === 'approved' ? c : b;
      // The loser reads the winner's version (unless its notification brought it already) and may then write over it.
      await loser.refresh('el_1');
      expect(loser.get('el_1')?.status).toBe(winner);
      await loser.put(rec('el_1', { status: 'consumed' }));
      expect(await eventually(() => [a, b, c].every((s) => s.get('el_1')?.status === 'consumed'), 5000)).toBe(true);
      const direct = postgres(url, { max: 1, onnotice: () => undefined });
      const [row] = await direct<{ body: string; rev: string }[]>`select body, rev from elicitly_requests where id = 'el_1'`;
      await direct.end();
      expect(JSON.parse(row?.body ?? '{}')).toMatchObject({ status: 'consumed' });
      expect(Number(row?.rev)).toBe(3);

      // A delete is a change too; a write over a deleted row is stale rather than bringing it back.
      await a.delete('el_1');
      expect(await eventually(() => b.get('el_1') === undefined && c.get('el_1') === undefined, 5000)).toBe(true);
      await a.put(rec('el_2'));
      // A hub whose engine has not taken the deletion in yet (its listener holds the change) still has the record.
      const late = await PgRecordStore.open<Rec>({ url, parse });
      late.onRemoteChange(() => undefined);
      try {
        expect(late.get('el_2')).toBeDefined();
        await a.delete('el_2');
        await expect(late.put(rec('el_2', { status: 'approved' }))).rejects.toBeInstanceOf(StaleRecord);
      } finally {
        await late.close();
      }
    } finally {
      await Promise.all([a.close(), b.close(), c.close()]);
    }
  });

  it('a burst whose ids fill many NOTIFY payloads (2,000 of the longest ids, with quotes): every other hub hears every id', async () => {
    const url = await database('notice_parts');
    const [a, b] = await Promise.all([0, 1].map(() => PgRecordStore.open<Rec>({ url, parse })));
    if (!a || !b) throw new Error('two stores');
    try {
      // 100 characters each, as long as an id may be, and JSON escapes that make its payload longer still.
      const ids = Array.from({ length: 2000 }, (_, i) => `el_"${String(i).padStart(4, '0')}\\${'x'.repeat(90)}`.slice(0, 100));
      await Promise.all(ids.map((id) => a.put(rec(id))));
      expect(await eventually(() => ids.every((id) => b.get(id) !== undefined), 10_000)).toBe(true);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('one hub at a time runs the timers; when its session ends (closed, or killed), another takes them within its poll', async () => {
    const url = await database('leader_hubs');
    const first = await PgRecordStore.open<Rec>({ url, parse, leaderPollMs: 100 });
    expect(await eventually(() => first.leads(), 2000)).toBe(true);
    const others = await Promise.all([0, 1].map(() => PgRecordStore.open<Rec>({ url, parse, leaderPollMs: 100 })));
    try {
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(others.map((s) => s.leads())).toEqual([false, false]);
      const closedAt = Date.now();
      await first.close();
      expect(await eventually(() => others.some((s) => s.leads()), 2000)).toBe(true);
      expect(Date.now() - closedAt).toBeLessThan(2000);
      expect(others.filter((s) => s.leads())).toHaveLength(1);

      // The leader's session killed under it (a network cut, an admin): it learns at its next check that the lock went
      // with the session, and from then on one of the two leads, whichever took the lock first: never both for longer
      // than a check.
      const direct = postgres(url, { max: 1, onnotice: () => undefined });
      const [held] = await direct<{ pid: number }[]>`select pid from pg_locks where locktype = 'advisory' and objid = 3 and granted`;
      await direct`select pg_terminate_backend(${held?.pid ?? 0})`;
      const killedAt = Date.now();
      await new Promise((resolve) => setTimeout(resolve, 250));
      expect(await eventually(() => others.filter((s) => s.leads()).length === 1, 2000)).toBe(true);
      expect(Date.now() - killedAt).toBeLessThan(2250);
      const [holder] = await direct<{ pid: number }[]>`select pid from pg_locks where locktype = 'advisory' and objid = 3 and granted`;
      expect(holder?.pid, 'a new session holds the lock').not.toBe(held?.pid);
      await direct.end();
    } finally {
      await Promise.all(others.map((s) => s.close()));
    }
  });

  it('the rules on one database: a list one hub replaced reaches the others, a replace over an older list is refused as stale, damaged entries are moved aside', async () => {
    const url = await database('shared_rules');
    interface R { id: string; n: number }
    const parseRule = (raw: unknown): R | undefined => {
      const r = raw as Partial<R> | null;
      return r && typeof r.id === 'string' && typeof r.n === 'number' ? { id: r.id, n: r.n } : undefined;
    };
    const [a, b] = await Promise.all([0, 1].map(() => PgRulesStore.open<R>({ url, parse: parseRule, max: 3 })));
    if (!a || !b) throw new Error('two stores');
    const heard: { before: number; after: number }[] = [];
    b.onRemoteChange((change) => {
      void change.apply().then((applied) => {
        if (applied) heard.push({ before: applied.before.length, after: applied.after.length });
      });
    });
    try {
      await a.replace([{ id: 'r1', n: 1 }]);
      expect(await eventually(() => b.all().length === 1, 5000)).toBe(true);
      expect(heard).toEqual([{ before: 0, after: 1 }]);
      // Both change the list from the same version: the first commit wins, the other is stale and changes nothing.
      const outcomes = await Promise.allSettled([a.replace([{ id: 'r1', n: 1 }, { id: 'a', n: 2 }]), b.replace([{ id: 'r1', n: 1 }, { id: 'b', n: 3 }])]);
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
      const lost = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
      expect(lost?.reason).toBeInstanceOf(StaleRecord);
      const loser = outcomes[0]?.status === 'rejected' ? a : b;
      await loser.refresh();
      expect(loser.all().map((r) => r.id)).toEqual(a === loser ? ['r1', 'b'] : ['r1', 'a']);
      await loser.replace([...loser.all(), { id: 'c', n: 4 }]);
      expect(await eventually(() => a.all().length === 3 && b.all().length === 3, 5000)).toBe(true);

      // An entry its validator refuses, and one past the most kept, are moved aside at the next open, not served.
      const direct = postgres(url, { max: 1, onnotice: () => undefined });
      await direct`update elicitly_rules set body = ${JSON.stringify([{ id: 'r1', n: 1 }, { id: 'bad' }, { id: 'x', n: 1 }, { id: 'y', n: 1 }, { id: 'z', n: 1 }])}, rev = rev + 1`;
      const reopened = await PgRulesStore.open<R>({ url, parse: parseRule, max: 3 });
      expect(reopened.all().map((r) => r.id)).toEqual(['r1', 'x', 'y']);
      expect(reopened.damage).toMatchObject({ quarantined: 2 });
      expect((await direct<{ reason: string }[]>`select reason from elicitly_rules_quarantine order by id`).map((r) => r.reason)).toEqual(['invalid', 'past the 3 kept']);
      await direct.end();
      await reopened.close();
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('two engines on one database: a result read on one hub the moment another recorded the decision is that decision, not "pending"', async () => {
    const url = await database('engines');
    const dirs = [0, 1].map(() => mkdtempSync(join(tmpdir(), 'elicitly-two-engines-')));
    const engines = await Promise.all(dirs.map((dir) => ApprovalEngine.open({ dir, retentionMs: 86_400_000, requests: (parse) => PgRecordStore.open({ url, parse }) })));
    const [a, b] = engines;
    if (!a || !b) throw new Error('two engines');
    try {
      const checked = checkApprovalInput({ message: 'Deploy?', context: {} });
      if (!checked.ok) throw new Error('fixture');
      expect((await a.call('create', { id: 'el_two', request: checked.request, renderedTemplate: null, timeoutMs: 60_000, requester: { client: 'test', pid: 1 } }, null)).ok).toBe(true);
      expect(await eventually(() => b.pendingCount() === 1, 5000)).toBe(true);
      expect(await a.decide({ elicitationId: 'el_two', idempotencyKey: 'k', decision: 'approved' }, 'extension')).toEqual({ ok: true, value: { ok: true, status: 'approved' } });
      // Asked at once, before b can have read a's notice: b reads the row.
      expect(await b.call('result', { id: 'el_two' }, null)).toMatchObject({ ok: true, value: { status: 'consumed', decision: 'approved' } });
      // A decision made on b over the version b held is refused as already made, whichever hub asks.
      expect(await b.decide({ elicitationId: 'el_two', idempotencyKey: 'k2', decision: 'rejected' }, 'extension')).toMatchObject({ ok: true, value: { ok: false, reason: 'already_decided' } });
    } finally {
      await Promise.all(engines.map((e) => e.close()));
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    }
  });

  it('migrations run once under their lock when hubs open at the same moment; a newer schema is refused by name', async () => {
    const url = await database('migrate_race');
    const opened = await Promise.allSettled(Array.from({ length: 4 }, () => PgRecordStore.open<Rec>({ url, parse })));
    // Every hub opened: none met a half-made schema, none applied a step twice.
    expect(opened.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled']);
    for (const o of opened) if (o.status === 'fulfilled') await o.value.close();
    const db = postgres(url, { max: 1, onnotice: () => undefined });
    expect(await db`select version from elicitly_schema`).toEqual([{ version: MIGRATIONS.length }]);
    await db`update elicitly_schema set version = ${MIGRATIONS.length + 1}`;
    await expect(PgRecordStore.open<Rec>({ url, parse })).rejects.toThrow(/newer than this hub knows/);
    await db.end();
  });

  it('a database that stops answering (SIGSTOP) fails the store within its commit timeout: nothing acknowledged, and after it resumes a reopen has every acknowledged write', async () => {
    const url = await database('paused');
    const pg = cluster;
    if (!pg) throw new Error('no cluster');
    const store = await PgRecordStore.open<Rec>({ url, parse, commitTimeoutMs: 1000 });
    await store.put(rec('el_before'));
    const told: Error[] = [];
    store.onFailure((error) => told.push(error));
    pg.pause();
    const started = Date.now();
    let outcome: string;
    try {
      outcome = await store.put(rec('el_during')).then(() => 'acknowledged', (error: Error) => `refused: ${error.message}`);
    } finally {
      pg.resume();
    }
    expect(outcome).toMatch(/^refused: .*did not commit within 1000 ms/);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(told).toHaveLength(1);
    await store.close();
    const again = await PgRecordStore.open<Rec>({ url, parse });
    expect(again.get('el_before')).toBeDefined();
    await again.close();
  });
});

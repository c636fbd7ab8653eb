// The requests' store in a team's PostgreSQL database (`ELICITLY_DATABASE_URL`): the same contract as the journal
// (record-store.ts), for any number of hubs at once. Every row has a version (`rev`); a hub writes a row only from the
// version it holds (compare-and-set in the batch's transaction), so of two hubs deciding one request the first COMMIT
// wins and the other is told `StaleRecord`. Each COMMIT also NOTIFYs the ids it changed; every other hub LISTENs, reads
// those rows and hands them to its engine. One hub at a time holds the timers' advisory lock (`leads()`).
import { randomBytes } from 'node:crypto';
import type postgres from 'postgres';
import { z } from 'zod';
import { log } from '../log.js';
import { LEADER_LOCK, LOCK_NAMESPACE, describeDatabase, migrate, session, toError, within, type LedgerRow } from './pg-schema.js';
import { MemoryRecords, StaleRecord, recordToWrite, type AppliedChange, type RecordStore, type RemoteChange, type StoredRecord } from './record-store.js';

/** The channel every COMMIT notifies with the ids it changed. */
const CHANNEL = 'elicitly_requests';
/** A NOTIFY payload stays under PostgreSQL's 8,000 bytes: a batch's ids go out in as many as needed (ids' JSON bytes). */
const MAX_PAYLOAD = 7000;

/** What a COMMIT tells the other hubs: which hub wrote (its own notifications it skips) and the ids. */
const NoticeSchema = z.strictObject({ hub: z.string(), ids: z.array(z.string()) });

export interface PgRecordStoreOptions<T extends StoredRecord = StoredRecord> {
  url: string;
  parse?: (raw: unknown) => StoredRecord | undefined;
  /** A batch not committed by then fails the store (a paused or unreachable database): nothing in it was acknowledged. Default 5 s. */
  commitTimeoutMs?: number;
  /** Opening (connect, migrate, read, listen) gives up after this. Default 10 s. */
  openTimeoutMs?: number;
  /** How often a hub that does not run the timers tries to take them (a leader that died is replaced within this). Default 500 ms. */
  leaderPollMs?: number;
  /**
   * The team's ledger entries of a change (from the record as memory holds it to what is written; `after` undefined: a
   * delete), appended in the batch's own statement for exactly the changes it writes. Absent: no ledger.
   */
  ledger?: (before: T | undefined, after: T | undefined) => LedgerRow[];
  /** The ledger entries' time. Default Date.now. */
  now?: () => number;
}

type Op<T> = { kind: 'put'; record: T; text: string } | { kind: 'delete'; id: string };
interface Pending<T> { op: Op<T>; resolve: () => void; reject: (error: Error) => void }
interface Row { id: string; rev: string | number; body: string }

export class PgRecordStore<T extends StoredRecord> extends MemoryRecords<T> implements RecordStore<T> {
  private ledger: PgRecordStoreOptions<T>['ledger'];
  private now: () => number = Date.now;
  private queue: Pending<T>[] = [];
  private flushing = false;
  private idleWaiters: (() => void)[] = [];
  private closing = false;
  private closed = false;
  /** Each row's version as this hub last read or wrote it. */
  private readonly revs = new Map<string, number>();
  /** This store's name in its notifications. */
  private readonly hub = randomBytes(8).toString('hex');
  private readonly remoteListeners = new Set<(change: RemoteChange<T>) => void>();
  /** Ids other hubs changed, to be read. */
  private incoming = new Set<string>();
  private reading = false;
  private loaded = false;
  private listens = 0;
  private unlisten: (() => Promise<void>) | undefined;
  private leader = false;
  private polling = false;
  private leaderTimer: NodeJS.Timeout | undefined;
  private parseRecord: (raw: unknown) => StoredRecord | undefined = (raw) => raw as StoredRecord;

  private constructor(
    /** The session every batch commits on (one connection). */
    private readonly conn: postgres.Sql,
    private readonly backendPid: number,
    /** The session that reads other hubs' changes and holds the timers' lock (one connection; LISTEN has its own). */
    private readonly control: postgres.Sql,
    private controlPid: number,
    private readonly commitTimeoutMs: number,
    private readonly where: string,
  ) {
    super();
  }

  static async open<T extends StoredRecord>(options: PgRecordStoreOptions<T>): Promise<PgRecordStore<T>> {
    const where = describeDatabase(options.url);
    const conn = session(options.url);
    const control = session(options.url);
    let store: PgRecordStore<T> | undefined;
    try {
      return await within((async () => {
        const [[write], [read]] = await Promise.all([conn<{ pid: number }[]>`select pg_backend_pid() as pid`, control<{ pid: number }[]>`select pg_backend_pid() as pid`]);
        await migrate(conn);
        store = new PgRecordStore<T>(conn, write?.pid ?? 0, control, read?.pid ?? 0, options.commitTimeoutMs ?? 5000, where);
        if (options.parse) store.parseRecord = options.parse;
        store.ledger = options.ledger;
        if (options.now) store.now = options.now;
        // Listening before reading: a change committed meanwhile is read again after, never missed.
        const listening = await control.listen(CHANNEL, (payload) => store?.notified(payload), () => store?.listened());
        store.unlisten = listening.unlisten;
        await store.load();
        store.startLeading(options.leaderPollMs ?? 500);
        log('debug', 'pg-record-store: opened', { database: where, records: store.records.size });
        return store;
      })(), options.openTimeoutMs ?? 10_000, `${where} did not answer within ${options.openTimeoutMs ?? 10_000} ms`);
    } catch (error) {
      if (store) store.closed = true;
      clearInterval(store?.leaderTimer);
      await Promise.all([conn.end({ timeout: 1 }), control.end({ timeout: 1 })]).catch(() => undefined);
      throw error;
    }
  }

  override get shared(): boolean {
    return true;
  }

  override leads(): boolean {
    return this.leader && !this.closing && !this.closed && this.writeFailure.failed === undefined;
  }

  override onRemoteChange(listener: (change: RemoteChange<T>) => void): () => void {
    this.remoteListeners.add(listener);
    return () => this.remoteListeners.delete(listener);
  }

  override async refresh(id: string): Promise<AppliedChange<T> | null> {
    const rows = await within(this.control<Row[]>`select id, rev, body from elicitly_requests where id = ${id}`, this.commitTimeoutMs, `${this.where} did not answer within ${this.commitTimeoutMs} ms`);
    const row = rows[0];
    if (!row) return this.applyRow(id, undefined);
    const record = this.recordOf(row);
    return record ? this.applyRow(id, { rev: Number(row.rev), record }) : null;
  }

  /** Every row into memory; a row its validator refuses is moved to the quarantine table, in one transaction. */
  private async load(): Promise<void> {
    const rows = await this.conn<Row[]>`select id, rev, body from elicitly_requests order by updated_at, id`;
    const damaged: { id: string; body: string; reason: string }[] = [];
    for (const row of rows) {
      let raw: unknown;
      try {
        raw = JSON.parse(row.body);
      } catch {
        damaged.push({ ...row, reason: 'malformed' });
        continue;
      }
      const record = this.parseRecord(raw);
      if (record === undefined || record.id !== row.id) {
        damaged.push({ ...row, reason: 'invalid' });
        continue;
      }
      // The caller's parse is the only type guard for T, as in the journal.
      this.records.set(record.id, record as T);
      this.revs.set(record.id, Number(row.rev));
    }
    this.loaded = true;
    this.readIncoming();
    if (damaged.length === 0) return;
    await this.conn.begin(async (tx) => {
      for (const d of damaged) {
        await tx`insert into elicitly_requests_quarantine (reason, body) values (${d.reason}, ${d.body})`;
        await tx`delete from elicitly_requests where id = ${d.id}`;
      }
    });
    this.damageFound = { quarantined: damaged.length, quarantineFile: `${this.where}: table elicitly_requests_quarantine` };
    log('error', 'pg-record-store: DAMAGED ROWS moved aside; the requests they held are gone from the inbox', { database: this.where, rows: damaged.map((d) => ({ id: d.id, reason: d.reason })) });
  }

  /** A row another hub wrote, validated; a row that fails is logged and left alone (its writer's open quarantines it). */
  private recordOf(row: Row): T | undefined {
    let raw: unknown;
    try {
      raw = JSON.parse(row.body);
    } catch {
      raw = undefined;
    }
    const record = raw === undefined ? undefined : this.parseRecord(raw);
    if (record === undefined || record.id !== row.id) {
      log('error', 'pg-record-store: another hub wrote a row this hub cannot read; it is not served here', { database: this.where, id: row.id });
      return undefined;
    }
    return record as T;
  }

  /** Memory takes a row only when it is newer than the version held (or its deletion, when one was held). */
  private applyRow(id: string, row: { rev: number; record: T } | undefined): AppliedChange<T> | null {
    const known = this.revs.get(id);
    const before = this.records.get(id);
    if (row === undefined) {
      if (known === undefined) return null;
      this.records.delete(id);
      this.revs.delete(id);
      return { before, after: undefined };
    }
    if (known !== undefined && known >= row.rev) return null;
    this.records.set(id, row.record);
    this.revs.set(id, row.rev);
    return { before, after: row.record };
  }

  private notified(payload: string): void {
    let notice: z.infer<typeof NoticeSchema>;
    try {
      notice = NoticeSchema.parse(JSON.parse(payload));
    } catch {
      log('warn', 'pg-record-store: a notification that is not ours was ignored', { database: this.where, channel: CHANNEL });
      return;
    }
    if (notice.hub === this.hub) return;
    for (const id of notice.ids) this.incoming.add(id);
    this.readIncoming();
  }

  /** Listening again after the listener's connection dropped: what changed meanwhile is found by comparing versions. */
  private listened(): void {
    if (this.listens++ === 0) return;
    void within(this.control<{ id: string; rev: string | number }[]>`select id, rev from elicitly_requests`, this.commitTimeoutMs, 'resync')
      .then((rows) => {
        const there = new Set<string>();
        for (const row of rows) {
          there.add(row.id);
          if ((this.revs.get(row.id) ?? 0) < Number(row.rev)) this.incoming.add(row.id);
        }
        for (const id of this.revs.keys()) if (!there.has(id)) this.incoming.add(id);
        this.readIncoming();
      })
      .catch((error: unknown) => this.fail(toError(error)));
  }

  /** Reads the rows other hubs changed, in batches, and hands each to the listeners (or applies it, with none). */
  private readIncoming(): void {
    if (this.reading || !this.loaded || this.closed || this.incoming.size === 0) return;
    this.reading = true;
    void (async () => {
      try {
        while (this.incoming.size > 0 && !this.closed && this.writeFailure.failed === undefined) {
          const ids = [...this.incoming].slice(0, 1000);
          for (const id of ids) this.incoming.delete(id);
          const rows = await within(this.control<Row[]>`select id, rev, body from elicitly_requests where id = any(${ids}::text[])`, this.commitTimeoutMs, `${this.where} did not answer within ${this.commitTimeoutMs} ms`);
          const found = new Map(rows.map((row) => [row.id, row]));
          for (const id of ids) {
            const row = found.get(id);
            const record = row ? this.recordOf(row) : undefined;
            if (row && !record) continue;
            const change: RemoteChange<T> = { id, apply: () => this.applyRow(id, row && record ? { rev: Number(row.rev), record } : undefined) };
            if (this.remoteListeners.size === 0) change.apply();
            for (const listener of this.remoteListeners) listener(change);
          }
        }
      } catch (error) {
        // A hub that cannot see the others' changes would answer from an old state: it steps down like a failed write.
        if (!this.closed) this.fail(toError(error));
      } finally {
        this.reading = false;
      }
    })();
  }

  /** Tries for the timers' lock now and every `ms` while another hub holds it; a session that changed lost it. */
  private startLeading(ms: number): void {
    const poll = async () => {
      if (this.polling || this.closing || this.closed) return;
      this.polling = true;
      try {
        if (this.leader) {
          const [row] = await within(this.control<{ pid: number }[]>`select pg_backend_pid() as pid`, this.commitTimeoutMs, 'leader check');
          if (row?.pid === this.controlPid) return;
          this.leader = false;
          this.controlPid = row?.pid ?? 0;
        }
        const [row] = await within(this.control<{ locked: boolean; pid: number }[]>`select pg_try_advisory_lock(${LOCK_NAMESPACE}, ${LEADER_LOCK}) as locked, pg_backend_pid() as pid`, this.commitTimeoutMs, 'leader lock');
        this.controlPid = row?.pid ?? 0;
        if (row?.locked === true) {
          this.leader = true;
          log('info', 'pg-record-store: this hub runs the timers (expiry, purge, notifications)', { database: this.where });
        }
      } catch (error) {
        this.leader = false;
        log('warn', 'pg-record-store: could not check the timers\' lock', { database: this.where, error: toError(error).message });
      } finally {
        this.polling = false;
      }
    };
    void poll();
    this.leaderTimer = setInterval(() => void poll(), ms);
    this.leaderTimer.unref();
  }

  put(record: T): Promise<void> {
    const unusable = this.unusableReason();
    if (unusable) return Promise.reject(unusable);
    const written = recordToWrite(record, 'pg-record-store');
    if (written instanceof Error) return Promise.reject(written);
    return this.enqueue({ kind: 'put', record: written.copy, text: written.text });
  }

  delete(id: string): Promise<void> {
    const unusable = this.unusableReason();
    if (unusable) return Promise.reject(unusable);
    return this.enqueue({ kind: 'delete', id });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closing = true;
    clearInterval(this.leaderTimer);
    if (this.flushing) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    if (this.closed) return;
    this.closed = true;
    await this.unlisten?.().catch(() => undefined);
    // Ending the sessions releases the timers' lock.
    await Promise.all([this.conn.end({ timeout: 2 }), this.control.end({ timeout: 2 })]).catch(() => undefined);
  }

  private unusableReason(): Error | undefined {
    if (this.writeFailure.failed) return new Error(`pg-record-store is unusable after a failure: ${this.writeFailure.failed.message}`, { cause: this.writeFailure.failed });
    if (this.closing || this.closed) return new Error('pg-record-store is closed');
    return undefined;
  }

  private fail(failure: Error): void {
    this.leader = false;
    if (this.writeFailure.record(failure)) log('error', 'pg-record-store: the database failed; this hub steps down', { database: this.where, error: failure.message });
  }

  private enqueue(op: Op<T>): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ op, resolve, reject });
      if (this.flushing) return;
      this.flushing = true;
      void this.runLoop();
    });
  }

  private async runLoop(): Promise<void> {
    // Yield once so a synchronous burst of puts joins the first batch.
    await Promise.resolve();
    try {
      while (this.queue.length > 0 && !this.writeFailure.failed) {
        const batch = this.queue;
        this.queue = [];
        await this.commit(batch);
      }
      if (this.writeFailure.failed) this.failAll(this.writeFailure.failed);
    } finally {
      this.flushing = false;
      const idle = this.idleWaiters;
      this.idleWaiters = [];
      for (const resolve of idle) resolve();
    }
  }

  /**
   * One statement for the batch, so one round trip and one commit: the last change to each id, each written only over
   * the version this hub holds (a new record only where there is none), and the NOTIFYs of what it changed (ids
   * grouped under the payload limit), and the ledger entries of the changes it wrote (the ledger's head is locked last,
   * so only for the statement's end and its commit). A change another hub beat is refused as `StaleRecord`, and its
   * entries are not appended; the rest commit. A statement is its own transaction: what it NOTIFYs and appends is
   * delivered at its commit, never for a change rolled back.
   */
  private async commit(batch: Pending<T>[]): Promise<void> {
    const last = new Map<string, Op<T>>();
    for (const { op } of batch) last.set(op.kind === 'put' ? op.record.id : op.id, op);
    const inserts: Extract<Op<T>, { kind: 'put' }>[] = [];
    const updates: (Extract<Op<T>, { kind: 'put' }> & { rev: number })[] = [];
    const deletes: { id: string; rev: number }[] = [];
    for (const op of last.values()) {
      const rev = this.revs.get(op.kind === 'put' ? op.record.id : op.id);
      if (op.kind === 'delete') {
        if (rev !== undefined) deletes.push({ id: op.id, rev });
      } else if (rev === undefined) inserts.push(op);
      else updates.push({ ...op, rev });
    }
    const entries: (LedgerRow & { owner: string })[] = [];
    if (this.ledger) {
      for (const [id, op] of last) {
        const before = this.records.get(id);
        if (op.kind === 'delete' && before === undefined) continue;
        for (const row of this.ledger(before, op.kind === 'put' ? op.record : undefined)) entries.push({ ...row, owner: id });
      }
    }
    const written = new Map<string, number | null>();
    try {
      const [answer] = await within(this.conn<{ ok: boolean; written: [string, number | null][] }[]>`
        with guard as (select pg_backend_pid() = ${this.backendPid} as ok),
        ins as (
          insert into elicitly_requests (id, updated_at, body, rev)
          select id, updated_at, body, 1 from unnest(${inserts.map((p) => p.record.id)}::text[], ${inserts.map((p) => p.record.updatedAt)}::bigint[], ${inserts.map((p) => p.text)}::text[]) as t(id, updated_at, body)
          where (select ok from guard)
          on conflict (id) do nothing returning id, rev),
        upd as (
          update elicitly_requests r set updated_at = t.updated_at, body = t.body, rev = t.rev + 1
          from unnest(${updates.map((p) => p.record.id)}::text[], ${updates.map((p) => p.record.updatedAt)}::bigint[], ${updates.map((p) => p.text)}::text[], ${updates.map((p) => p.rev)}::bigint[]) as t(id, updated_at, body, rev)
          where r.id = t.id and r.rev = t.rev and (select ok from guard) returning r.id, r.rev),
        del as (
          delete from elicitly_requests r using unnest(${deletes.map((d) => d.id)}::text[], ${deletes.map((d) => d.rev)}::bigint[]) as t(id, rev)
          where r.id = t.id and r.rev = t.rev and (select ok from guard) returning r.id, null::bigint as rev),
        w as (select id, rev from ins union all select id, rev from upd union all select id, rev from del),
        ledgered as materialized (
          select elicitly_ledger_append(${this.now()}::bigint, array_agg(e.type order by e.n), array_agg(e.request order by e.n), array_agg(e.body order by e.n)) as entries
          from unnest(${entries.map((e) => e.type)}::text[], ${entries.map((e) => e.id)}::text[], ${entries.map((e) => e.body)}::text[], ${entries.map((e) => e.owner)}::text[]) with ordinality as e(type, request, body, owner, n)
          where e.owner in (select id from w)),
        notified as materialized (
          select pg_notify(${CHANNEL}, json_build_object('hub', ${this.hub}::text, 'ids', json_agg(id))::text)
          from (select id, sum(octet_length(to_json(id)::text) + 1) over (order by id) / ${MAX_PAYLOAD} as part from w) parts
          group by part)
        select (select ok from guard) as ok,
          (select count(*) from notified) as notices,
          (select count(*) from ledgered) as ledgered,
          coalesce((select json_agg(json_build_array(id, rev)) from w), '[]'::json) as written`, this.commitTimeoutMs, `${this.where} did not commit within ${this.commitTimeoutMs} ms`);
      // A session that dropped and came back is another session: its batch is not this one's to finish.
      if (answer?.ok !== true) throw new Error('the database session this store wrote on is gone');
      for (const [id, rev] of answer.written) written.set(id, rev === null ? null : Number(rev));
    } catch (error) {
      // Whether the statement landed is unknown: nothing of the batch is acknowledged, and the store is done.
      const failure = toError(error);
      this.fail(failure);
      for (const p of batch) p.reject(failure);
      return;
    }
    for (const [id, rev] of written) {
      const op = last.get(id);
      if (rev === null || op?.kind !== 'put') {
        this.records.delete(id);
        this.revs.delete(id);
      } else {
        this.records.set(id, op.record);
        this.revs.set(id, rev);
      }
    }
    const deleting = new Set(deletes.map((d) => d.id));
    for (const p of batch) {
      const id = p.op.kind === 'put' ? p.op.record.id : p.op.id;
      // A delete of a record this hub never had is already done; every other change not written lost to another hub.
      if (written.has(id) || (last.get(id)?.kind === 'delete' && !deleting.has(id))) p.resolve();
      else p.reject(new StaleRecord(id));
    }
  }

  private failAll(error: Error): void {
    const queued = this.queue;
    this.queue = [];
    for (const p of queued) p.reject(error);
  }
}


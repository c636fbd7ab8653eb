// The requests' store in a team's PostgreSQL database (`ELICITLY_DATABASE_URL`): the same contract as the journal
// (record-store.ts). One hub writes it at a time, by construction: the store holds a session advisory lock on its one
// connection for as long as it is open, and a batch commits only on that same session. Puts queued while a batch
// commits go in the next one (group commit, one transaction each); a put resolves only after its COMMIT.
import postgres from 'postgres';
import { log } from '../log.js';
import { MemoryRecords, recordToWrite, type RecordStore, type StoredRecord } from './record-store.js';

/** The advisory lock keys (one namespace, two locks): migrations, and the single writer of the requests. */
const LOCK_NAMESPACE = 0x454c4943; // "ELIC"
const MIGRATION_LOCK = 1;
const WRITER_LOCK = 2;

/**
 * The schema, one step per version, applied in order at open under the migration lock, each step in the same
 * transaction as the version it brings. `body` is the record's JSON text exactly as written (as the journal keeps its
 * lines): jsonb would reorder keys, and refuse a `\u0000` that JSON allows.
 */
export const MIGRATIONS: readonly string[] = [
  `create table elicitly_requests (id text primary key, updated_at bigint not null, body text not null);
   create table elicitly_requests_quarantine (id bigserial primary key, moved_at timestamptz not null default now(), reason text not null, body text not null)`,
];

export interface PgRecordStoreOptions {
  url: string;
  parse?: (raw: unknown) => StoredRecord | undefined;
  /** A batch not committed by then fails the store (a paused or unreachable database): nothing in it was acknowledged. Default 5 s. */
  commitTimeoutMs?: number;
  /** Opening (connect, lock, migrate, read) gives up after this. Default 10 s. */
  openTimeoutMs?: number;
}

type Op<T> = { kind: 'put'; record: T; text: string } | { kind: 'delete'; id: string };
interface Pending<T> { op: Op<T>; resolve: () => void; reject: (error: Error) => void }

const toError = (error: unknown) => (error instanceof Error ? error : new Error(String(error)));

/** Rejects with `what` after `ms` unless `promise` settles first. */
async function within<V>(promise: Promise<V>, ms: number, what: string): Promise<V> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(what)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** The database's address without its password, for a log line or a refusal. */
export function describeDatabase(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.username ? `${u.username}@` : ''}${u.host}${u.pathname}`;
  } catch {
    return 'the database';
  }
}

export class PgRecordStore<T extends StoredRecord> extends MemoryRecords<T> implements RecordStore<T> {
  private queue: Pending<T>[] = [];
  private flushing = false;
  private idleWaiters: (() => void)[] = [];
  private closing = false;
  private closed = false;

  private constructor(
    private readonly sql: postgres.Sql,
    private readonly conn: postgres.ReservedSql,
    private readonly backendPid: number,
    private readonly commitTimeoutMs: number,
    private readonly where: string,
  ) {
    super();
  }

  static async open<T extends StoredRecord>(options: PgRecordStoreOptions): Promise<PgRecordStore<T>> {
    const where = describeDatabase(options.url);
    const sql = postgres(options.url, { max: 1, idle_timeout: 0, connect_timeout: 10, onnotice: () => undefined, prepare: true });
    let conn: postgres.ReservedSql | undefined;
    try {
      return await within((async () => {
        conn = await sql.reserve();
        const [locked] = await conn<{ locked: boolean; pid: number }[]>`select pg_try_advisory_lock(${LOCK_NAMESPACE}, ${WRITER_LOCK}) as locked, pg_backend_pid() as pid`;
        if (!locked?.locked) throw new Error(`another hub is writing the requests in ${where}; one hub writes a database at a time`);
        await migrate(conn);
        const store = new PgRecordStore<T>(sql, conn, locked.pid, options.commitTimeoutMs ?? 5000, where);
        await store.load(options.parse);
        log('debug', 'pg-record-store: opened', { database: where, records: store.records.size });
        return store;
      })(), options.openTimeoutMs ?? 10_000, `${where} did not answer within ${options.openTimeoutMs ?? 10_000} ms`);
    } catch (error) {
      conn?.release();
      await sql.end({ timeout: 1 }).catch(() => undefined);
      throw error;
    }
  }

  /** Every row into memory; a row its validator refuses is moved to the quarantine table, in one transaction. */
  private async load(parse: ((raw: unknown) => StoredRecord | undefined) | undefined): Promise<void> {
    const rows = await this.conn<{ id: string; body: string }[]>`select id, body from elicitly_requests order by updated_at, id`;
    const damaged: { id: string; body: string; reason: string }[] = [];
    for (const row of rows) {
      let raw: unknown;
      try {
        raw = JSON.parse(row.body);
      } catch {
        damaged.push({ ...row, reason: 'malformed' });
        continue;
      }
      const record = parse ? parse(raw) : (raw as StoredRecord);
      if (record === undefined || record.id !== row.id) {
        damaged.push({ ...row, reason: 'invalid' });
        continue;
      }
      // The caller's parse is the only type guard for T, as in the journal.
      this.records.set(record.id, record as T);
    }
    if (damaged.length === 0) return;
    await this.conn`begin`;
    try {
      for (const d of damaged) {
        await this.conn`insert into elicitly_requests_quarantine (reason, body) values (${d.reason}, ${d.body})`;
        await this.conn`delete from elicitly_requests where id = ${d.id}`;
      }
      await this.conn`commit`;
    } catch (error) {
      await this.conn`rollback`.catch(() => undefined);
      throw error;
    }
    this.damageFound = { quarantined: damaged.length, quarantineFile: `${this.where}: table elicitly_requests_quarantine` };
    log('error', 'pg-record-store: DAMAGED ROWS moved aside; the requests they held are gone from the inbox', { database: this.where, rows: damaged.map((d) => ({ id: d.id, reason: d.reason })) });
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
    if (this.flushing) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    if (this.closed) return;
    this.closed = true;
    // Ending the session releases the writer lock.
    this.conn.release();
    await this.sql.end({ timeout: 2 }).catch(() => undefined);
  }

  private unusableReason(): Error | undefined {
    if (this.writeFailure.failed) return new Error(`pg-record-store is unusable after a failure: ${this.writeFailure.failed.message}`, { cause: this.writeFailure.failed });
    if (this.closing || this.closed) return new Error('pg-record-store is closed');
    return undefined;
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

  /** One transaction for the batch: the last change to each id, on the session that holds the writer lock. */
  private async commit(batch: Pending<T>[]): Promise<void> {
    const last = new Map<string, Op<T>>();
    for (const { op } of batch) last.set(op.kind === 'put' ? op.record.id : op.id, op);
    const puts = [...last.values()].filter((op): op is Extract<Op<T>, { kind: 'put' }> => op.kind === 'put');
    const deletes = [...last.values()].filter((op): op is Extract<Op<T>, { kind: 'delete' }> => op.kind === 'delete').map((op) => op.id);
    try {
      await within((async () => {
        await this.conn`begin`;
        try {
          // A reconnected session would have lost the lock, and another hub may have written since: never commit there.
          const [session] = await this.conn<{ pid: number }[]>`select pg_backend_pid() as pid`;
          if (session?.pid !== this.backendPid) throw new Error('the database session that held the writer lock is gone');
          if (puts.length > 0) {
            await this.conn`insert into elicitly_requests (id, updated_at, body)
              select * from unnest(${puts.map((p) => p.record.id)}::text[], ${puts.map((p) => p.record.updatedAt)}::bigint[], ${puts.map((p) => p.text)}::text[])
              on conflict (id) do update set updated_at = excluded.updated_at, body = excluded.body`;
          }
          if (deletes.length > 0) await this.conn`delete from elicitly_requests where id = any(${deletes}::text[])`;
          await this.conn`commit`;
        } catch (error) {
          await this.conn`rollback`.catch(() => undefined);
          throw error;
        }
      })(), this.commitTimeoutMs, `${this.where} did not commit within ${this.commitTimeoutMs} ms`);
    } catch (error) {
      // Whether the COMMIT landed is unknown: nothing of the batch is acknowledged, and the store is done.
      const failure = toError(error);
      if (this.writeFailure.record(failure)) log('error', 'pg-record-store: a write failed; this hub steps down', { database: this.where, error: failure.message });
      for (const p of batch) p.reject(failure);
      return;
    }
    for (const { op } of batch) {
      if (op.kind === 'put') this.records.set(op.record.id, op.record);
      else this.records.delete(op.id);
    }
    for (const p of batch) p.resolve();
  }

  private failAll(error: Error): void {
    const queued = this.queue;
    this.queue = [];
    for (const p of queued) p.reject(error);
  }
}

/** Applies the missing steps of MIGRATIONS under the migration lock (every hub of a database may open at once). */
async function migrate(conn: postgres.ReservedSql): Promise<void> {
  await conn`begin`;
  try {
    await conn`select pg_advisory_xact_lock(${LOCK_NAMESPACE}, ${MIGRATION_LOCK})`;
    await conn`create table if not exists elicitly_schema (version integer not null)`;
    const [row] = await conn<{ version: number }[]>`select version from elicitly_schema`;
    const from = row?.version ?? 0;
    if (from > MIGRATIONS.length) throw new Error(`the database's schema is version ${from}, newer than this hub knows (${MIGRATIONS.length}): update elicitly-companion`);
    for (let version = from; version < MIGRATIONS.length; version++) await conn.unsafe(MIGRATIONS[version] ?? '');
    if (row === undefined) await conn`insert into elicitly_schema (version) values (${MIGRATIONS.length})`;
    else if (from < MIGRATIONS.length) await conn`update elicitly_schema set version = ${MIGRATIONS.length}`;
    await conn`commit`;
  } catch (error) {
    await conn`rollback`.catch(() => undefined);
    throw error;
  }
}

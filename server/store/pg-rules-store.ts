// The person's (the team's) rules in a team's PostgreSQL database, and their passkeys (`list: 'passkeys'`, a table of
// the same shape): one row holding the whole list, as the file holds it, shared by every hub of the database. A hub
// replaces the list only over the version it read (compare-and-set, in the transaction that also NOTIFYs the others),
// so a rule saved on one hub is in force on every hub once the others have read the row, and two hubs changing the
// rules at once never lose each other's change: the later one is told `StaleRecord` and the engine makes it again from
// the newer list.
import { randomBytes } from 'node:crypto';
import type postgres from 'postgres';
import { z } from 'zod';
import { log } from '../log.js';
import { appendLedger, describeDatabase, migrate, session, toError, within, type LedgerRow } from './pg-schema.js';
import { StaleRecord } from './record-store.js';
import { RULES_KEY, RuleList, type RulesChange, type RulesStore } from './rules-file.js';

/** The lists kept this way: each its table (one row), its quarantine table and its NOTIFY channel, all named alike. */
const LISTS = { rules: 'elicitly_rules', passkeys: 'elicitly_passkeys' } as const;
const NoticeSchema = z.strictObject({ hub: z.string(), rev: z.number().int() });

export interface PgRulesStoreOptions<T> {
  url: string;
  /** The caller's validator for one entry (the rule schema); an entry it refuses is moved to the quarantine table. */
  parse: (raw: unknown) => T | undefined;
  /** Entries kept at most; the ones past it are quarantined. */
  max: number;
  /** A change not committed by then fails the store (a paused database). Default 5 s. */
  commitTimeoutMs?: number;
  /** Which list: the person's rules (default) or their passkeys and passkey setting. */
  list?: keyof typeof LISTS;
  /** The team's ledger entries of a change of the list, appended in the change's transaction. Absent: no ledger. */
  ledger?: (before: readonly T[], after: readonly T[]) => LedgerRow[];
  /** The ledger entries' time. Default Date.now. */
  now?: () => number;
}

interface Row { rev: string | number; body: string }

export class PgRulesStore<T extends { id: string }> extends RuleList<T> implements RulesStore<T> {
  private readonly hub = randomBytes(8).toString('hex');
  /** The list's table, named as its NOTIFY channel; its quarantine table beside it. */
  private readonly table: string;
  private readonly quarantine: string;
  private readonly listeners = new Set<(change: RulesChange<T>) => void>();
  private unlisten: (() => Promise<void>) | undefined;
  private listens = 0;
  private closed = false;

  private constructor(
    private readonly sql: postgres.Sql,
    private readonly options: PgRulesStoreOptions<T>,
    private readonly where: string,
    entries: readonly T[],
    /** The version of the list this hub holds; 0: no row yet. */
    private rev: number,
  ) {
    super(entries);
    this.table = LISTS[options.list ?? 'rules'];
    this.quarantine = `${this.table}_quarantine`;
  }

  static async open<T extends { id: string }>(options: PgRulesStoreOptions<T>): Promise<PgRulesStore<T>> {
    const where = describeDatabase(options.url);
    const sql = session(options.url);
    let store: PgRulesStore<T> | undefined;
    try {
      return await within((async () => {
        await migrate(sql);
        store = new PgRulesStore<T>(sql, options, where, [], 0);
        const listening = await sql.listen(store.table, (payload) => store?.notified(payload), () => store?.listened());
        store.unlisten = listening.unlisten;
        await store.load();
        return store;
      })(), 10_000, `${where} did not answer within 10000 ms`);
    } catch (error) {
      if (store) store.closed = true;
      await sql.end({ timeout: 1 }).catch(() => undefined);
      throw error;
    }
  }

  onRemoteChange(listener: (change: RulesChange<T>) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The list as stored now, validated; what does not validate is moved aside (in the same transaction as the rest). */
  private async load(): Promise<void> {
    const [row] = await this.sql<Row[]>`select rev, body from ${this.sql(this.table)} where id = 1`;
    if (!row) return;
    const { kept, damaged } = this.validate(row.body);
    this.entries = kept;
    this.rev = Number(row.rev);
    if (damaged.length === 0) return;
    await within(this.sql.begin(async (tx) => {
      for (const d of damaged) await tx`insert into ${this.sql(this.quarantine)} (reason, body) values (${d.reason}, ${d.text})`;
      const [updated] = await tx<{ rev: string | number }[]>`update ${this.sql(this.table)} set body = ${JSON.stringify(kept)}, rev = rev + 1 where id = 1 and rev = ${this.rev} returning rev`;
      if (updated) {
        this.rev = Number(updated.rev);
        await tx`select pg_notify(${this.table}, ${JSON.stringify({ hub: this.hub, rev: this.rev })})`;
      }
    }), this.timeout(), `${this.where} did not commit within ${this.timeout()} ms`);
    this.damageFound = { quarantined: damaged.length, quarantineFile: `${this.where}: table ${this.quarantine}` };
    log('error', 'pg-rules-store: DAMAGED RULES moved aside; they no longer answer anything', { database: this.where, rules: damaged.map((d) => d.reason) });
  }

  private validate(body: string): { kept: T[]; damaged: { reason: string; text: string }[] } {
    let raw: unknown;
    try {
      raw = JSON.parse(body);
    } catch {
      return { kept: [], damaged: [{ reason: 'malformed', text: body }] };
    }
    if (!Array.isArray(raw)) return { kept: [], damaged: [{ reason: 'not a list', text: body }] };
    const kept: T[] = [];
    const damaged: { reason: string; text: string }[] = [];
    const ids = new Set<string>();
    for (const entry of raw) {
      const rule = this.options.parse(entry);
      const reason = rule === undefined ? 'invalid' : ids.has(rule.id) ? 'repeated id' : kept.length >= this.options.max ? `past the ${this.options.max} kept` : null;
      if (reason !== null || rule === undefined) damaged.push({ reason: reason ?? 'invalid', text: JSON.stringify(entry) });
      else {
        ids.add(rule.id);
        kept.push(rule);
      }
    }
    return { kept, damaged };
  }

  private timeout(): number {
    return this.options.commitTimeoutMs ?? 5000;
  }

  /** Replaces the whole list over the version held; resolves once committed, and only then does memory change. */
  async replace(next: readonly T[]): Promise<void> {
    if (this.writeFailure.failed) throw this.writeFailure.failed;
    if (this.closed) throw new Error('pg-rules-store is closed');
    const body = JSON.stringify(next);
    let rev: number | null;
    try {
      rev = await within(this.sql.begin(async (tx) => {
        const [row] =
          this.rev === 0
            ? await tx<{ rev: string | number }[]>`insert into ${this.sql(this.table)} (id, rev, body) values (1, 1, ${body}) on conflict (id) do nothing returning rev`
            : await tx<{ rev: string | number }[]>`update ${this.sql(this.table)} set body = ${body}, rev = rev + 1 where id = 1 and rev = ${this.rev} returning rev`;
        if (!row) return null;
        const entries = this.options.ledger?.(this.entries, next) ?? [];
        if (entries.length > 0) await appendLedger(tx, (this.options.now ?? Date.now)(), entries);
        await tx`select pg_notify(${this.table}, ${JSON.stringify({ hub: this.hub, rev: Number(row.rev) })})`;
        return Number(row.rev);
      }), this.timeout(), `${this.where} did not commit within ${this.timeout()} ms`);
    } catch (error) {
      const failure = toError(error);
      if (this.writeFailure.record(failure)) log('error', 'pg-rules-store: a write failed; this hub steps down', { database: this.where, error: failure.message });
      throw failure;
    }
    if (rev === null) throw new StaleRecord(RULES_KEY);
    this.entries = [...next];
    this.rev = rev;
  }

  /**
   * Reads the list again; the change when it is newer than the one held. Run in the rules' turn. A hub that cannot read
   * the others' rules would answer by old ones: it steps down like a failed write.
   */
  async refresh(): Promise<{ before: readonly T[]; after: readonly T[] } | null> {
    let row: Row | undefined;
    try {
      [row] = await within(this.sql<Row[]>`select rev, body from ${this.sql(this.table)} where id = 1`, this.timeout(), `${this.where} did not answer within ${this.timeout()} ms`);
    } catch (error) {
      const failure = toError(error);
      if (this.writeFailure.record(failure)) log('error', 'pg-rules-store: could not read the rules; this hub steps down', { database: this.where, error: failure.message });
      throw failure;
    }
    if (!row || Number(row.rev) <= this.rev) return null;
    const before = this.entries;
    const { kept, damaged } = this.validate(row.body);
    if (damaged.length > 0) log('error', 'pg-rules-store: another hub wrote rules this hub cannot read; they are not applied here', { database: this.where, rules: damaged.map((d) => d.reason) });
    this.entries = kept;
    this.rev = Number(row.rev);
    return { before, after: kept };
  }

  private notified(payload: string): void {
    const notice = NoticeSchema.safeParse((() => {
      try {
        return JSON.parse(payload) as unknown;
      } catch {
        return undefined;
      }
    })());
    if (!notice.success || notice.data.hub === this.hub || notice.data.rev <= this.rev) return;
    this.deliver();
  }

  /** Listening again after the listener's connection dropped: the row is read again, whatever changed meanwhile. */
  private listened(): void {
    if (this.listens++ > 0) this.deliver();
  }

  /** Hands the change to the engine, which reads it in the rules' turn; with no listener, reads it now. */
  private deliver(): void {
    const change: RulesChange<T> = { apply: () => this.refresh() };
    if (this.listeners.size === 0) void change.apply().catch(() => undefined);
    for (const listener of this.listeners) listener(change);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.unlisten?.().catch(() => undefined);
    await this.sql.end({ timeout: 2 }).catch(() => undefined);
  }
}

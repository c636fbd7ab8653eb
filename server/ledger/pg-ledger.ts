// The team's ledger in its PostgreSQL database (`ELICITLY_DATABASE_URL`): one chain for every hub, in
// `elicitly_ledger`, signed with the team's key (the directory's, `ledger-key.json`). A change's entries are appended
// by the store that writes the change, in that change's own transaction (`requestRows`, `ruleRows`, `passkeyRows`, and
// `elicitly_ledger_append` in pg-schema.ts): the ledger never holds a change that did not commit nor lacks one that
// did, whichever hub made it and whichever crashed. What is not a stored change (a showing, the keys) is appended here.
// The hub that runs the timers signs a checkpoint over the chain's head. Each line is a file ledger's line, so
// `audit verify` checks it with the same code (`ledger-verify.ts`, through `ledgerSource`).
import type postgres from 'postgres';
import type { Receipt } from '../../shared/receipt.js';
import type { Rule } from '../../shared/rules.js';
import type { ApprovalRecord } from '../approvals/approval-record.js';
import { log } from '../log.js';
import { passkeyChanges, type PasskeyEntry } from '../passkeys/passkey-registry.js';
import { appendLedger, describeDatabase, migrate, session, toError, within, type LedgerRow } from '../store/pg-schema.js';
import { describeKey, hashable, keyChanges, receiptOf, type EngineLedger, type KeyDescriptor } from './decision-ledger.js';
import { canonical, entryLine, keyIdOf, readEntry, signCheckpoint, type KeyRole, type LedgerEvent } from './ledger-format.js';
import type { LedgerKey } from './ledger-store.js';
import type { LedgerSource } from './ledger-verify.js';
import { changeEvents, ruleEvents } from './request-events.js';

const rowOf = (event: LedgerEvent): LedgerRow => ({ type: event.type, id: 'id' in event ? event.id : null, body: canonical(event) });

/** A request's change as the team's ledger says it (`after` undefined: purged). */
export function requestRows(before: ApprovalRecord | undefined, after: ApprovalRecord | undefined): LedgerRow[] {
  if (after === undefined) return before ? [rowOf({ type: 'request.purged', id: before.id })] : [];
  return hashable(after.id, () => changeEvents(before, after)).map(rowOf);
}

export const ruleRows = (before: readonly Rule[], after: readonly Rule[]): LedgerRow[] => ruleEvents(before, after).map(rowOf);

export const passkeyRows = (before: readonly PasskeyEntry[], after: readonly PasskeyEntry[]): LedgerRow[] => passkeyChanges(before, after).map(rowOf);

export interface PgLedgerOptions {
  url: string;
  /** The team's signing key (the directory's): every hub signs with it, so one pinned key verifies the chain. */
  key: LedgerKey;
  /** Whether this hub runs the timers: only that hub signs checkpoints as entries come. */
  leads: () => boolean;
  now?: () => number;
  /** A checkpoint once this many entries are unsigned. Default 1,000. */
  checkpointEvery?: number;
  /** And at least this often while there are unsigned entries. Default a minute. */
  checkpointMs?: number;
  /** Every statement gives up after this (a paused database). Default 5 s. */
  timeoutMs?: number;
}

interface Head {
  idx: string | number;
  hash: string;
  checkpoint_idx: string | number | null;
  checkpoint_hash: string | null;
  checkpoint_at: string | number | null;
}

/** The chain's end and its newest checkpoint; `lock`: held for the rest of the transaction. */
async function readHead(sql: postgres.Sql | postgres.TransactionSql, lock = false): Promise<Head | undefined> {
  const [head] = await sql<Head[]>`select idx, hash, checkpoint_idx, checkpoint_hash, checkpoint_at from elicitly_ledger_head where id = 1 ${lock ? sql`for update` : sql``}`;
  return head;
}

const PAGE = 5000;

/** The team's ledger's lines, for `audit` (`ledger-verify.ts`): read in pages, by index, each read bounded by `ms`. */
export function ledgerSource(sql: postgres.Sql, ms = 10_000): LedgerSource {
  const bounded = <V>(promise: Promise<V>) => within(promise, ms, `the database did not answer within ${ms} ms`);
  return {
    name: 'table elicitly_ledger',
    async *lines(from: number) {
      let next = from;
      for (;;) {
        const rows = await bounded(sql<{ idx: string | number; line: string }[]>`select idx, line from elicitly_ledger where idx >= ${next} order by idx limit ${PAGE}`);
        for (const row of rows) yield row.line;
        const last = rows.at(-1);
        if (rows.length < PAGE || last === undefined) return;
        next = Number(last.idx) + 1;
      }
    },
    async size() {
      const [head] = await bounded(sql<{ idx: string | number }[]>`select idx from elicitly_ledger_head where id = 1`);
      return Number(head?.idx ?? 0);
    },
  };
}

export class PgLedger implements EngineLedger {
  readonly keyId: string;
  private failure: Error | undefined;
  private readonly timer: NodeJS.Timeout;
  private signing: Promise<void> | null = null;

  private constructor(
    private readonly sql: postgres.Sql,
    private readonly options: PgLedgerOptions,
    private readonly where: string,
  ) {
    this.keyId = keyIdOf(options.key.publicKey);
    // Checked at least every second, so "every N entries" holds within a second at any rate.
    this.timer = setInterval(() => void this.sign(false), Math.min(options.checkpointMs ?? 60_000, 1000));
    this.timer.unref();
  }

  static async open(options: PgLedgerOptions): Promise<PgLedger> {
    const sql = session(options.url);
    const where = describeDatabase(options.url);
    try {
      await within(migrate(sql), options.timeoutMs ?? 5000, `${where} did not answer within ${options.timeoutMs ?? 5000} ms`);
    } catch (error) {
      await sql.end({ timeout: 1 }).catch(() => undefined);
      throw error;
    }
    return new PgLedger(sql, options, where);
  }

  get failed(): Error | undefined {
    return this.failure;
  }

  private timeout(): number {
    return this.options.timeoutMs ?? 5000;
  }

  private bounded<V>(promise: Promise<V>): Promise<V> {
    return within(promise, this.timeout(), `${this.where} did not answer within ${this.timeout()} ms`);
  }

  /** A failed append fails the ledger: the engine steps the hub down, as for a failed write of the change itself. */
  private stepDown(error: unknown): never {
    const failure = toError(error);
    if (this.failure === undefined) {
      this.failure = failure;
      log('error', 'pg-ledger: could not append to the team\'s ledger; this hub steps down', { database: this.where, error: failure.message });
    }
    throw failure;
  }

  // A request's, the rules' and the passkeys' changes are appended by their stores, in the change's transaction, by the
  // hub that made it: nothing is left to do here, on that hub or on any other.
  recordChange = async (): Promise<void> => undefined;
  recordRules = async (): Promise<void> => undefined;
  purged = async (): Promise<void> => undefined;
  recordPasskey = async (): Promise<void> => undefined;

  private append(tx: postgres.Sql | postgres.TransactionSql, events: readonly LedgerEvent[]): Promise<void> {
    return appendLedger(tx, this.now(), events.map(rowOf));
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  async recordShown(id: string, surface: string, requestHash: string): Promise<void> {
    if (this.failure) throw this.failure;
    await this.bounded(this.append(this.sql, [{ type: 'request.shown', id, surface, requestHash }])).catch((error: unknown) => this.stepDown(error));
  }

  /**
   * The keys of one role as this hub read them from the directory, against what the ledger says of them: every hub
   * reads the same directory, so the difference is taken under the chain's lock and only the first hub to see a
   * change appends it.
   */
  async recordKeys(role: KeyRole, keys: readonly KeyDescriptor[]): Promise<void> {
    if (this.failure) throw this.failure;
    await this.bounded(this.sql.begin(async (tx) => {
      await tx`select 1 from elicitly_ledger_head where id = 1 for update`;
      const rows = await tx<{ line: string }[]>`select line from elicitly_ledger where type in ('key.added', 'key.removed') order by idx`;
      const known = new Map<string, string>();
      for (const { line } of rows) {
        const read = readEntry(line);
        if (!read.ok) continue;
        const { event } = read.entry;
        if (event.type === 'key.added' && event.role === role) known.set(event.keyId, describeKey(event));
        if (event.type === 'key.removed' && event.role === role) known.delete(event.keyId);
      }
      const events = keyChanges(known, role, keys);
      if (events.length > 0) await this.append(tx, events);
    })).catch((error: unknown) => this.stepDown(error));
  }

  /** Retention of the team's ledger is the database operator's: its rows are never removed by a hub. */
  prune = async (): Promise<void> => undefined;

  /** The decision's entry and the newest checkpoint, read from the database: any hub gives any decision's receipt. */
  async receipt(id: string): Promise<Receipt | null> {
    const [[row], head] = await this.bounded(Promise.all([
      this.sql<{ line: string }[]>`select line from elicitly_ledger where request_id = ${id} and type = 'request.decided' order by idx limit 1`,
      readHead(this.sql),
    ]));
    if (!row) return null;
    const read = readEntry(row.line);
    if (!read.ok || read.entry.event.type !== 'request.decided') return null;
    const checkpoint = head?.checkpoint_idx === null || head?.checkpoint_idx === undefined || head.checkpoint_hash === null ? null : { index: Number(head.checkpoint_idx), hash: head.checkpoint_hash };
    return receiptOf(read.entry, read.entry.event, checkpoint, this.keyId);
  }

  /**
   * A checkpoint over the chain's head when it is due (the timers' hub only) or `force`d (a closing hub signs what it
   * wrote). The head is read without a lock first, so a tick with nothing due holds no hub's append back.
   */
  private sign(force: boolean): Promise<void> {
    if (this.signing || this.failure) return this.signing ?? Promise.resolve();
    if (!force && !this.options.leads()) return Promise.resolve();
    const due = (head: Head | undefined): boolean => {
      if (!head) return false;
      const unsigned = Number(head.idx) - (head.checkpoint_idx === null ? 0 : Number(head.checkpoint_idx) + 1);
      if (unsigned <= 0) return false;
      return force || unsigned >= (this.options.checkpointEvery ?? 1000) || this.now() - Number(head.checkpoint_at ?? 0) >= (this.options.checkpointMs ?? 60_000);
    };
    this.signing = (async () => {
      const seen = await this.bounded(readHead(this.sql));
      if (!due(seen)) return;
      await this.bounded(this.sql.begin(async (tx) => {
        const head = await readHead(tx, true);
        if (!head || !due(head)) return;
        const size = Number(head.idx);
        const at = this.now();
        const event: LedgerEvent = { type: 'checkpoint', size, head: head.hash, keyId: this.keyId, signature: signCheckpoint(this.options.key.privateKey, size, head.hash, at) };
        const { entry, line } = entryLine(size, at, head.hash, event);
        await tx`insert into elicitly_ledger (idx, at, type, request_id, line) values (${size}, ${at}, 'checkpoint', null, ${line})`;
        await tx`update elicitly_ledger_head set idx = ${size + 1}, hash = ${entry.hash}, checkpoint_idx = ${size}, checkpoint_hash = ${entry.hash}, checkpoint_at = ${at} where id = 1`;
      }));
    })()
      // A checkpoint that could not be signed now is signed at the next tick, by this hub or the next to lead.
      .catch((error: unknown) => log('warn', 'pg-ledger: could not sign a checkpoint', { database: this.where, error: toError(error).message }))
      .finally(() => {
        this.signing = null;
      });
    return this.signing;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    if (this.signing) await this.signing;
    await this.sign(true);
    await this.sql.end({ timeout: 2 }).catch(() => undefined);
  }
}

/** Runs `run` over the team's ledger as `audit` reads it (its schema brought up to date first), then closes. */
export async function withTeamLedger<V>(url: string, run: (source: LedgerSource) => Promise<V>): Promise<V> {
  const sql = session(url);
  try {
    await within(migrate(sql), 10_000, `${describeDatabase(url)} did not answer within 10000 ms`);
    return await run(ledgerSource(sql));
  } finally {
    await sql.end({ timeout: 2 }).catch(() => undefined);
  }
}

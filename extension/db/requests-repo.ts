import type { DecidedVia, Status } from '../../shared/lifecycle.js';
import type { RequestView } from '../../shared/wire-protocol.js';
import type { Receipt } from '../../shared/receipt.js';
import type { ElicitlyDb } from './database.js';
import { PENDING, uncheckedPending } from './request-ranges.js';
import { RequestRowSchema, StoredRowSchema, type RequestRow, type StoredRow } from '../../kit/rows/rows.js';
import { reduceRequestEvent } from '../../kit/rows/request-reducer.js';

/** A stored row that no longer fits the schema is skipped, never rendered half-understood. */
export function readRow(raw: unknown): StoredRow | undefined {
  const parsed = StoredRowSchema.safeParse(raw);
  return parsed.success ? parsed.data : undefined;
}
export function readRows(raws: unknown[]): StoredRow[] {
  return raws.map(readRow).filter((r): r is StoredRow => r !== undefined);
}

export async function getRequest(db: ElicitlyDb, id: string): Promise<StoredRow | undefined> {
  return readRow(await db.requests.get(id));
}

/** Pending rows newest first; with `now`, only those not past their deadline (the inbox). */
export async function pendingRequests(db: ElicitlyDb, now?: number): Promise<StoredRow[]> {
  const rows = readRows(await uncheckedPending(db));
  return now === undefined ? rows : rows.filter((r) => r.expiresAt > now);
}

export async function pendingCount(db: ElicitlyDb, now: number): Promise<number> {
  return db.requests.where('[status+createdAt+elicitationId]').between(...PENDING)
    .filter((r) => r.expiresAt > now).count();
}

/** Stores a request the hub announced; `isNew` when the extension had not seen it before (worth a notification). */
export async function upsertView(db: ElicitlyDb, view: RequestView): Promise<{ row: RequestRow; isNew: boolean }> {
  return db.transaction('rw', db.requests, async () => {
    const previous = readRow(await db.requests.get(view.elicitationId));
    const [change] = reduceRequestEvent({ type: 'created', view }, { get: () => previous, pending: () => [] });
    if (!change) throw new Error('a created request changes its row');
    const row = RequestRowSchema.parse(change.row);
    await db.requests.put(row);
    return { row, isNew: previous === undefined };
  });
}

/** A request the hub listed that this browser could not keep, and why (it is not shown; the others are). */
export interface SkippedRow { elicitationId: string; reason: string }

function reasonOf(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return text.length > 300 ? `${text.slice(0, 299)}…` : text;
}

/**
 * Rows in one write when they can; otherwise each on its own, so a row the store refuses (a value nested too deep for
 * the browser's structured clone: "Maximum call stack") costs only itself. Runs inside the caller's transaction: a
 * refused put is caught here, so it does not abort the others.
 */
async function putEach(db: ElicitlyDb, rows: RequestRow[], skipped: SkippedRow[]): Promise<Set<string>> {
  try {
    await db.requests.bulkPut(rows);
    return new Set(rows.map((r) => r.elicitationId));
  } catch {
    const stored = new Set<string>();
    for (const row of rows) {
      try {
        await db.requests.put(row);
        stored.add(row.elicitationId);
      } catch (error) {
        skipped.push({ elicitationId: row.elicitationId, reason: reasonOf(error) });
      }
    }
    return stored;
  }
}

/**
 * A welcome lists everything pending at the hub. A row we still show as pending that is not in it left while we were
 * away: past its deadline it expired, otherwise it was withdrawn (or decided through another reviewer). A row with a
 * decision still in the outbox stays as it is until the hub answers that decision. One transaction: a page never sees
 * half a welcome, and nothing else writes a request between the upserts and the sweep of what the welcome left out.
 * A listed request that cannot be validated or stored is skipped and returned in `skipped`; it never takes the
 * others with it, and it is not swept either (the hub still lists it).
 */
export async function applyWelcome(db: ElicitlyDb, views: RequestView[], now: number): Promise<{ added: RequestRow[]; skipped: SkippedRow[] }> {
  return db.transaction('rw', db.requests, db.outbox, async () => {
    const listed = new Set(views.map((v) => v.elicitationId));
    const ids = [...listed];
    const held = new Map((await db.requests.bulkGet(ids)).flatMap((raw, i) => {
      const row = readRow(raw);
      return row ? [[ids[i] ?? '', row] as const] : [];
    }));
    const pending = await pendingRequests(db);
    const gone = pending.filter((r) => !listed.has(r.elicitationId)).map((r) => r.elicitationId);
    const queued = new Set(gone.length > 0 ? await db.outbox.where('elicitationId').anyOf(gone).keys() : []);
    const changes = reduceRequestEvent({ type: 'welcome', pending: views, now }, { get: (id) => held.get(id), pending: () => pending, waiting: (id) => queued.has(id) });
    const skipped: SkippedRow[] = [];
    const rows: RequestRow[] = [];
    for (const change of changes) {
      if (change.changes) {
        await db.requests.update(change.row.elicitationId, change.changes);
        continue;
      }
      try {
        rows.push(RequestRowSchema.parse(change.row));
      } catch (error) {
        skipped.push({ elicitationId: change.row.elicitationId, reason: reasonOf(error) });
      }
    }
    const stored = await putEach(db, rows, skipped);
    return { added: rows.filter((r) => !held.has(r.elicitationId) && stored.has(r.elicitationId)), skipped };
  });
}

export async function applyStatus(db: ElicitlyDb, id: string, status: Status, now: number, decidedVia?: DecidedVia, decidedBy?: string): Promise<void> {
  await db.transaction('rw', db.requests, async () => {
    const row = readRow(await db.requests.get(id));
    const event = { type: 'removed' as const, elicitationId: id, status, ...(decidedVia ? { decidedVia } : {}), ...(decidedBy ? { decidedBy } : {}), now };
    const [change] = reduceRequestEvent(event, { get: () => row, pending: () => [] });
    if (change?.changes) await db.requests.update(id, change.changes);
  });
}

/** Keeps a decision's receipt with its row (a row this browser does not have, or no longer has, is left alone). */
export async function storeReceipt(db: ElicitlyDb, id: string, receipt: Receipt): Promise<void> {
  await db.transaction('rw', db.requests, async () => {
    if (readRow(await db.requests.get(id))) await db.requests.update(id, { receipt });
  });
}

/** Expired requests leave the inbox by themselves, even with no hub to say so. */
export async function sweepExpired(db: ElicitlyDb, now: number): Promise<number> {
  // One transaction: a status the hub sends meanwhile (withdrawn, decided) is never overwritten with "expired".
  return db.transaction('rw', db.requests, async () => {
    const due = (await pendingRequests(db)).filter((r) => r.expiresAt <= now);
    for (const row of due) await db.requests.update(row.elicitationId, { status: 'expired', decidedAt: row.expiresAt });
    return due.length;
  });
}

/** Forgets finished requests older than the retention; pending ones are never pruned. */
export async function pruneHistory(db: ElicitlyDb, retentionDays: number, now: number): Promise<number> {
  const cutoff = now - retentionDays * 86_400_000;
  return db.requests.where('[createdAt+elicitationId]').below([cutoff]).filter((r) => r.status !== 'pending').delete();
}

import { Dexie } from 'dexie';
import type { Status } from '../../shared/lifecycle.js';
import type { RequestView } from '../../shared/wire-protocol.js';
import { searchWords } from '../../shared/search-words.js';
import type { ElicitlyDb } from './database.js';
import { RequestRowSchema, rowFromView, type RequestRow } from './rows.js';

/**
 * Compound-key bounds are written as "the prefix alone" to "the prefix then maxKey": a shorter array sorts before every
 * longer one it prefixes, and Dexie's maxKey (an array) after any number or string. Using maxKey twice in one key would
 * be invalid: IndexedDB refuses a key that contains the same array object twice.
 */
function prefixRange(prefix: unknown[]): [unknown[], unknown[]] {
  return [prefix, [...prefix, Dexie.maxKey]];
}
const PENDING = prefixRange(['pending']);

/** A stored row that no longer fits the schema is skipped, never rendered half-understood. */
export function readRow(raw: unknown): RequestRow | undefined {
  const parsed = RequestRowSchema.safeParse(raw);
  return parsed.success ? parsed.data : undefined;
}
function readRows(raws: unknown[]): RequestRow[] {
  return raws.map(readRow).filter((r): r is RequestRow => r !== undefined);
}

export async function getRequest(db: ElicitlyDb, id: string): Promise<RequestRow | undefined> {
  return readRow(await db.requests.get(id));
}

/** Pending rows newest first; with `now`, only those not past their deadline (the inbox). */
export async function pendingRequests(db: ElicitlyDb, now?: number): Promise<RequestRow[]> {
  const rows = readRows(await db.requests.where('[status+createdAt+elicitationId]').between(...PENDING).reverse().toArray());
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
    const row = RequestRowSchema.parse(rowFromView(view, previous));
    await db.requests.put(row);
    return { row, isNew: previous === undefined };
  });
}

/**
 * A welcome lists everything pending at the hub. A row we still show as pending that is not in it left while we were
 * away: past its deadline it expired, otherwise it was withdrawn (or decided through another reviewer). A row with a
 * decision still in the outbox stays as it is until the hub answers that decision. One transaction: a page never sees
 * half a welcome, and nothing else writes a request between the upserts and the sweep of what the welcome left out.
 */
export async function applyWelcome(db: ElicitlyDb, views: RequestView[], now: number): Promise<RequestRow[]> {
  const byId = new Map(views.map((v) => [v.elicitationId, v]));
  return db.transaction('rw', db.requests, db.outbox, async () => {
    const unique = [...byId.values()];
    const previous = (await db.requests.bulkGet(unique.map((v) => v.elicitationId))).map(readRow);
    const rows = unique.map((view, i) => RequestRowSchema.parse(rowFromView(view, previous[i])));
    await db.requests.bulkPut(rows);
    const stale = (await pendingRequests(db)).filter((r) => !byId.has(r.elicitationId));
    if (stale.length > 0) {
      const queued = new Set(await db.outbox.where('elicitationId').anyOf(stale.map((r) => r.elicitationId)).keys());
      for (const row of stale) {
        if (queued.has(row.elicitationId)) continue;
        await db.requests.update(row.elicitationId, { status: row.expiresAt <= now ? 'expired' : 'canceled', decidedAt: now });
      }
    }
    return rows.filter((_, i) => previous[i] === undefined);
  });
}

export async function applyStatus(db: ElicitlyDb, id: string, status: Status, now: number): Promise<void> {
  await db.transaction('rw', db.requests, async () => {
    const row = readRow(await db.requests.get(id));
    if (!row) return;
    const changes: Partial<RequestRow> = { status };
    if (status !== 'pending' && row.decidedAt === undefined) changes.decidedAt = now;
    await db.requests.update(id, changes);
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

export interface HistoryQuery {
  status?: Status;
  kind?: RequestRow['kind'];
  search?: string;
}
export interface HistoryCursor { createdAt: number; elicitationId: string }
interface HistoryPage { rows: RequestRow[]; next: HistoryCursor | null }

/** Below this many candidate rows a word search reads them all; above it, it walks the newest-first index instead. */
const SEARCH_CANDIDATE_LIMIT = 2000;

function indexFor(query: HistoryQuery): { index: string; prefix: unknown[] } {
  if (query.kind && query.status) return { index: '[kind+status+createdAt+elicitationId]', prefix: [query.kind, query.status] };
  if (query.kind) return { index: '[kind+createdAt+elicitationId]', prefix: [query.kind] };
  if (query.status) return { index: '[status+createdAt+elicitationId]', prefix: [query.status] };
  return { index: '[createdAt+elicitationId]', prefix: [] };
}

function matches(row: RequestRow, query: HistoryQuery, words: string[]): boolean {
  if (query.status && row.status !== query.status) return false;
  if (query.kind && row.kind !== query.kind) return false;
  return words.every((w) => row.words.some((rw) => rw.startsWith(w)));
}

function after(row: RequestRow, cursor: HistoryCursor | undefined): boolean {
  if (!cursor) return true;
  return row.createdAt < cursor.createdAt || (row.createdAt === cursor.createdAt && row.elicitationId < cursor.elicitationId);
}

/**
 * Newest first, `limit` rows after `cursor`, by keyset on a compound index (never offset): the cost of a page does
 * not grow with the table. Search matches every word as a prefix of a word of the message.
 */
export async function historyPage(db: ElicitlyDb, query: HistoryQuery, cursor?: HistoryCursor, limit = 50): Promise<HistoryPage> {
  const words = searchWords(query.search ?? '');
  let rows: RequestRow[];
  const firstWord = words[0];
  // One bounded read of the candidates' keys tells both whether the search is narrow and which rows it names.
  const keys = firstWord === undefined ? null : await db.requests.where('words').startsWith(firstWord).limit(SEARCH_CANDIDATE_LIMIT + 1).primaryKeys();
  if (keys !== null && keys.length <= SEARCH_CANDIDATE_LIMIT) {
    rows = readRows(await db.requests.bulkGet([...new Set(keys)]))
      .filter((r) => matches(r, query, words) && after(r, cursor))
      .sort((a, b) => b.createdAt - a.createdAt || (a.elicitationId < b.elicitationId ? 1 : -1))
      .slice(0, limit + 1);
  } else {
    const { index, prefix } = indexFor(query);
    const [lower, end] = prefixRange(prefix);
    const upper = cursor ? [...prefix, cursor.createdAt, cursor.elicitationId] : end;
    const range = db.requests.where(index).between(lower, upper, true, cursor === undefined).reverse();
    if (words.length === 0) {
      // The index range is the page. The cursor comes from the raw rows, so a corrupt row (skipped when read) makes a
      // page one shorter but can never end the history early.
      const raws = await range.limit(limit + 1).toArray();
      const last = raws[limit - 1];
      return { rows: readRows(raws.slice(0, limit)), next: raws.length > limit && last ? { createdAt: last.createdAt, elicitationId: last.elicitationId } : null };
    }
    rows = await range
      .filter((r) => {
        // A corrupt row must not take a slot of the limit nor reach matches().
        const row = readRow(r);
        return row !== undefined && matches(row, query, words);
      })
      .limit(limit + 1)
      .toArray();
  }
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return { rows: page, next: rows.length > limit && last ? { createdAt: last.createdAt, elicitationId: last.elicitationId } : null };
}

/** Everything, oldest first, for the reviewer's own export. */
export async function exportRequests(db: ElicitlyDb): Promise<RequestRow[]> {
  return readRows(await db.requests.orderBy('[createdAt+elicitationId]').toArray());
}

import { Dexie } from 'dexie';
import type { Status } from '../../shared/lifecycle.js';
import type { RequestView } from '../../shared/wire-protocol.js';
import { searchWords } from '../../shared/search-words.js';
import type { ElicitlyDb } from './database.js';
import { RequestRowSchema, rowFromView, type RequestRow } from './rows.js';
import type { Verdict } from './verdict.js';

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
  const byId = new Map(views.map((v) => [v.elicitationId, v]));
  return db.transaction('rw', db.requests, db.outbox, async () => {
    const unique = [...byId.values()];
    const previous = (await db.requests.bulkGet(unique.map((v) => v.elicitationId))).map(readRow);
    const skipped: SkippedRow[] = [];
    const rows: RequestRow[] = [];
    const isNew = new Set<string>();
    unique.forEach((view, i) => {
      try {
        rows.push(RequestRowSchema.parse(rowFromView(view, previous[i])));
        if (previous[i] === undefined) isNew.add(view.elicitationId);
      } catch (error) {
        skipped.push({ elicitationId: view.elicitationId, reason: reasonOf(error) });
      }
    });
    const stored = await putEach(db, rows, skipped);
    const stale = (await pendingRequests(db)).filter((r) => !byId.has(r.elicitationId));
    if (stale.length > 0) {
      const queued = new Set(await db.outbox.where('elicitationId').anyOf(stale.map((r) => r.elicitationId)).keys());
      for (const row of stale) {
        if (queued.has(row.elicitationId)) continue;
        await db.requests.update(row.elicitationId, { status: row.expiresAt <= now ? 'expired' : 'canceled', decidedAt: now });
      }
    }
    return { added: rows.filter((r) => isNew.has(r.elicitationId) && stored.has(r.elicitationId)), skipped };
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
  kind?: RequestRow['kind'];
  verdict?: Verdict;
  agent?: string;
  search?: string;
}
export interface HistoryCursor { createdAt: number; elicitationId: string }
export interface HistoryPage { rows: RequestRow[]; next: HistoryCursor | null }

/** Below this many candidate rows a word search reads them all; above it, it walks the newest-first index instead. */
const SEARCH_CANDIDATE_LIMIT = 2000;

/** The index whose leading parts are exactly the query's filters (database.ts has one per combination), and their values. */
function historyIndex(query: HistoryQuery): { index: string; prefix: unknown[] } {
  const filters = ([['kind', query.kind], ['verdict', query.verdict], ['agent', query.agent]] as const)
    .filter(([, value]) => value !== undefined);
  return {
    index: `[${[...filters.map(([name]) => name), 'createdAt', 'elicitationId'].join('+')}]`,
    prefix: filters.map(([, value]) => value),
  };
}

function matches(row: RequestRow, query: HistoryQuery, words: string[]): boolean {
  if (query.kind !== undefined && row.kind !== query.kind) return false;
  if (query.verdict !== undefined && row.verdict !== query.verdict) return false;
  if (query.agent !== undefined && row.agent !== query.agent) return false;
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
    const { index, prefix } = historyIndex(query);
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

/**
 * The agents the history knows, for the agent filter: one short index read per agent (a skip to the next name on
 * `[agent+createdAt+elicitationId]`), never a scan of the rows. At most `max`, alphabetical.
 */
export async function historyAgents(db: ElicitlyDb, max = 100): Promise<string[]> {
  const index = '[agent+createdAt+elicitationId]';
  const agents: string[] = [];
  let key = (await db.requests.orderBy(index).limit(1).keys())[0];
  while (Array.isArray(key) && typeof key[0] === 'string' && agents.length < max) {
    const agent = key[0];
    agents.push(agent);
    key = (await db.requests.where(index).above([agent, Dexie.maxKey]).limit(1).keys())[0];
  }
  return agents;
}

import { Dexie } from 'dexie';
import { searchWords } from '../../kit/core/search-words.js';
import type { ElicitlyDb } from './database.js';
import { prefixRange } from './request-ranges.js';
import { readRow, readRows } from './requests-repo.js';
import type { RequestRow, StoredRow } from '../../kit/rows/rows.js';
import type { Verdict } from '../../kit/rows/verdict.js';

// The history's queries, apart from the inbox's (requests-repo.ts): only the history and its export use them, and they
// load with those views rather than with the popup.

export interface HistoryQuery {
  kind?: RequestRow['kind'];
  verdict?: Verdict;
  agent?: string;
  search?: string;
}
export interface HistoryCursor { createdAt: number; elicitationId: string }
export interface HistoryPage { rows: StoredRow[]; next: HistoryCursor | null }

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
  let rows: StoredRow[];
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
    rows = readRows(await range
      .filter((r) => {
        // A corrupt row must not take a slot of the limit nor reach matches().
        const row = readRow(r);
        return row !== undefined && matches(row, query, words);
      })
      .limit(limit + 1)
      .toArray());
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

import type { DecidedVia, Status } from '../shared/lifecycle.js';
import { DEVICE_RECENT } from '../shared/peer-calls.js';
import type { RequestView } from '../shared/review-request.js';
import { endedChanges, leftWhileAway, rowFromView, type LocalOutcome, type RequestRow, type StoredRow } from '../extension/db/rows.js';
import { deriveVerdict } from '../extension/db/verdict.js';

/**
 * What the phone shows, held in memory only (it keeps no history of its own): the pending requests, and the recent
 * ended ones (the hub's `welcome.recent`, plus those that ended while the page was open), newest first.
 */
export interface RequestLists {
  pending: StoredRow[];
  recent: StoredRow[];
}

export const NO_REQUESTS: RequestLists = { pending: [], recent: [] };

/** The page's history is the hub's last DEVICE_RECENT plus what ended while it was open, up to this many. */
export const RECENT_LIMIT = DEVICE_RECENT * 2;

function endedAt(row: RequestRow): number {
  return row.decidedAt ?? row.expiresAt;
}

function newestFirst(rows: StoredRow[]): StoredRow[] {
  return [...rows].sort((a, b) => endedAt(b) - endedAt(a)).slice(0, RECENT_LIMIT);
}

/**
 * The page keeps no database, so its lists derive each row's verdict where the extension's database would, on every
 * change (verdict.ts), from the verdict known before it. The extension trusts only a decision it delivered itself;
 * here the hub's own outcome (`decided`) is the one there is, so a collected request still says which way it went.
 */
function withVerdict(row: RequestRow, previous: StoredRow | undefined, decided?: 'approved' | 'rejected'): StoredRow {
  const verdict = deriveVerdict(row, previous?.verdict);
  return { ...row, verdict: verdict === 'unknown' && decided ? decided : verdict };
}

function rowOf(view: RequestView, previous?: StoredRow): StoredRow {
  return withVerdict(rowFromView(view, previous), previous, view.outcome?.decision);
}

function byId(rows: readonly StoredRow[]): Map<string, StoredRow> {
  return new Map(rows.map((r) => [r.elicitationId, r]));
}

/**
 * A welcome (the first, or after a reconnect) replaces the pending list; what this page itself decided survives on the
 * rows it knew. The history keeps what ended while the page was open and the hub's list no longer holds; a request
 * this page showed as pending that the welcome lists nowhere left while it was away, as the extension's database
 * says it (`leftWhileAway`).
 */
export function applyWelcome(lists: RequestLists, pending: RequestView[], recent: RequestView[], now: number): RequestLists {
  const known = byId([...lists.pending, ...lists.recent]);
  const listed = new Set([...pending, ...recent].map((view) => view.elicitationId));
  const away = lists.pending.filter((r) => !listed.has(r.elicitationId)).map((r) => withVerdict({ ...r, ...leftWhileAway(r, now) }, r));
  const ended = [...recent.map((view) => rowOf(view, known.get(view.elicitationId))), ...away];
  const endedIds = new Set(ended.map((r) => r.elicitationId));
  return {
    pending: pending.map((view) => rowOf(view, known.get(view.elicitationId))),
    recent: newestFirst([...ended, ...lists.recent.filter((r) => !endedIds.has(r.elicitationId))]),
  };
}

/** A new request; one a rule decided as it was created goes straight to the history. */
export function applyCreated(lists: RequestLists, view: RequestView): RequestLists {
  const row = rowOf(view);
  const pending = lists.pending.filter((r) => r.elicitationId !== row.elicitationId);
  if (row.status === 'pending') return { ...lists, pending: [...pending, row] };
  return { pending, recent: newestFirst([row, ...lists.recent.filter((r) => r.elicitationId !== row.elicitationId)]) };
}

/** A request ended (decided anywhere, withdrawn, expired, collected): it moves from the inbox to the history. */
export function applyRemoved(lists: RequestLists, id: string, status: Status, decidedVia: DecidedVia | undefined, now: number): RequestLists {
  const row = lists.pending.find((r) => r.elicitationId === id) ?? lists.recent.find((r) => r.elicitationId === id);
  if (!row) return lists;
  const ended = withVerdict({ ...row, ...endedChanges(row, status, decidedVia, now) }, row);
  const pending = lists.pending.filter((r) => r.elicitationId !== id);
  if (status === 'pending') return { pending: [...pending, ended], recent: lists.recent.filter((r) => r.elicitationId !== id) };
  return { pending, recent: newestFirst([ended, ...lists.recent.filter((r) => r.elicitationId !== id)]) };
}

/** The hub took this page's decision: the row remembers what was sent, so its detail says it. */
export function recordOutcome(lists: RequestLists, id: string, outcome: LocalOutcome): RequestLists {
  const mark = (r: StoredRow): StoredRow => (r.elicitationId === id ? withVerdict({ ...r, outcome, delivery: 'delivered' }, r) : r);
  return { pending: lists.pending.map(mark), recent: lists.recent.map(mark) };
}

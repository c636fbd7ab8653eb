import type { DecidedVia, Status } from '../shared/lifecycle.js';
import { DEVICE_RECENT } from '../shared/peer-calls.js';
import type { RequestView } from '../shared/review-request.js';
import { reduceRequestEvent, type RequestEvent, type RowChange } from '../kit/rows/request-reducer.js';
import type { LocalOutcome, RequestRow, StoredRow } from '../kit/rows/rows.js';
import { deriveVerdict } from '../kit/rows/verdict.js';

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

function byId(rows: readonly StoredRow[]): Map<string, StoredRow> {
  return new Map(rows.map((r) => [r.elicitationId, r]));
}

/** The kit's reducer (kit/rows/request-reducer.ts) over the lists this page holds. */
function changesOf(lists: RequestLists, event: RequestEvent): RowChange[] {
  const known = byId([...lists.pending, ...lists.recent]);
  return reduceRequestEvent(event, { get: (id) => known.get(id), pending: () => lists.pending });
}

/**
 * The lists with `changes` applied: a pending row goes to (or stays in) the inbox, in the order given; an ended one
 * to the top of the history. `decided`: the hub's own outcome of a request it sent a view of.
 */
function withChanges(lists: RequestLists, changes: readonly RowChange[], decided: ReadonlyMap<string, 'approved' | 'rejected'>, replacePending: boolean): RequestLists {
  const rows = changes.map((c) => withVerdict(c.row, c.previous, decided.get(c.row.elicitationId)));
  const changed = new Set(rows.map((r) => r.elicitationId));
  const keep = (r: StoredRow) => !changed.has(r.elicitationId);
  const pending = [...(replacePending ? [] : lists.pending.filter(keep)), ...rows.filter((r) => r.status === 'pending')];
  const ended = rows.filter((r) => r.status !== 'pending');
  return { pending, recent: newestFirst([...ended, ...lists.recent.filter(keep)]) };
}

function outcomes(views: readonly RequestView[]): Map<string, 'approved' | 'rejected'> {
  return new Map(views.flatMap((v) => (v.outcome ? [[v.elicitationId, v.outcome.decision] as const] : [])));
}

/**
 * A welcome (the first, or after a reconnect) replaces the pending list; what this page itself decided survives on the
 * rows it knew. The history keeps what ended while the page was open and the hub's list no longer holds; a request
 * this page showed as pending that the welcome lists nowhere left while it was away, as the extension's database
 * says it (`leftWhileAway`).
 */
export function applyWelcome(lists: RequestLists, pending: RequestView[], recent: RequestView[], now: number): RequestLists {
  return withChanges(lists, changesOf(lists, { type: 'welcome', pending, recent, now }), outcomes([...recent, ...pending]), true);
}

/** A new request; one a rule decided as it was created goes straight to the history. */
export function applyCreated(lists: RequestLists, view: RequestView): RequestLists {
  return withChanges(lists, changesOf(lists, { type: 'created', view }), outcomes([view]), false);
}

/** A request ended (decided anywhere, withdrawn, expired, collected): it moves from the inbox to the history. */
export function applyRemoved(lists: RequestLists, id: string, status: Status, decidedVia: DecidedVia | undefined, now: number, decidedBy?: string): RequestLists {
  const changes = changesOf(lists, { type: 'removed', elicitationId: id, status, ...(decidedVia ? { decidedVia } : {}), ...(decidedBy ? { decidedBy } : {}), now });
  return changes.length === 0 ? lists : withChanges(lists, changes, new Map(), false);
}

/** The hub took this page's decision: the row remembers what was sent, so its detail says it. */
export function recordOutcome(lists: RequestLists, id: string, outcome: LocalOutcome): RequestLists {
  const mark = (r: StoredRow): StoredRow => (r.elicitationId === id ? withVerdict({ ...r, outcome, delivery: 'delivered' }, r) : r);
  return { pending: lists.pending.map(mark), recent: lists.recent.map(mark) };
}

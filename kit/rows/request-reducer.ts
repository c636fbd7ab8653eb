import type { DecidedVia, Status } from '../../shared/lifecycle.js';
import type { RequestView } from '../../shared/review-request.js';
import { endedChanges, leftWhileAway, rowFromView, type RequestRow, type StoredRow } from './rows.js';

/**
 * The one reducer of the hub's news about requests, for every surface that keeps rows: the extension stores what it
 * returns in its database (requests-repo.ts, inside its transactions), the phone page keeps it in memory
 * (phone/request-lists.ts). Pure: it is handed the rows the surface holds and returns the rows that change; the
 * surface derives verdicts and writes them its own way.
 */
export type RequestEvent =
  /** The hub's welcome: everything pending at the hub (and, for a page that keeps no history, its recent ended ones). */
  | { type: 'welcome'; pending: readonly RequestView[]; recent?: readonly RequestView[]; now: number }
  /** A new request (one a rule decided at creation arrives decided). */
  | { type: 'created'; view: RequestView }
  /** A request ended, or (a rare `pending`) came back. */
  | { type: 'removed'; elicitationId: string; status: Status; decidedVia?: DecidedVia; decidedBy?: string; now: number };

/** What the reducer needs to know of a surface's rows. */
export interface HeldRows {
  get(elicitationId: string): StoredRow | undefined;
  /** The rows it shows as pending now (a welcome looks for the ones that left while it was away). */
  pending(): readonly StoredRow[];
  /** A row whose own decision is still on its way to the hub: a welcome that does not list it leaves it be. */
  waiting?(elicitationId: string): boolean;
}

/**
 * A changed row, with what it was before (undefined: new to this surface). `changes`: the fields that changed on a row
 * the surface holds (an update), absent for a row made from the hub's view of it (written whole).
 */
export interface RowChange {
  row: RequestRow;
  previous: StoredRow | undefined;
  changes?: Partial<RequestRow>;
}

export function reduceRequestEvent(event: RequestEvent, held: HeldRows): RowChange[] {
  switch (event.type) {
    case 'created': {
      const previous = held.get(event.view.elicitationId);
      return [{ row: rowFromView(event.view, previous), previous }];
    }
    case 'removed': {
      const previous = held.get(event.elicitationId);
      if (!previous) return [];
      const changes = endedChanges(previous, event.status, event.decidedVia, event.now, event.decidedBy);
      return [{ row: { ...previous, ...changes }, previous, changes }];
    }
    case 'welcome': {
      // The last listing of an id wins, as a map of the welcome would keep it.
      const listed = new Map<string, RequestView>();
      for (const view of [...(event.recent ?? []), ...event.pending]) listed.set(view.elicitationId, view);
      const changes: RowChange[] = [...listed.values()].map((view) => {
        const previous = held.get(view.elicitationId);
        return { row: rowFromView(view, previous), previous };
      });
      for (const row of held.pending()) {
        if (listed.has(row.elicitationId) || held.waiting?.(row.elicitationId)) continue;
        const left = leftWhileAway(row, event.now);
        changes.push({ row: { ...row, ...left }, previous: row, changes: left });
      }
      return changes;
    }
  }
}

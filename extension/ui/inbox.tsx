import { pendingRequests } from '../db/requests-repo.js';
import type { ElicitlyDb } from '../db/database.js';
import type { RequestRow } from '../db/rows.js';
import { age, timeLeft } from './format-time.js';
import { KIND_LABEL } from './labels.js';
import { useLiveQuery } from './use-live-query.js';
import { useNow } from './use-now.js';
import { VisibleText } from './visible-text.js';

/**
 * Every pending row, read live regardless of deadline; the ticking clock (not the query) hides the expired ones, so
 * the subscription is not torn down every second.
 */
export function usePendingRequests(db: ElicitlyDb, now: number): RequestRow[] | undefined {
  const rows = useLiveQuery(() => pendingRequests(db), [db]);
  return rows?.filter((row) => row.expiresAt > now);
}

export function Inbox({ db, onOpen }: { db: ElicitlyDb; onOpen(id: string): void }) {
  const now = useNow();
  const rows = usePendingRequests(db, now);
  if (rows === undefined) return <p class="muted">Loading…</p>;
  if (rows.length === 0) {
    return (
      <section class="empty">
        <p>Nothing to review.</p>
        <p class="muted">
          Add elicitly-companion to your agent as an MCP server (<code>npx elicitly-companion</code>); its requests appear here.
        </p>
      </section>
    );
  }
  return (
    <ul class="inbox" aria-label="Pending requests">
      {rows.map((row) => (
        <li key={row.elicitationId}>
          <button type="button" class="inbox-item" onClick={() => onOpen(row.elicitationId)}>
            <span class="message"><VisibleText text={row.message} /></span>{' '}
            <span class="meta">
              <span class={`kind kind-${row.kind}`}>{KIND_LABEL[row.kind]}</span>
              {' · '}
              <span class="agent"><VisibleText text={row.agent} /></span>
              {' · '}
              <span>{age(row.createdAt, now)}</span>
              {' · '}
              <span class="deadline">{timeLeft(row.expiresAt, now)}</span>
            </span>
          </button>
        </li>
      ))}
    </ul>
  );
}

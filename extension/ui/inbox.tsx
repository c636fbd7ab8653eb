import type { ElicitlyDb } from '../db/database.js';
import type { RequestRow } from '../../kit/rows/rows.js';
import type { ReviewerClient, Decision } from '../../kit/messages.js';
import { InboxList } from '../../kit/ui/inbox-list.js';
import { pendingRequests } from './page-reads.js';
import { useLiveQuery } from './use-live-query.js';

/**
 * Every pending row, read live regardless of deadline; the ticking clock (not the query) hides the expired ones, so
 * the subscription is not torn down every second.
 */
export function usePendingRequests(db: ElicitlyDb, now: number): RequestRow[] | undefined {
  const rows = useLiveQuery(() => pendingRequests(db), [db]);
  return rows?.filter((row) => row.expiresAt > now);
}

const EMPTY = (
  <>
    <p>Nothing to review.</p>
    <p class="muted">
      Add elicitly-companion to your agent as an MCP server (<code>npx elicitly-companion</code>); its requests appear here.
    </p>
  </>
);

/** The kit's inbox over the extension's database. `onOpen` is handed the row shown, so the review opens with it at once. */
export function Inbox({ db, client, onOpen }: { db: ElicitlyDb; client?: ReviewerClient; onOpen(id: string, row?: RequestRow): void }) {
  const rows = useLiveQuery(() => pendingRequests(db), [db]);
  return <InboxList rows={rows} {...(client ? { decide: (d: Decision) => client.decide(d) } : {})} open={{ onOpen }} empty={EMPTY} />;
}

import type { ElicitlyDb } from '../db/database.js';
import { uncheckedPending } from '../db/request-ranges.js';
import type { ConnectionState, StoredRow } from '../../kit/rows/rows.js';
import type { Settings } from '../../kit/rows/settings-schema.js';

/**
 * The checks (page-checks.ts), fetched once: `mountApp` starts the fetch as the page opens, so it runs alongside the
 * first paint and the database's opening, and every read below waits for it before it hands anything over.
 */
export const loadChecks = () => import('./page-checks.js');

// What the shell and the inbox read, each row checked exactly as the worker's repos check it (requests-repo.ts,
// settings-repo.ts): the raw read first (Dexie's live queries see it), then the check.

/** Pending rows newest first; a row that no longer fits is skipped. */
export async function pendingRequests(db: ElicitlyDb): Promise<StoredRow[]> {
  const raws = await uncheckedPending(db);
  return (await loadChecks()).readRows(raws);
}

export async function getRequest(db: ElicitlyDb, id: string): Promise<StoredRow | undefined> {
  const raw: unknown = await db.requests.get(id);
  return (await loadChecks()).readRow(raw);
}

export async function readSettings(db: ElicitlyDb): Promise<Settings> {
  const raw: unknown = (await db.settings.get('current'))?.value;
  return (await loadChecks()).parseSettings(raw);
}

export async function readConnection(db: ElicitlyDb): Promise<ConnectionState | undefined> {
  const raw: unknown = (await db.connection.get('current'))?.value;
  return (await loadChecks()).parseConnection(raw);
}

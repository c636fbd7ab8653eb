import { useEffect, useState } from 'preact/hooks';
import type { Status } from '../../shared/lifecycle.js';
import type { ElicitlyDb } from '../db/database.js';
import { exportRequests, historyPage, type HistoryCursor, type HistoryQuery } from '../db/requests-repo.js';
import type { RequestRow } from '../db/rows.js';
import { dateTime } from './format-time.js';
import { KIND_LABEL } from './labels.js';
import { useLiveQuery } from './use-live-query.js';
import { VisibleText } from './visible-text.js';

const PAGE_SIZE = 50;
const SEARCH_DEBOUNCE_MS = 150;
const STATUSES: Status[] = ['pending', 'approved', 'rejected', 'canceled', 'expired', 'consumed'];

interface Loaded { rows: RequestRow[]; next: HistoryCursor | null }

/**
 * The first `pages` pages, each fetched by keyset from the previous page's cursor, re-read together whenever the
 * table changes: a new row then shifts every loaded page consistently instead of leaving a gap at a page boundary.
 */
async function loadPages(db: ElicitlyDb, query: HistoryQuery, pages: number): Promise<Loaded> {
  const rows: RequestRow[] = [];
  let next: HistoryCursor | null = null;
  for (let i = 0; i < pages; i++) {
    const page = await historyPage(db, query, next ?? undefined, PAGE_SIZE);
    rows.push(...page.rows);
    next = page.next;
    if (!next) break;
  }
  return { rows, next };
}

function localDate(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

/** A download through a temporary link to a blob, so the extension needs no downloads permission. */
async function downloadExport(db: ElicitlyDb): Promise<void> {
  const rows = await exportRequests(db);
  const blob = new Blob([JSON.stringify(rows, null, 2)], { type: 'application/json' });
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = `elicitly-history-${localDate(new Date())}.json`;
  document.body.append(link);
  link.click();
  link.remove();
  // Revoking right away can cancel the download in some browsers; the blob is freed a little later instead.
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

export function History({ db, onOpen }: { db: ElicitlyDb; onOpen(id: string): void }) {
  const [status, setStatus] = useState<Status | ''>('');
  const [kind, setKind] = useState<RequestRow['kind'] | ''>('');
  const [searchText, setSearchText] = useState('');
  const [search, setSearch] = useState('');
  const [pages, setPages] = useState(1);
  const [exportError, setExportError] = useState<string | null>(null);

  useEffect(() => {
    const timer = setTimeout(() => {
      const next = searchText.trim();
      if (next === search) return;
      setSearch(next);
      setPages(1);
    }, SEARCH_DEBOUNCE_MS);
    return () => clearTimeout(timer);
  }, [searchText, search]);

  const query: HistoryQuery = {};
  if (status) query.status = status;
  if (kind) query.kind = kind;
  if (search) query.search = search;
  const loaded = useLiveQuery(() => loadPages(db, query, pages), [db, status, kind, search, pages]);

  const onExport = () => {
    setExportError(null);
    downloadExport(db).catch(() => setExportError('The export failed: the history could not be read.'));
  };

  return (
    <section class="history">
      <div class="filters">
        <select aria-label="Status" value={status} onChange={(e) => {
          // Another filter is another list: start again from its first page.
          setStatus(e.currentTarget.value as Status | '');
          setPages(1);
        }}>
          <option value="">All</option>
          {STATUSES.map((s) => <option key={s} value={s}>{s}</option>)}
        </select>
        <select aria-label="Kind" value={kind} onChange={(e) => {
          setKind(e.currentTarget.value as RequestRow['kind'] | '');
          setPages(1);
        }}>
          <option value="">All</option>
          <option value="approval">{KIND_LABEL.approval}</option>
          <option value="proposal">{KIND_LABEL.proposal}</option>
        </select>
        <input
          type="search"
          aria-label="Search"
          placeholder="Search messages"
          value={searchText}
          onInput={(e) => setSearchText(e.currentTarget.value)}
        />
        <button type="button" onClick={onExport}>Export JSON</button>
      </div>
      {exportError && <p role="alert" class="error">{exportError}</p>}
      {loaded === undefined ? (
        <p class="muted">Loading…</p>
      ) : loaded.rows.length === 0 ? (
        <p class="muted">No requests match.</p>
      ) : (
        <table aria-label="History">
          <thead>
            <tr>
              <th scope="col">Created</th>
              <th scope="col">Kind</th>
              <th scope="col">Status</th>
              <th scope="col">Message</th>
              <th scope="col">Agent</th>
            </tr>
          </thead>
          <tbody>
            {loaded.rows.map((row) => (
              <tr key={row.elicitationId}>
                <td class="nowrap">{dateTime(row.createdAt)}</td>
                <td>{KIND_LABEL[row.kind]}</td>
                <td><span class={`status status-${row.status}`}>{row.status}</span></td>
                <td>
                  <button type="button" class="link" onClick={() => onOpen(row.elicitationId)}><VisibleText text={row.message} /></button>
                </td>
                <td><VisibleText text={row.agent} /></td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {loaded?.next && (
        <button type="button" onClick={() => setPages((n) => n + 1)}>Load more</button>
      )}
    </section>
  );
}

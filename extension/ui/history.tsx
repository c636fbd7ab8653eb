import { useEffect, useMemo, useState } from 'preact/hooks';
import { revealHidden } from '../../kit/core/visible-text.js';
import type { ElicitlyDb } from '../db/database.js';
import { exportBlob, type ExportFormat } from '../db/export-history.js';
import { historyAgents, historyPage, type HistoryCursor, type HistoryQuery } from '../db/history-queries.js';
import { VerdictSchema, type RequestRow, type StoredRow } from '../../kit/rows/rows.js';
import type { Rule } from '../../shared/rules.js';
import { rulesById } from '../db/rules-repo.js';
import type { Verdict } from '../../kit/rows/verdict.js';
import { KIND_LABEL, VERDICT_FILTER_LABEL } from '../../kit/ui/labels.js';
import { decisionSummary, requestSummary } from '../../kit/ui/request-summary.js';
import { useLiveQuery } from './use-live-query.js';
import { visibleChildren } from '../../kit/ui/visible-text.js';
import './history.css';

const PAGE_SIZE = 50;
const SEARCH_DEBOUNCE_MS = 150;

interface Loaded { rows: StoredRow[]; next: HistoryCursor | null }

/**
 * The first `pages` pages, each fetched by keyset from the previous page's cursor, re-read together whenever the
 * table changes: a new row then shifts every loaded page consistently instead of leaving a gap at a page boundary.
 */
async function loadPages(db: ElicitlyDb, query: HistoryQuery, pages: number): Promise<Loaded> {
  const rows: StoredRow[] = [];
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
function download(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  // Revoking right away can cancel the download in some browsers; the blob is freed a little later instead.
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

const EXPORTS: { format: ExportFormat; label: string; extension: string }[] = [
  { format: 'jsonl', label: 'Export JSON Lines', extension: 'jsonl' },
  { format: 'csv', label: 'Export CSV', extension: 'csv' },
];

/**
 * Exports what the filters show, all of it. The exporter is small and bundled: loaded on first use it cost more than
 * it saved, as splitting it off made the bundler split the popup's shared code into more, less compressible chunks.
 */
function ExportButtons({ db, query }: { db: ElicitlyDb; query: HistoryQuery }) {
  const [progress, setProgress] = useState<number | null>(null);
  const [error, setError] = useState<string | null>(null);
  const run = (format: ExportFormat, extension: string) => {
    setError(null);
    setProgress(0);
    exportBlob(db, query, format, setProgress)
      .then(({ blob }) => download(blob, `elicitly-history-${localDate(new Date())}.${extension}`))
      .catch(() => setError('The export failed: the history could not be read.'))
      .finally(() => setProgress(null));
  };
  return (
    <>
      <span>
        {EXPORTS.map((e) => (
          <button key={e.format} type="button" disabled={progress !== null} onClick={() => run(e.format, e.extension)}>{e.label}</button>
        ))}
        {progress !== null && <span role="status" class="muted">Exporting… {progress.toLocaleString()} rows</span>}
      </span>
      {error && <p role="alert" class="error">{error}</p>}
    </>
  );
}

/** The page's rows: a component of its own, so a render for another reason (the agents arriving) leaves them be. */
function HistoryTable({ rows, rules, onOpen }: { rows: StoredRow[]; rules: ReadonlyMap<string, Rule> | undefined; onOpen(id: string): void }) {
  return (
    <table aria-label="History">
      <thead>
        <tr>
          <th scope="col">Created</th>
          <th scope="col">Kind</th>
          <th scope="col">Decision</th>
          <th scope="col">Message</th>
          <th scope="col">Agent</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => {
          const summary = requestSummary(row);
          const decision = decisionSummary(row, rules);
          return (
            <tr key={row.elicitationId}>
              <td class="nowrap">{summary.created}</td>
              <td>{summary.kind}</td>
              <td>
                <span class={`verdict verdict-${decision.verdict}`}>{visibleChildren(decision.label)}</span>
                {decision.note && <span class="decision-note">{visibleChildren(decision.note)}</span>}
              </td>
              <td>
                <button type="button" class="link" onClick={() => onOpen(row.elicitationId)}>{visibleChildren(summary.title)}</button>
              </td>
              <td>{visibleChildren(summary.agent)}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

const KINDS = Object.keys(KIND_LABEL).filter(isKind);

function isKind(value: string): value is RequestRow['kind'] {
  return Object.hasOwn(KIND_LABEL, value);
}

function isVerdict(value: string): value is Verdict {
  return VerdictSchema.safeParse(value).success;
}

export function History({ db, onOpen }: { db: ElicitlyDb; onOpen(id: string): void }) {
  const [verdict, setVerdict] = useState<Verdict | ''>('');
  const [kind, setKind] = useState<RequestRow['kind'] | ''>('');
  const [agent, setAgent] = useState('');
  const [searchText, setSearchText] = useState('');
  const [search, setSearch] = useState('');
  const [pages, setPages] = useState(1);

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
  if (kind) query.kind = kind;
  if (verdict) query.verdict = verdict;
  if (agent) query.agent = agent;
  if (search) query.search = search;
  const loaded = useLiveQuery(() => loadPages(db, query, pages), [db, verdict, kind, agent, search, pages]);
  const agents = useLiveQuery(() => historyAgents(db), [db]);
  const rules = useLiveQuery(() => rulesById(db), [db]);
  // A chosen agent whose rows were all pruned still names what the list is filtered by.
  const agentOptions = agent && agents && !agents.includes(agent) ? [agent, ...agents] : (agents ?? []);
  // The same element while the rows and rules are the same: Preact then skips it without a look at its 50 rows.
  const table = useMemo(() => loaded && <HistoryTable rows={loaded.rows} rules={rules} onOpen={onOpen} />, [loaded, rules, onOpen]);

  return (
    <section class="history">
      <div class="filters">
        <select aria-label="Kind" value={kind} onChange={(e) => {
          // Another filter is another list: start again from its first page.
          const value = e.currentTarget.value;
          setKind(isKind(value) ? value : '');
          setPages(1);
        }}>
          <option value="">All kinds</option>
          {KINDS.map((k) => <option key={k} value={k}>{KIND_LABEL[k]}</option>)}
        </select>
        <select aria-label="Decision" value={verdict} onChange={(e) => {
          const value = e.currentTarget.value;
          setVerdict(isVerdict(value) ? value : '');
          setPages(1);
        }}>
          <option value="">All decisions</option>
          {VerdictSchema.options.map((v) => <option key={v} value={v}>{VERDICT_FILTER_LABEL[v]}</option>)}
        </select>
        <select aria-label="Agent" value={agent} onChange={(e) => {
          setAgent(e.currentTarget.value);
          setPages(1);
        }}>
          <option value="">All agents</option>
          {agentOptions.map((a) => <option key={a} value={a}>{revealHidden(a)}</option>)}
        </select>
        <input
          type="search"
          aria-label="Search"
          placeholder="Search messages"
          value={searchText}
          onInput={(e) => setSearchText(e.currentTarget.value)}
        />
        <ExportButtons db={db} query={query} />
      </div>
      {loaded === undefined ? (
        <p class="muted">Loading…</p>
      ) : loaded.rows.length === 0 ? (
        <p class="muted">No requests match.</p>
      ) : (
        table
      )}
      {loaded?.next && (
        <button type="button" onClick={() => setPages((n) => n + 1)}>Load more</button>
      )}
    </section>
  );
}

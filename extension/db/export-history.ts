import type { ElicitlyDb } from './database.js';
import { historyPage, type HistoryCursor, type HistoryQuery } from './history-queries.js';
import type { RequestRow, StoredRow } from '../../kit/rows/rows.js';
import { collected } from '../../kit/rows/verdict.js';

export type ExportFormat = 'jsonl' | 'csv';

/** Rows read per keyset page, and so about what the export holds in memory at once (a page and its text). */
export const EXPORT_PAGE_SIZE = 500;

export const EXPORT_TYPE: Record<ExportFormat, string> = {
  jsonl: 'application/x-ndjson',
  csv: 'text/csv;charset=utf-8',
};

function iso(ms: number | undefined): string | null {
  if (ms === undefined) return null;
  const date = new Date(ms);
  // A finite number outside the Date range (zod lets it through) is written as the number, never thrown on.
  return Number.isNaN(date.getTime()) ? String(ms) : date.toISOString();
}

/** One request as exported: the row as stored, minus the search words, plus the decision and whether it was collected. */
export function exportRecord(row: StoredRow) {
  return {
    elicitationId: row.elicitationId,
    kind: row.kind,
    decision: row.verdict,
    collected: collected(row, row.verdict),
    status: row.status,
    agent: row.agent,
    requester: row.requester,
    createdAt: iso(row.createdAt),
    decidedAt: iso(row.decidedAt),
    expiresAt: iso(row.expiresAt),
    message: row.message,
    request: row.request,
    renderedTemplate: row.renderedTemplate,
    outcome: row.outcome ?? null,
    /** Who decided: the person here or in the chat, or one of their rules (`ruleId`). */
    decidedVia: row.decidedVia ?? null,
    /** The reviewer whose browser or phone decided it, on a team's hub. */
    decidedBy: row.decidedBy ?? null,
    ruleId: row.ruleId ?? null,
    delivery: row.delivery ?? null,
    refusal: row.refusal ?? null,
    /** The hub ledger's receipt for the decision (`elicitly-companion audit verify --receipt`), when the hub sent it. */
    receipt: row.receipt ?? null,
  };
}

function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    // Nested deeper than the stack allows: it cannot have been stored either, but an export must never stop on one row.
    return '"(nested too deeply to export)"';
  }
}

/**
 * Cells a spreadsheet would run as a formula — starting with =, +, - or @ (or their full-width forms, or a tab or
 * carriage return, which some apps skip before looking) — get a leading apostrophe: the app shows the text, and
 * the apostrophe tells a reader it was added. JSON Lines is the lossless export; this one is for spreadsheets.
 */
const FORMULA_START = /^[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/;

/** One field per RFC 4180: quoted when it holds a comma, a quote or a line break, with quotes doubled inside. */
export function csvCell(text: string): string {
  const safe = FORMULA_START.test(text) ? `'${text}` : text;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

export const CSV_COLUMNS = [
  'elicitationId', 'createdAt', 'decidedAt', 'kind', 'decision', 'collected', 'decidedBy', 'agent', 'message', 'comment', 'included', 'values', 'context',
] as const;

function csvLine(cells: readonly string[]): string {
  return `${cells.map(csvCell).join(',')}\r\n`;
}

function csvRecord(row: StoredRow): string {
  const record = exportRecord(row);
  const { outcome } = row;
  return csvLine([
    record.elicitationId,
    record.createdAt ?? '',
    record.decidedAt ?? '',
    record.kind,
    record.decision,
    record.collected === null ? '' : record.collected ? 'yes' : 'no',
    record.decidedBy ?? '',
    record.agent,
    record.message,
    outcome?.comment ?? '',
    outcome?.included ? jsonText(outcome.included) : '',
    outcome?.values ? jsonText(outcome.values) : '',
    csvContext(row.request),
  ]);
}

/** Only approvals and proposals carry a context; an ask has none to export. */
function csvContext(request: RequestRow['request']): string {
  if (request.kind !== 'approval' && request.kind !== 'proposal') return '';
  return request.context === null ? '' : jsonText(request.context);
}

/** The text of one page of rows. */
function pageText(rows: StoredRow[], format: ExportFormat): string {
  if (format === 'csv') return rows.map(csvRecord).join('');
  return rows.map((row) => `${jsonText(exportRecord(row))}\n`).join('');
}

/**
 * The filtered history, newest first like the list, one keyset page at a time: each chunk is one page's text, so
 * nothing holds more than a page of rows. A CSV starts with a byte-order mark (spreadsheets read UTF-8 only with one)
 * and a header line.
 */
export async function* exportChunks(db: ElicitlyDb, query: HistoryQuery, format: ExportFormat, pageSize = EXPORT_PAGE_SIZE): AsyncGenerator<{ text: string; rows: number }> {
  if (format === 'csv') yield { text: `\uFEFF${csvLine(CSV_COLUMNS)}`, rows: 0 };
  let cursor: HistoryCursor | undefined;
  do {
    const page = await historyPage(db, query, cursor, pageSize);
    if (page.rows.length > 0) yield { text: pageText(page.rows, format), rows: page.rows.length };
    cursor = page.next ?? undefined;
  } while (cursor);
}

/**
 * The export as a file. Each page becomes its own Blob as soon as it is written, so its text can be collected; the
 * file is a Blob of those parts, which the browser keeps in its blob storage (and on disk when large), not on the
 * page's heap.
 */
export async function exportBlob(db: ElicitlyDb, query: HistoryQuery, format: ExportFormat, onProgress?: (rows: number) => void, pageSize = EXPORT_PAGE_SIZE): Promise<{ blob: Blob; rows: number }> {
  const parts: Blob[] = [];
  let rows = 0;
  for await (const chunk of exportChunks(db, query, format, pageSize)) {
    parts.push(new Blob([chunk.text]));
    rows += chunk.rows;
    onProgress?.(rows);
  }
  return { blob: new Blob(parts, { type: EXPORT_TYPE[format] }), rows };
}

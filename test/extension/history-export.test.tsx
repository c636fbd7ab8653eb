// @vitest-environment node
// The history export: RFC 4180 CSV with a formula guard, JSON Lines, the filters respected, and 100,000 rows exported
// in keyset pages with the heap bounded by a page, not by the export (Node's Blob keeps its bytes off the JS heap, as
// a browser's blob storage does).
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ElicitlyDb } from '../../extension/db/database.js';
import { CSV_COLUMNS, csvCell, exportBlob, exportRecord } from '../../extension/db/export-history.js';
import { getRequest } from '../../extension/db/requests-repo.js';
import { rowFromView, type RequestRow, type StoredRow } from '../../kit/rows/rows.js';
import type { RequestView } from '../../shared/wire-protocol.js';
import { freshDb, proposalView } from './fakes.js';
import { stressScale } from '../helpers/stress.js';
import { applyStatus } from '../../extension/db/requests-repo.js';

/** The paged export's memory bound, over 100,000 rows under `npm run stress` and 20,000 in `npm test`. */
const EXPORT_ROWS = stressScale(20_000, 100_000);

const T = 1_700_000_000_000;

let db: ElicitlyDb;
beforeEach(() => {
  db = freshDb();
});
afterEach(() => db.close());

function approvalRow(i: number, overrides: Partial<RequestView> = {}): RequestRow {
  const message = overrides.message ?? `History entry ${i}: deploy service ${i % 97} to staging`;
  return rowFromView({
    elicitationId: `el_${String(i).padStart(6, '0')}`,
    kind: 'approval',
    status: i % 2 === 0 ? 'approved' : 'rejected',
    message,
    createdAt: T + i * 1000,
    expiresAt: T + i * 1000 + 3_600_000,
    requester: { client: 'bench-agent', pid: 7 },
    request: { kind: 'approval', mode: 'json', message, context: { n: i, note: 'a, "quoted" value' }, requestedSchema: null, labels: { ok: 'Approve', cancel: 'Decline' }, timeoutSeconds: 3600 },
    renderedTemplate: null,
    ...overrides,
  });
}

/** RFC 4180 read back: quoted fields may hold commas, CRLF and doubled quotes. */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let i = 0;
  let quoted = false;
  while (i < text.length) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') { field += '"'; i += 2; continue; }
      if (ch === '"') { quoted = false; i++; continue; }
      field += ch; i++; continue;
    }
    if (ch === '"' && field === '') { quoted = true; i++; continue; }
    if (ch === ',') { record.push(field); field = ''; i++; continue; }
    if (ch === '\r' && text[i + 1] === '\n') { record.push(field); records.push(record); record = []; field = ''; i += 2; continue; }
    if (ch === '\r' || ch === '\n' || ch === '"') throw new Error(`bare ${JSON.stringify(ch)} at ${i}: not RFC 4180`);
    field += ch; i++;
  }
  if (field !== '' || record.length > 0) throw new Error('the last record does not end with CRLF');
  return records;
}

describe('csvCell', () => {
  const cases: [string, string, string][] = [
    ['plain text as it is', 'Deploy service 12', 'Deploy service 12'],
    ['empty', '', ''],
    ['a comma: quoted', 'a, b', '"a, b"'],
    ['a quote: quoted, doubled', 'say "yes"', '"say ""yes"""'],
    ['a line feed: quoted', 'one\ntwo', '"one\ntwo"'],
    ['a CRLF: quoted', 'one\r\ntwo', '"one\r\ntwo"'],
    ['= starts a formula: apostrophe', '=HYPERLINK("http://x","y")', '"\'=HYPERLINK(""http://x"",""y"")"'],
    ['+ starts a formula: apostrophe', '+1+1', "'+1+1"],
    ['- starts a formula: apostrophe', '-2+3', "'-2+3"],
    ['@ starts a formula: apostrophe', '@SUM(A1)', "'@SUM(A1)"],
    ['a leading tab: apostrophe', '\t=1', "'\t=1"],
    ['a leading CR: apostrophe and quoted', '\r=1', '"\'\r=1"'],
    ['full-width equals: apostrophe', '\uFF1D1+1', "'\uFF1D1+1"],
    ['= later in the text is text', 'a=b', 'a=b'],
    ['a leading space is not a formula', ' =1', ' =1'],
  ];
  it.each(cases)('%s', (_name, input, expected) => {
    expect(csvCell(input)).toBe(expected);
  });
});

describe('the export of the filtered history', () => {
  it('CSV: BOM and header, one CRLF record per request newest first, tricky text read back intact', async () => {
    const tricky = 'Ship "v2", then\nrestart =NOW()';
    const proposal = rowFromView(proposalView('el_prop', T + 50_000, { status: 'consumed', requester: { client: '-agent', pid: 9 } }));
    await db.requests.bulkPut([
      approvalRow(1, { message: tricky }),
      approvalRow(2, { status: 'canceled' }),
      { ...proposal, verdict: 'approved', outcome: { decision: 'approved', action: 'submit', values: { name: 'NorthMark', employeeCount: 250 }, included: ['name', 'employeeCount'], comment: '@me, check' }, delivery: 'delivered' },
    ]);
    const { blob, rows } = await exportBlob(db, {}, 'csv');
    expect(rows).toBe(3);
    expect(blob.type).toBe('text/csv;charset=utf-8');
    // text() decodes as TextDecoder does, dropping the byte-order mark: look at the bytes for it.
    expect([...new Uint8Array(await blob.slice(0, 3).arrayBuffer())]).toEqual([0xef, 0xbb, 0xbf]);
    const records = parseCsv(await blob.text());
    expect(records[0]).toEqual([...CSV_COLUMNS]);
    expect(records.slice(1).map((r) => r[0])).toEqual(['el_prop', 'el_000002', 'el_000001']);
    const byColumn = (r: string[]) => Object.fromEntries(CSV_COLUMNS.map((c, i) => [c, r[i]]));
    expect(byColumn(records[1]!)).toEqual({
      elicitationId: 'el_prop', createdAt: new Date(T + 50_000).toISOString(), decidedAt: '', kind: 'proposal', decision: 'approved',
      collected: 'yes', decidedBy: '', agent: "'-agent", message: 'Sync NorthMark Strategies from Apollo into Salesforce', comment: "'@me, check",
      included: '["name","employeeCount"]', values: '{"name":"NorthMark","employeeCount":250}', context: JSON.stringify(proposal.request.kind === 'proposal' && proposal.request.context),
    });
    expect(byColumn(records[2]!)).toMatchObject({ decision: 'withdrawn', collected: '', values: '' });
    expect(byColumn(records[3]!)).toMatchObject({ message: tricky, decision: 'rejected', collected: 'no', context: '{"n":1,"note":"a, \\"quoted\\" value"}' });
  });

  it('on a team\'s hub, who decided: the reviewer\'s name in the CSV column and the JSON Lines record, from the hub\'s notice', async () => {
    await db.requests.bulkPut([approvalRow(7, { status: 'pending' })]);
    await applyStatus(db, 'el_000007', 'approved', T + 9000, 'phone', 'Ana Pérez');
    const records = parseCsv(await (await exportBlob(db, {}, 'csv')).blob.text());
    const byColumn = (r: string[]) => Object.fromEntries(CSV_COLUMNS.map((c, i) => [c, r[i]]));
    expect(byColumn(records[1]!)).toMatchObject({ elicitationId: 'el_000007', decidedBy: 'Ana Pérez' });
    const [line] = (await (await exportBlob(db, {}, 'jsonl')).blob.text()).trim().split('\n');
    expect(JSON.parse(line ?? '{}')).toMatchObject({ elicitationId: 'el_000007', decidedVia: 'phone', decidedBy: 'Ana Pérez' });
  });

  it('JSON Lines: one record per line with the decision, collected, ISO times, and no search words', async () => {
    const rows = [approvalRow(1), approvalRow(2, { status: 'consumed' }), approvalRow(3, { status: 'approved', decidedAt: T + 3500 })];
    await db.requests.bulkPut(rows);
    const { blob } = await exportBlob(db, {}, 'jsonl');
    expect(blob.type).toBe('application/x-ndjson');
    const lines = (await blob.text()).split('\n');
    expect(lines.pop()).toBe('');
    const records = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(records.map((r) => [r.elicitationId, r.decision, r.collected])).toEqual([
      ['el_000003', 'approved', false], ['el_000002', 'unknown', true], ['el_000001', 'rejected', false],
    ]);
    expect(records[0]).toEqual(JSON.parse(JSON.stringify(exportRecord((await getRequest(db, 'el_000003'))!))));
    expect(records[0]).toMatchObject({ createdAt: new Date(T + 3000).toISOString(), decidedAt: new Date(T + 3500).toISOString(), outcome: null, request: rows[2]!.request });
    expect(records[0]).not.toHaveProperty('words');
    expect(records[0]).toMatchObject({ receipt: null });
  });

  it("JSON Lines: a decision's receipt, as the hub sent it, is exported with its row", async () => {
    const receipt = {
      ledgerIndex: 41, entryHash: 'a'.repeat(64), requestHash: 'b'.repeat(64), decisionHash: 'c'.repeat(64), decidedVia: 'extension', decidedAt: T + 3500,
      checkpoint: { index: 1000, hash: 'd'.repeat(64) }, verify: 'elicitly-companion audit verify --receipt <file with this receipt>',
    };
    await db.requests.bulkPut([{ ...approvalRow(3, { status: 'approved', decidedAt: T + 3500 }), receipt }]);
    const { blob } = await exportBlob(db, {}, 'jsonl');
    expect(JSON.parse((await blob.text()).trim())).toMatchObject({ elicitationId: 'el_000003', receipt });
  });

  it('exports exactly what the filters show, across pages', async () => {
    const rows = Array.from({ length: 23 }, (_, i) => approvalRow(i, { requester: { client: i % 3 === 0 ? 'constructor' : 'cursor', pid: 1 } }));
    await db.requests.bulkPut(rows);
    const { blob, rows: count } = await exportBlob(db, { verdict: 'approved', agent: 'constructor', search: 'deploy' }, 'jsonl', undefined, 2);
    const ids = (await blob.text()).trim().split('\n').map((l) => (JSON.parse(l) as { elicitationId: string }).elicitationId);
    const expected = rows.filter((r) => r.status === 'approved' && r.agent === 'constructor').map((r) => r.elicitationId).reverse();
    expect(ids).toEqual(expected);
    expect(count).toBe(expected.length);
  });
});

describe(`${EXPORT_ROWS.toLocaleString('en')} rows`, () => {
  // Retained heap is what a page holds between garbage collections; a forced collection makes the samples exact.
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const heap = () => {
    gc();
    gc();
    return process.memoryUsage().heapUsed;
  };

  it('are exported page by page: the heap never holds more than a small part of the export', async () => {
    const TOTAL = EXPORT_ROWS;
    for (let from = 0; from < TOTAL; from += 5000) {
      await db.requests.bulkPut(Array.from({ length: 5000 }, (_, k) => approvalRow(from + k)));
    }
    const base = heap();
    const retained: number[] = [];
    const { blob, rows } = await exportBlob(db, {}, 'jsonl', (n) => {
      if (n % (TOTAL / 10) === 0) retained.push(heap() - base);
    });
    expect(rows).toBe(TOTAL);
    expect(retained).toHaveLength(10);
    const peak = Math.max(...retained);
    const first = JSON.parse((await blob.slice(0, 4000).text()).split('\n')[0]!) as { elicitationId: string };
    const last = JSON.parse((await blob.slice(blob.size - 4000).text()).trim().split('\n').at(-1)!) as { elicitationId: string };
    expect([first.elicitationId, last.elicitationId]).toEqual([`el_${String(TOTAL - 1).padStart(6, '0')}`, 'el_000000']);

    // The same export loaded at once, measured the same way, for scale: what the bound must rule out.
    const before = heap();
    // Written through the database, so every row has its verdict: read raw, as the bound is about the rows themselves.
    const all = await db.requests.orderBy('[createdAt+elicitationId]').reverse().toArray() as StoredRow[];
    const text = all.map((r) => `${JSON.stringify(exportRecord(r))}\n`).join('');
    const loadAll = heap() - before;
    expect(text.length).toBe(blob.size);

    console.log(`export of ${TOTAL} rows: ${(blob.size / 1e6).toFixed(1)} MB; heap retained while exporting at most ${(peak / 1e6).toFixed(1)} MB; loaded at once ${(loadAll / 1e6).toFixed(1)} MB`);
    expect(blob.size).toBeGreaterThan(TOTAL * 500);
    const bound = blob.size / 10;
    expect(peak).toBeLessThan(bound);
    expect(loadAll).toBeGreaterThan(bound);
  }, 120_000);
});

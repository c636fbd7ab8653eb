// The history as a person uses it: each row says what was decided and whether the agent collected it, filters by kind,
// decision and agent (with the word search), exports what the filters show, and a past request opens to what was
// asked and what went through.
import { fireEvent, render, screen, waitFor, within } from '@testing-library/preact';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ElicitlyDb } from '../../extension/db/database.js';
import { rowFromView, type RequestRow } from '../../kit/rows/rows.js';
import { HistoryDetail, proposalLines } from '../../extension/ui/history-detail.js';
import { History } from '../../extension/ui/history.js';
import { freshDb, proposalView, jsonApprovalRow } from './fakes.js';
import { approval, proposal, rowFor } from './review-helpers.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const RLO = '\u202E';

let db: ElicitlyDb;
beforeEach(() => {
  db = freshDb();
});
afterEach(() => {
  db.close();
  vi.restoreAllMocks();
  vi.unstubAllGlobals();
});

const jsonApproval = jsonApprovalRow;

async function seed(...rows: RequestRow[]): Promise<void> {
  await db.requests.bulkPut(rows);
}

function table() {
  return screen.getByRole('table', { name: 'History' });
}
function messages(): string[] {
  return within(table()).getAllByRole('button').map((b) => b.textContent ?? '');
}
/** Each body row's cells as text: created, kind, decision, message, agent. */
function cells(): string[][] {
  return within(table()).getAllByRole('row').slice(1).map((tr) => within(tr).getAllByRole('cell').map((td) => td.textContent ?? ''));
}

describe('History rows', () => {
  it('say what was decided and whether the agent collected it — not the raw status', async () => {
    const base = Date.now() - HOUR;
    const consumedApproved = { ...jsonApproval('a', base, { status: 'consumed', message: 'Collected approval' }), outcome: { decision: 'approved' as const, action: 'submit' as const }, delivery: 'delivered' as const };
    const consumedRejected = { ...rowFromView(proposalView('b', base + 1000, { status: 'consumed', message: 'Collected rejection' })), outcome: { decision: 'rejected' as const, action: 'cancel' as const }, delivery: 'delivered' as const };
    await seed(
      consumedApproved,
      consumedRejected,
      jsonApproval('c', base + 2000, { status: 'approved', message: 'Waiting approval' }),
      jsonApproval('d', base + 3000, { status: 'canceled', message: 'Withdrawn one' }),
      jsonApproval('e', base + 4000, { status: 'expired', message: 'Expired one' }),
      jsonApproval('f', base + 5000, { message: 'Still open' }),
      jsonApproval('g', base + 6000, { status: 'consumed', message: 'Decided in another browser' }),
    );
    render(<History db={db} onOpen={() => undefined} />);
    await screen.findByRole('table', { name: 'History' });
    const headers = within(table()).getAllByRole('columnheader').map((h) => h.textContent);
    expect(headers).toEqual(['Created', 'Kind', 'Decision', 'Message', 'Agent']);
    expect(cells().map((c) => [c[3], c[2]])).toEqual([
      ['Decided in another browser', 'Decided elsewherecollected by the agent'],
      ['Still open', 'Pending'],
      ['Expired one', 'Expired'],
      ['Withdrawn one', 'Withdrawn'],
      ['Waiting approval', 'Approvednot collected yet'],
      ['Collected rejection', 'Rejectedcollected by the agent'],
      ['Collected approval', 'Approvedcollected by the agent'],
    ]);
    expect(within(table()).queryByText('consumed')).toBeNull();
  });

  it('list newest first and load more by cursor until the end; a row opens by its message', async () => {
    const base = Date.now() - 10 * HOUR;
    await seed(...Array.from({ length: 60 }, (_, i) => jsonApproval(`h-${String(i).padStart(2, '0')}`, base + i * MIN, { status: 'approved', message: `Merge branch ${i}` })));
    const onOpen = vi.fn();
    render(<History db={db} onOpen={onOpen} />);
    await screen.findByRole('table', { name: 'History' });
    expect(messages()).toHaveLength(50);
    expect(messages()[0]).toBe('Merge branch 59');
    fireEvent.click(screen.getByRole('button', { name: 'Load more' }));
    await waitFor(() => expect(messages()).toHaveLength(60));
    expect(messages()[59]).toBe('Merge branch 0');
    expect(screen.queryByRole('button', { name: 'Load more' })).toBeNull();
    fireEvent.click(screen.getByRole('button', { name: 'Merge branch 58' }));
    expect(onOpen).toHaveBeenCalledWith('h-58');
  });
});

describe('History filters', () => {
  const base = Date.now() - 10 * HOUR;
  /** 60 rows: approved and rejected alternate, every third a proposal, agents in turn (one named `constructor`). */
  function rows(): RequestRow[] {
    const agents = ['claude-code', 'cursor', 'constructor', `sneaky${RLO}bot`];
    return Array.from({ length: 60 }, (_, i) => {
      const id = `h-${String(i).padStart(2, '0')}`;
      const common = {
        status: i % 2 === 0 ? 'approved' as const : 'rejected' as const,
        message: i % 10 === 0 ? `Rotate key ${i}` : `Merge branch ${i}`,
        requester: { client: agents[i % 4]!, pid: 1 },
      };
      return i % 3 === 0 ? rowFromView(proposalView(id, base + i * MIN, common)) : jsonApproval(id, base + i * MIN, common);
    });
  }

  it('by kind, decision and agent together, with the search, and a new decision shows live', async () => {
    const all = rows();
    await seed(...all);
    render(<History db={db} onOpen={() => undefined} />);
    await screen.findByRole('table', { name: 'History' });

    const agent = screen.getByRole('combobox', { name: 'Agent' });
    await waitFor(() => expect(within(agent).getAllByRole('option').map((o) => o.textContent)).toEqual(['All agents', 'claude-code', 'constructor', 'cursor', 'sneaky⟨U+202E⟩bot']));
    expect(within(screen.getByRole('combobox', { name: 'Decision' })).getAllByRole('option').map((o) => o.textContent)).toEqual([
      'All decisions', 'Pending', 'Approved, allowed or answered', 'Rejected, denied or dismissed', 'Withdrawn', 'Expired', 'Decided elsewhere',
    ]);

    const expected = (keep: (r: RequestRow) => boolean) => all.filter(keep).map((r) => r.message).reverse();
    fireEvent.change(screen.getByRole('combobox', { name: 'Decision' }), { target: { value: 'rejected' } });
    await waitFor(() => expect(messages()).toEqual(expected((r) => r.status === 'rejected')));
    fireEvent.change(screen.getByRole('combobox', { name: 'Decision' }), { target: { value: 'approved' } });
    fireEvent.change(screen.getByRole('combobox', { name: 'Kind' }), { target: { value: 'proposal' } });
    await waitFor(() => expect(messages()).toEqual(expected((r) => r.status === 'approved' && r.kind === 'proposal')));
    fireEvent.change(agent, { target: { value: 'constructor' } });
    await waitFor(() => expect(messages()).toEqual(expected((r) => r.status === 'approved' && r.kind === 'proposal' && r.agent === 'constructor')));
    expect(messages()).toHaveLength(5);

    fireEvent.change(screen.getByRole('combobox', { name: 'Kind' }), { target: { value: '' } });
    fireEvent.change(agent, { target: { value: 'claude-code' } });
    fireEvent.input(screen.getByRole('searchbox', { name: 'Search' }), { target: { value: 'rot' } });
    await waitFor(() => expect(messages()).toEqual(['Rotate key 40', 'Rotate key 20', 'Rotate key 0']));

    await seed(jsonApproval('fresh', Date.now(), { status: 'approved', message: 'Rotate key fresh' }));
    await waitFor(() => expect(messages()[0]).toBe('Rotate key fresh'));

    fireEvent.input(screen.getByRole('searchbox', { name: 'Search' }), { target: { value: 'nothing matches this' } });
    expect(await screen.findByText('No requests match.')).toBeTruthy();
  });
});

describe('History export', () => {
  function captureDownloads() {
    const blobs: Blob[] = [];
    vi.stubGlobal('URL', Object.assign(URL, {
      createObjectURL: vi.fn((blob: Blob) => {
        blobs.push(blob);
        return `blob:export-${blobs.length}`;
      }),
      revokeObjectURL: vi.fn(),
    }));
    const clicked: HTMLAnchorElement[] = [];
    vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(function (this: HTMLAnchorElement) {
      clicked.push(this);
    });
    return { blobs, clicked };
  }

  it('downloads what the filters show, as dated JSON Lines and CSV files', async () => {
    const base = Date.now() - HOUR;
    await seed(
      jsonApproval('x1', base, { status: 'approved', message: '=cmd|calc' }),
      jsonApproval('x2', base + 1000, { status: 'rejected', message: 'Rejected one' }),
      jsonApproval('x3', base + 2000, { status: 'approved', message: 'Approved, "two"' }),
    );
    const { blobs, clicked } = captureDownloads();
    render(<History db={db} onOpen={() => undefined} />);
    await screen.findByRole('table', { name: 'History' });
    fireEvent.change(screen.getByRole('combobox', { name: 'Decision' }), { target: { value: 'approved' } });
    await waitFor(() => expect(messages()).toHaveLength(2));

    fireEvent.click(screen.getByRole('button', { name: 'Export JSON Lines' }));
    await waitFor(() => expect(clicked).toHaveLength(1));
    expect(clicked[0]!.download).toMatch(/^elicitly-history-\d{4}-\d{2}-\d{2}\.jsonl$/);
    expect(clicked[0]!.getAttribute('href')).toBe('blob:export-1');
    const lines = (await blobs[0]!.text()).trim().split('\n').map((l) => JSON.parse(l) as { elicitationId: string; decision: string });
    expect(lines.map((l) => [l.elicitationId, l.decision])).toEqual([['x3', 'approved'], ['x1', 'approved']]);

    await waitFor(() => expect(screen.getByRole('button', { name: 'Export CSV' }).hasAttribute('disabled')).toBe(false));
    fireEvent.click(screen.getByRole('button', { name: 'Export CSV' }));
    await waitFor(() => expect(clicked).toHaveLength(2));
    expect(clicked[1]!.download).toMatch(/^elicitly-history-\d{4}-\d{2}-\d{2}\.csv$/);
    const csv = (await blobs[1]!.text()).replace(/^\uFEFF/, '').split('\r\n');
    expect(csv[0]).toMatch(/^elicitationId,createdAt,decidedAt,kind,decision,collected,decidedBy,agent,message,/);
    expect(csv.slice(1, 3).map((l) => l.split(',')[0])).toEqual(['x3', 'x1']);
    expect(csv[1]).toContain(',"Approved, ""two""",');
    expect(csv[2]).toContain(",'=cmd|calc,");
    expect(csv[3]).toBe('');
  });

  it('says so when the history cannot be read, and the buttons work again', async () => {
    await seed(jsonApproval('y1', Date.now() - MIN, { status: 'approved' }));
    render(<History db={db} onOpen={() => undefined} />);
    await screen.findByRole('table', { name: 'History' });
    vi.spyOn(db.requests, 'where').mockImplementation(() => {
      throw new Error('the database went away');
    });
    fireEvent.click(screen.getByRole('button', { name: 'Export CSV' }));
    expect((await screen.findByRole('alert')).textContent).toBe('The export failed: the history could not be read.');
    await waitFor(() => expect(screen.getByRole('button', { name: 'Export CSV' }).hasAttribute('disabled')).toBe(false));
  });
});

describe('HistoryDetail', () => {
  const created = Date.UTC(2025, 0, 2, 3, 4, 5);

  function dl(): Record<string, string> {
    const list = screen.getByLabelText('Request');
    const terms = Array.from(list.querySelectorAll('dt'), (d) => d.textContent ?? '');
    const values = Array.from(list.querySelectorAll('dd'), (d) => d.textContent ?? '');
    return Object.fromEntries(terms.map((t, i) => [t, values[i] ?? '']));
  }
  function fieldRows(): string[][] {
    const fields = screen.getByRole('table', { name: 'Fields' });
    return within(fields).getAllByRole('row').slice(1).map((tr) => Array.from(tr.children, (c) => c.textContent ?? ''));
  }

  it('a submitted proposal: per field the proposed value, what was submitted (edited or not), included or not; comment, times, agent', () => {
    const row = rowFor(proposal(), {
      status: 'consumed',
      verdict: 'approved',
      decidedAt: created + 90_000,
      outcome: {
        decision: 'approved', action: 'submit',
        values: { name: 'NorthMark Strategies Inc.', website: 'https://www.northmarkstrategies.com/', employeeCount: 250 },
        included: ['name', 'website', 'employeeCount'],
        comment: 'Checked against the registry',
      },
      delivery: 'delivered',
    });
    render(<HistoryDetail row={row} />);
    expect(screen.getByRole('heading', { level: 2 }).textContent).toBe('Sync NorthMark Strategies from Apollo into Salesforce');
    expect(dl()).toMatchObject({
      Decision: 'Approved · collected by the agent',
      Kind: 'Proposal',
      Agent: 'Claude Code (pid 42)',
      Comment: 'Checked against the registry',
    });
    expect(dl().Created).toMatch(/2025/);
    expect(dl().Decided).toMatch(/2025/);
    const fields = screen.getByRole('table', { name: 'Fields' });
    expect(within(fields).getAllByRole('columnheader').map((h) => h.textContent)).toEqual(['Field', 'Salesforce', 'Proposed', 'Submitted', 'Included']);
    expect(fieldRows()).toEqual([
      ['Name', '(blank)', 'NorthMark Strategies', 'NorthMark Strategies Inc. (edited)', 'Included'],
      ['Website', '(blank)', 'https://www.northmarkstrategies.com/', 'https://www.northmarkstrategies.com/', 'Included'],
      ['Number of Employees', '(blank)', '230', '250 (edited)', 'Included'],
      ['Institution Types', '(blank)', 'Asset Manager, Private Equity', 'not sent', 'Not included'],
    ]);
  });

  it('a rejected proposal: nothing was sent, nothing included', () => {
    const row = rowFor(proposal(), { status: 'rejected', verdict: 'rejected', outcome: { decision: 'rejected', action: 'cancel' }, delivery: 'delivered' });
    render(<HistoryDetail row={row} />);
    expect(dl().Decision).toBe('Rejected · not collected yet');
    expect(fieldRows().map((r) => [r[0], r[3], r[4]])).toEqual([
      ['Name', 'not sent', '—'], ['Website', 'not sent', '—'], ['Number of Employees', 'not sent', '—'], ['Institution Types', 'not sent', '—'],
    ]);
  });

  it('a proposal decided by another reviewer says what is not known here', () => {
    render(<HistoryDetail row={rowFor(proposal(), { status: 'consumed', verdict: 'approved' })} />);
    expect(screen.getByText('Decided by another reviewer: what was submitted is not known in this browser.')).toBeTruthy();
    expect(fieldRows().every((r) => r[4] === '—')).toBe(true);
  });

  it('fields named like Object.prototype members are fields like any other', () => {
    const request = proposal({
      message: 'Prototype names',
      columns: { sources: [{ key: 'a', label: 'A' }], current: { label: 'Now' } },
      requestedSchema: {
        type: 'object',
        properties: {
          constructor: { type: 'string', title: 'Constructor', default: 'c' },
          toString: { type: 'string', default: 't' },
          hasOwnProperty: { type: 'string', default: 'h' },
        },
      },
      fields: { constructor: { sources: { a: 'c' }, current: 'old c' } },
    });
    const outcome = { decision: 'approved' as const, action: 'submit' as const, values: { constructor: 'C2' }, included: ['constructor'] };
    expect(proposalLines(request, outcome).map((l) => [l.key, l.current, l.submitted, l.included, l.edited])).toEqual([
      ['constructor', 'old c', 'C2', true, true],
      ['toString', null, undefined, false, false],
      ['hasOwnProperty', null, undefined, false, false],
    ]);
    render(<HistoryDetail row={rowFor(request, { status: 'approved', verdict: 'approved', outcome, delivery: 'delivered' })} />);
    expect(fieldRows()).toEqual([
      ['Constructor', 'old c', 'c', 'C2 (edited)', 'Included'],
      ['toString', '(blank)', 't', 'not sent', 'Not included'],
      ['hasOwnProperty', '(blank)', 'h', 'not sent', 'Not included'],
    ]);
  });

  it('a form approval: the fields and the values submitted', () => {
    const request = approval({
      message: 'Name the release branch',
      requestedSchema: { type: 'object', properties: { branch: { type: 'string', title: 'Branch' }, force: { type: 'boolean', title: 'Force push' } }, required: ['branch'] },
    });
    const row = rowFor(request, { status: 'approved', verdict: 'approved', outcome: { decision: 'approved', action: 'submit', values: { branch: `release${RLO}/2`, force: false } }, delivery: 'delivered' });
    render(<HistoryDetail row={row} />);
    expect(dl().Kind).toBe('Approval (form)');
    expect(fieldRows()).toEqual([['Branch', 'release⟨U+202E⟩/2'], ['Force push', 'No']]);
    expect(screen.queryByRole('table', { name: 'Fields' })!.textContent).not.toContain(RLO);
  });

  it('a json approval: the context it asked about, and a queued decision says it is on its way', () => {
    const request = approval({ message: 'Deploy to production', context: { service: 'api', replicas: 3 } });
    const row = rowFor(request, { verdict: 'pending', outcome: { decision: 'approved', action: 'submit' }, delivery: 'queued' });
    render(<HistoryDetail row={row} />);
    expect(dl().Decision).toBe('Pending · approved here, waiting for the hub');
    expect(screen.getByLabelText('Context').textContent).toBe(JSON.stringify({ service: 'api', replicas: 3 }, null, 2));
    expect(screen.queryByRole('table', { name: 'Fields' })).toBeNull();
    expect(screen.getByRole('status').textContent).toBe('Waiting for the hub to deliver this decision.');
  });
});

// The three asks after the fact: what the history row says (the agent's own yes/no label, the options chosen,
// Answered, Dismissed), the kind filter, the past ask opened, the export (an ask has no context), and the notification.
import { fireEvent, render, screen, waitFor, within } from '@testing-library/preact';
import { fakeBrowser } from 'wxt/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ElicitlyDb } from '../../extension/db/database.js';
import { exportBlob, exportRecord } from '../../extension/db/export-history.js';
import { historyPage } from '../../extension/db/history-queries.js';
import { applyStatus, getRequest, upsertView } from '../../extension/db/requests-repo.js';
import type { RequestRow } from '../../kit/rows/rows.js';
import type { Verdict } from '../../kit/rows/verdict.js';
import { decisionSummary } from '../../kit/ui/request-summary.js';
import { HistoryDetail } from '../../extension/ui/history-detail.js';
import { History } from '../../extension/ui/history.js';
import { KIND_LABEL } from '../../kit/ui/labels.js';
import { ReviewView } from '../../kit/ui/review/review-view.js';
import { createPlatform, NOTIFICATION_PREFIX } from '../../entrypoints/background/platform.js';
import type { ReviewRequest } from '../../shared/review-request.js';
import type { RequestView } from '../../shared/wire-protocol.js';
import { freshDb } from './fakes.js';
import { confirmAsk, fakeClient, formAsk, rowFor, selectionAsk } from './review-helpers.js';

const T = Date.UTC(2025, 0, 2, 3, 4, 5);
const RLO = '\u202E';

const question = confirmAsk('¿Publicar la versión 2.0?', 'Sí', 'No');
const release = formAsk('Enter release details', {
  type: 'object',
  properties: { version: { type: 'string', title: 'Version' }, prerelease: { type: 'boolean', title: 'Pre-release' } },
  required: ['version'],
});
const regions = selectionAsk({
  message: 'Deploy to which regions?',
  options: [{ value: 'eu', label: 'Europe', description: 'Frankfurt and Dublin' }, { value: 'us', label: 'United States' }, { value: 'ap' }],
  multiple: true,
  maxSelected: 2,
  default: ['eu'],
});
const answered = (values: Record<string, unknown>) => ({ outcome: { decision: 'approved' as const, action: 'submit' as const, values }, delivery: 'delivered' as const });
const dismissed = { outcome: { decision: 'rejected' as const, action: 'cancel' as const }, delivery: 'delivered' as const };

describe('decisionSummary of an ask', () => {
  const cases: [string, ReviewRequest, Partial<RequestRow> & { verdict: Verdict }, string, string | null][] = [
    ['a yes, in the agent\'s words', question, { status: 'consumed', verdict: 'approved', ...answered({ confirmed: true }) }, 'Answered: Sí', 'collected by the agent'],
    ['a no, in the agent\'s words (an answer, not a dismissal)', question, { status: 'approved', verdict: 'approved', ...answered({ confirmed: false }) }, 'Answered: No', 'not collected yet'],
    ['a dismissed question', question, { status: 'consumed', verdict: 'rejected', ...dismissed }, 'Dismissed', 'collected by the agent'],
    ['a question answered in another browser', question, { status: 'consumed', verdict: 'approved' }, 'Answered', 'collected by the agent'],
    ['a question whose answer here was refused: not taken for the answer', question, { status: 'consumed', verdict: 'approved', outcome: { decision: 'approved', values: { confirmed: false } }, delivery: 'refused' }, 'Answered', 'collected by the agent'],
    ['a form', release, { status: 'consumed', verdict: 'approved', ...answered({ version: '2.0.0', prerelease: false }) }, 'Answered', 'collected by the agent'],
    ['a dismissed form', release, { status: 'rejected', verdict: 'rejected', ...dismissed }, 'Dismissed', 'not collected yet'],
    ['a choice, by the options\' names', regions, { status: 'consumed', verdict: 'approved', ...answered({ selected: ['eu', 'ap'] }) }, 'Chose: Europe, ap', 'collected by the agent'],
    ['a choice of nothing', regions, { status: 'consumed', verdict: 'approved', ...answered({ selected: [] }) }, 'Chose: nothing', 'collected by the agent'],
    ['a dismissed choice', regions, { status: 'consumed', verdict: 'rejected', ...dismissed }, 'Dismissed', 'collected by the agent'],
    ['pending stays Pending', question, { status: 'pending', verdict: 'pending' }, 'Pending', null],
    ['an answer queued here', question, { status: 'pending', verdict: 'pending', outcome: { decision: 'approved', values: { confirmed: true } }, delivery: 'queued' }, 'Pending', 'answered here, waiting for the hub'],
    ['a dismissal queued here', regions, { status: 'pending', verdict: 'pending', outcome: { decision: 'rejected' }, delivery: 'queued' }, 'Pending', 'dismissed here, waiting for the hub'],
    ['withdrawn stays Withdrawn', release, { status: 'canceled', verdict: 'withdrawn' }, 'Withdrawn', null],
    ['expired stays Expired', regions, { status: 'expired', verdict: 'expired' }, 'Expired', null],
    ['collected with nothing known stays Decided elsewhere', question, { status: 'consumed', verdict: 'unknown' }, 'Decided elsewhere', 'collected by the agent'],
  ];
  it.each(cases)('%s', (_name, request, extra, label, note) => {
    expect(decisionSummary(rowFor(request, extra))).toMatchObject({ label, note });
  });

  it('names the first three of many options chosen, then how many more', () => {
    const options = Array.from({ length: 8 }, (_, i) => ({ value: `v${i}`, label: `L${i}` }));
    const ask = selectionAsk({ message: 'Pick', options, multiple: true });
    expect(decisionSummary(rowFor(ask, { status: 'approved', verdict: 'approved', ...answered({ selected: ['v0', 'v1', 'v2', 'v3', 'v4'] }) })).label).toBe('Chose: L0, L1, L2 and 2 more');
    expect(decisionSummary(rowFor(ask, { status: 'approved', verdict: 'approved', ...answered({ selected: ['v0', 'v1', 'v2', 'v3'] }) })).label).toBe('Chose: L0, L1, L2, L3');
  });
});

function view(id: string, request: ReviewRequest, createdAt: number, status: RequestView['status'] = 'pending'): RequestView {
  return {
    elicitationId: id, kind: request.kind, status, message: request.message, createdAt, expiresAt: createdAt + 3_600_000,
    requester: { client: 'test-host-v1', pid: 7 }, request, renderedTemplate: null,
  };
}

describe('asks in the database and the history list', () => {
  let db: ElicitlyDb;
  beforeEach(() => {
    db = freshDb();
  });
  afterEach(() => db.close());

  it('an ask is stored, verdicts follow the hub, and the kind filter finds each kind', async () => {
    const now = Date.now() - 60_000;
    await upsertView(db, view('el_q', question, now));
    await upsertView(db, view('el_f', release, now + 1, 'rejected'));
    await upsertView(db, view('el_s', regions, now + 2));
    await applyStatus(db, 'el_q', 'approved', now + 3);
    await applyStatus(db, 'el_q', 'consumed', now + 4);
    expect(await getRequest(db, 'el_q')).toMatchObject({ kind: 'confirm', status: 'consumed', verdict: 'approved' });
    expect((await getRequest(db, 'el_f'))?.verdict).toBe('rejected');
    for (const [kind, id] of [['confirm', 'el_q'], ['form', 'el_f'], ['selection', 'el_s']] as const) {
      expect((await historyPage(db, { kind })).rows.map((r) => r.elicitationId)).toEqual([id]);
    }

    render(<History db={db} onOpen={() => undefined} />);
    const table = await screen.findByRole('table', { name: 'History' });
    const kind = screen.getByRole('combobox', { name: 'Kind' });
    expect(within(kind).getAllByRole('option').map((o) => o.textContent)).toEqual(['All kinds', 'Approval', 'Proposal', 'Question', 'Form', 'Choice', 'Permission']);
    await waitFor(() => expect(within(table).getAllByRole('row')).toHaveLength(4));
    const rows = within(table).getAllByRole('row').slice(1).map((tr) => within(tr).getAllByRole('cell').map((td) => td.textContent));
    expect(rows.map((r) => [r[1], r[2], r[3]])).toEqual([
      ['Choice', 'Pending', 'Deploy to which regions?'],
      ['Form', 'Dismissednot collected yet', 'Enter release details'],
      // Answered at the hub, by someone else: this browser does not know which answer.
      ['Question', 'Answeredcollected by the agent', '¿Publicar la versión 2.0?'],
    ]);
    fireEvent.change(kind, { target: { value: 'selection' } });
    await waitFor(() => expect(within(screen.getByRole('table', { name: 'History' })).getAllByRole('row')).toHaveLength(2));
  });

  it('a label with characters that do not show is shown with them marked, in the list', async () => {
    const sneaky = confirmAsk('Ship?', `Yes${RLO}`, 'No');
    await db.requests.put({ ...rowFor(sneaky, { elicitationId: 'el_x', createdAt: Date.now() - 1000, status: 'approved', ...answered({ confirmed: true }) }) });
    render(<History db={db} onOpen={() => undefined} />);
    const table = await screen.findByRole('table', { name: 'History' });
    await waitFor(() => expect(within(table).getAllByRole('row')).toHaveLength(2));
    const cell = within(table).getAllByRole('cell')[2]!;
    expect(cell.textContent).toBe('Answered: Yes⟨U+202E⟩not collected yet');
    expect(cell.textContent).not.toContain(RLO);
  });

  it('the export: JSON Lines and CSV carry every ask, with no context column for them', async () => {
    await db.requests.bulkPut([
      rowFor(question, { elicitationId: 'el_q', createdAt: T + 3, status: 'consumed', ...answered({ confirmed: true }) }),
      rowFor(release, { elicitationId: 'el_f', createdAt: T + 2, status: 'approved', ...answered({ version: '2.0.0', prerelease: false }) }),
      rowFor(regions, { elicitationId: 'el_s', createdAt: T + 1, status: 'rejected', ...dismissed }),
    ]);
    const csv = await (await exportBlob(db, {}, 'csv')).blob.text();
    const lines = csv.replace(/^\uFEFF/, '').split('\r\n').filter(Boolean);
    expect(lines.slice(1)).toEqual([
      `el_q,${new Date(T + 3).toISOString()},,confirm,approved,yes,,Claude Code,¿Publicar la versión 2.0?,,,"{""confirmed"":true}",`,
      `el_f,${new Date(T + 2).toISOString()},,form,approved,no,,Claude Code,Enter release details,,,"{""version"":""2.0.0"",""prerelease"":false}",`,
      `el_s,${new Date(T + 1).toISOString()},,selection,rejected,no,,Claude Code,Deploy to which regions?,,,,`,
    ]);
    const jsonl = (await (await exportBlob(db, {}, 'jsonl')).blob.text()).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(jsonl.map((r) => [r.kind, r.decision, r.request])).toEqual([['confirm', 'approved', question], ['form', 'approved', release], ['selection', 'rejected', regions]]);
    expect(exportRecord(rowFor(regions, { verdict: 'pending' })).request).toEqual(regions);
  });
});

describe('HistoryDetail of an ask', () => {
  function dl(): Record<string, string> {
    const list = screen.getByLabelText('Request');
    const terms = Array.from(list.querySelectorAll('dt'), (d) => d.textContent ?? '');
    const values = Array.from(list.querySelectorAll('dd'), (d) => d.textContent ?? '');
    return Object.fromEntries(terms.map((t, i) => [t, values[i] ?? '']));
  }
  const tableRows = (name: string) => within(screen.getByRole('table', { name })).getAllByRole('row').slice(1).map((tr) => Array.from(tr.children, (c) => c.textContent ?? ''));

  it('a question: both answers in the agent\'s words, what each means, and the one given', () => {
    render(<HistoryDetail row={rowFor(question, { status: 'consumed', verdict: 'approved', ...answered({ confirmed: false }) })} />);
    expect(dl()).toMatchObject({ Decision: 'Answered: No · collected by the agent', Kind: 'Question' });
    expect(tableRows('Answers')).toEqual([['Sí', 'yes', '—'], ['No', 'no', 'Given']]);
  });

  it('a form: the fields and the values sent (an untouched checkbox as No)', () => {
    render(<HistoryDetail row={rowFor(release, { status: 'approved', verdict: 'approved', ...answered({ version: '2.0.0', prerelease: false }) })} />);
    expect(dl()).toMatchObject({ Decision: 'Answered · not collected yet', Kind: 'Form' });
    expect(tableRows('Fields')).toEqual([['Version', '2.0.0'], ['Pre-release', 'No']]);
  });

  it('a choice: every option with its value and description, and which were chosen', () => {
    render(<HistoryDetail row={rowFor(regions, { status: 'approved', verdict: 'approved', ...answered({ selected: ['us'] }) })} />);
    expect(dl()).toMatchObject({ Decision: 'Chose: United States · not collected yet', Kind: 'Choice' });
    expect(screen.getByText('Choose up to 2')).toBeTruthy();
    expect(tableRows('Options')).toEqual([
      ['EuropeFrankfurt and Dublin', 'eu', 'not chosen'],
      ['United States', 'us', 'Chosen'],
      ['ap', 'ap', 'not chosen'],
    ]);
  });

  it('a dismissed choice says nothing was chosen', () => {
    render(<HistoryDetail row={rowFor(regions, { status: 'rejected', verdict: 'rejected', ...dismissed })} />);
    expect(dl().Decision).toBe('Dismissed · not collected yet');
    expect(tableRows('Options').map((r) => r[2])).toEqual(['—', '—', '—']);
  });
});

describe('a decided ask opened again: what the person answered, never "approved"', () => {
  const staging = confirmAsk('Delete the staging cluster?', 'Delete', 'Keep');
  const cases: [string, ReviewRequest, Partial<RequestRow>, string, string][] = [
    ['a question answered with its "no" label', staging, { status: 'approved', ...answered({ confirmed: false }) }, 'answered: Keep', 'Answered: Keep'],
    ['the same once the agent read it', staging, { status: 'consumed', ...answered({ confirmed: false }) }, 'answered: Keep, and the agent has read the answer', 'Answered: Keep, and the agent has read the answer'],
    ['a question answered in the chat (no answer known here)', staging, { status: 'approved', decidedVia: 'app' }, 'answered, decided in the chat', 'Answered'],
    ['a question answered on a paired phone', staging, { status: 'approved', decidedVia: 'phone' }, 'answered, decided on a paired phone', 'Answered'],
    ['a form', release, { status: 'approved', ...answered({ version: '2.0.0' }) }, 'answered', 'Answered'],
    ['a choice', regions, { status: 'approved', ...answered({ selected: ['eu'] }) }, 'chose: Europe', 'Chose: Europe'],
    ['a dismissed question', staging, { status: 'rejected', ...dismissed }, 'dismissed', 'Dismissed'],
  ];
  it.each(cases)('%s', (_name, request, extra, note, status) => {
    render(<ReviewView row={rowFor(request, extra)} decide={fakeClient().client.decide} />);
    expect(screen.getByText(/^This request is no longer pending: /).textContent).toBe(`This request is no longer pending: ${note}.`);
    const terms = Array.from(screen.getByLabelText('Request').querySelectorAll('dt'), (d) => d.textContent);
    expect(screen.getByLabelText('Request').querySelectorAll('dd')[terms.indexOf('Status')]?.textContent).toBe(status);
    expect(document.body.textContent).not.toMatch(/approved/i);
  });
});

describe('the notification for an ask', () => {
  beforeEach(() => fakeBrowser.reset());

  it.each([['confirm', question], ['form', release], ['selection', regions]] as const)('a %s is announced by its kind and agent', async (kind, request) => {
    await createPlatform().notify(rowFor(request, { elicitationId: 'el_n', agent: 'test-host-v1' }));
    const all = await fakeBrowser.notifications.getAll();
    expect(all[`${NOTIFICATION_PREFIX}el_n`]).toMatchObject({ title: `${KIND_LABEL[kind]} from test-host-v1`, message: request.message });
  });
});

// Issue 9, item 5: characters that would not show (bidi overrides, zero-width and tag characters) in agent text are
// shown as visible tokens wherever the review shows that text; editable values keep them and say so.
import { fireEvent, render, screen, waitFor, within } from '@testing-library/preact';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fakeBrowser } from 'wxt/testing';
import { browser } from 'wxt/browser';
import { createPlatform } from '../../entrypoints/background/platform.js';
import type { ElicitlyDb } from '../../extension/db/database.js';
import { rowFromView } from '../../kit/rows/rows.js';
import { History } from '../../extension/ui/history.js';
import { Inbox } from '../../extension/ui/inbox.js';
import { ApprovalReview } from '../../kit/ui/review/approval-review.js';
import { ProposalReview } from '../../kit/ui/review/proposal-review.js';
import { RequestDetail } from '../../kit/ui/review/request-detail.js';
import { freshDb, proposalView } from './fakes.js';
import { approval, fakeClient, proposal, rowFor } from './review-helpers.js';

const RLO = '\u202e';
const ZWSP = '\u200b';
/** "ok" in tag characters: invisible everywhere, readable by a model. */
const TAGGED = String.fromCodePoint(0xe006f, 0xe006b);
const HIDDEN = /[\u202e\u200b\u2066\u{e006f}\u{e006b}]/u;

/** What the page shows, with no hidden character left in it (they are replaced, never inserted). */
function shown(el: Element | null): string {
  const text = el?.textContent ?? '';
  expect(text).not.toMatch(HIDDEN);
  return text;
}

describe('the approval review', () => {
  function setup(input: Record<string, unknown>, template: string | null = null) {
    const request = approval({ message: `Pay invoice_${RLO}fdp.exe`, ...input });
    const { client, calls } = fakeClient();
    render(<ApprovalReview row={rowFor(request, { renderedTemplate: template })} request={request} decide={client.decide} />);
    return { calls };
  }

  it('message, context values and labels show each hidden character as a token with its name', () => {
    setup({ context: { to: `ops${ZWSP}@example.com` }, labels: { ok: `Pay${TAGGED}`, cancel: 'Hold' } });
    expect(shown(screen.getByRole('heading'))).toBe('Pay invoice_⟨U+202E⟩fdp.exe');
    const token = within(screen.getByRole('heading')).getByText('⟨U+202E⟩');
    expect(token.className).toBe('hidden-char');
    expect(token.getAttribute('title')).toBe('U+202E RIGHT-TO-LEFT OVERRIDE: a character that does not show');
    expect(shown(screen.getByRole('region', { name: 'Context' }).querySelector('dd'))).toBe('ops⟨U+200B⟩@example.com');
    expect(shown(screen.getByLabelText('Context as JSON'))).toBe(JSON.stringify({ to: 'ops⟨U+200B⟩@example.com' }, null, 2));
    expect(shown(screen.getByRole('button', { name: /^Pay/ }))).toBe('Pay⟨U+E006F⟩⟨U+E006B⟩');
    expect(screen.getByTitle('U+E006F TAG "o": a character that does not show')).toBeTruthy();
  });

  it('the rendered template\'s text nodes, inside kept tags too', () => {
    setup({ context: {} }, `<p>Deploy to <b>prod${RLO}</b>${ZWSP}</p>`);
    const template = document.querySelector('.template')!;
    expect(shown(template)).toBe('Deploy to prod⟨U+202E⟩⟨U+200B⟩');
    expect(shown(template.querySelector('b'))).toBe('prod⟨U+202E⟩');
  });

  it('field titles, descriptions and option titles; a text value keeps its hidden characters, says so, and is sent exactly', async () => {
    const { calls } = setup({
      requestedSchema: {
        type: 'object',
        properties: {
          target: { type: 'string', title: `Target${ZWSP}`, description: `Where${RLO} to`, default: `main${RLO}` },
          plan: { type: 'string', title: 'Plan', oneOf: [{ const: 'a', title: `Alpha${ZWSP}` }], default: 'a' },
        },
      },
    });
    const field = document.querySelector('label[for]')!;
    expect(shown(field)).toBe('Target⟨U+200B⟩');
    expect(shown(screen.getByText(/^Where/))).toBe('Where⟨U+202E⟩ to');
    const input = screen.getByRole('textbox', { name: 'Target⟨U+200B⟩' }) as HTMLInputElement;
    // The real value: what is sent is exactly what is in the box.
    expect(input.value).toBe(`main${RLO}`);
    const warning = document.getElementById(input.getAttribute('aria-describedby')!.split(' ').at(-1)!)!;
    expect(shown(warning)).toBe('This value holds characters that do not show, and they are sent as they are: ⟨U+202E⟩ RIGHT-TO-LEFT OVERRIDE.');
    expect(shown(screen.getByRole('option', { name: 'Alpha⟨U+200B⟩' }))).toBe('Alpha⟨U+200B⟩');

    fireEvent.click(screen.getByRole('button', { name: 'Approve' }));
    await waitFor(() => expect(calls).toHaveLength(1));
    expect(calls[0]?.values).toEqual({ target: `main${RLO}`, plan: 'a' });
  });

  it('the warning goes once the value holds no such character, and comes back when one is typed', () => {
    setup({ requestedSchema: { type: 'object', properties: { target: { type: 'string', title: 'Target', default: `a${ZWSP}b` } } } });
    const input = screen.getByRole('textbox', { name: 'Target' }) as HTMLInputElement;
    expect(document.querySelector('.hidden-warning')).not.toBeNull();
    fireEvent.input(input, { target: { value: 'ab' } });
    expect(document.querySelector('.hidden-warning')).toBeNull();
    expect(input.getAttribute('aria-describedby')).toBeNull();
    fireEvent.input(input, { target: { value: `a\u2066b` } });
    expect(shown(document.querySelector('.hidden-warning'))).toMatch(/⟨U\+2066⟩ LEFT-TO-RIGHT ISOLATE\.$/);
  });
});

describe('the proposal grid', () => {
  function input() {
    return {
      message: 'Update Acme',
      columns: { sources: [{ key: 'crm', label: `CRM${ZWSP}` }], current: { label: `Live${RLO}` } },
      requestedSchema: { type: 'object', properties: { name: { type: 'string', title: `Name${RLO}`, default: `Acme${TAGGED}` } } },
      fields: { name: { sources: { crm: `Acme${ZWSP} Corp` }, current: `Acme${RLO}` } },
    };
  }

  it('column labels, field titles, source and current values show tokens; the proposed value is real, with a warning, and sent exactly', async () => {
    const request = proposal(input());
    const { client, calls } = fakeClient();
    render(<ProposalReview row={rowFor(request)} request={request} decide={client.decide} />);
    const grid = screen.getByRole('table', { name: 'Proposed changes' });
    expect(within(grid).getAllByRole('columnheader').map(shown)).toEqual(['Field', 'CRM⟨U+200B⟩', 'Live⟨U+202E⟩', 'Proposed', 'Include']);
    expect(shown(within(grid).getByRole('rowheader'))).toBe('Name⟨U+202E⟩');
    expect(shown(screen.getByRole('cell', { name: 'CRM⟨U+200B⟩: Name⟨U+202E⟩' }))).toBe('Acme⟨U+200B⟩ Corp');
    expect(shown(screen.getByRole('cell', { name: 'Live⟨U+202E⟩: Name⟨U+202E⟩' }))).toBe('Acme⟨U+202E⟩');
    const box = screen.getByLabelText('Proposed Name⟨U+202E⟩') as HTMLInputElement;
    expect(box.value).toBe(`Acme${TAGGED}`);
    expect(shown(document.querySelector('td.proposed .hidden-warning'))).toBe(
      'This value holds characters that do not show, and they are sent as they are: ⟨U+E006F⟩ TAG "o", ⟨U+E006B⟩ TAG "k".',
    );
    expect(screen.getByRole('checkbox', { name: 'Include Name⟨U+202E⟩' })).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: 'Submit Changes' }));
    await waitFor(() => expect(calls).toHaveLength(1));
    expect(calls[0]).toMatchObject({ values: { name: `Acme${TAGGED}` }, included: ['name'] });
  });
});

describe('read-only views', () => {
  let db: ElicitlyDb;
  beforeEach(() => {
    db = freshDb();
  });
  afterEach(() => db.close());

  const sneaky = () => rowFromView(proposalView('el_s', Date.now(), { message: `Sync${RLO} Acme`, requester: { client: `agent${ZWSP}`, pid: 1 } }));

  it('the inbox and the history show message and agent with tokens', async () => {
    await db.requests.put(sneaky());
    render(<Inbox db={db} onOpen={() => undefined} />);
    const item = await screen.findByRole('button', { name: /^Sync/ });
    expect(shown(item)).toMatch(/^Sync⟨U\+202E⟩ Acme Proposal · agent⟨U\+200B⟩ · /);
  });

  it('the history table', async () => {
    await db.requests.put({ ...sneaky(), status: 'approved' });
    render(<History db={db} onOpen={() => undefined} />);
    const table = await screen.findByRole('table', { name: 'History' });
    const cells = within(table).getAllByRole('cell').map(shown);
    expect(cells).toContain('Sync⟨U+202E⟩ Acme');
    expect(cells).toContain('agent⟨U+200B⟩');
  });

  it('the detail of a decided request: what was asked and what was sent', () => {
    const request = proposal({
      message: `Set${RLO} it`,
      columns: { sources: [{ key: 'crm', label: 'CRM' }], current: { label: 'Live' } },
      requestedSchema: { type: 'object', properties: { name: { type: 'string', title: `Name${ZWSP}`, default: `New${RLO}` } } },
      fields: { name: { sources: { crm: 'x' }, current: null } },
    });
    render(<RequestDetail row={rowFor(request, { status: 'approved', outcome: { decision: 'approved', values: { name: `Sent${TAGGED}` }, comment: `fine${ZWSP}` } })} />);
    expect(shown(screen.getByRole('heading', { level: 2 }))).toBe('Set⟨U+202E⟩ it');
    const asked = screen.getByRole('table', { name: 'Proposed values' });
    expect(within(asked).getAllByRole('cell').map(shown)).toEqual(['New⟨U+202E⟩']);
    expect(shown(within(asked).getByRole('rowheader'))).toBe('Name⟨U+200B⟩');
    expect(shown(screen.getByLabelText('Values sent'))).toBe('Name⟨U+200B⟩Sent⟨U+E006F⟩⟨U+E006B⟩');
    expect(shown(screen.getByText(/^Comment:/))).toBe('Comment: fine⟨U+200B⟩');
  });
});

describe('notifications', () => {
  beforeEach(() => fakeBrowser.reset());

  it('spell out what would not show, in the title and the message', async () => {
    await createPlatform().notify(rowFromView(proposalView('el_n', Date.now(), { message: `Pay${RLO} now`, requester: { client: `bot${ZWSP}`, pid: 1 } })));
    const all = await browser.notifications.getAll();
    expect(all['elicitly:el_n']).toMatchObject({ title: 'Proposal from bot⟨U+200B⟩', message: 'Pay⟨U+202E⟩ now' });
  });
});

import { fireEvent, render, screen, waitFor, within } from '@testing-library/preact';
import { describe, expect, it, vi } from 'vitest';
import type { ProposalRequest } from '../../shared/approval-input.js';
import type { DecideReply } from '../../kit/messages.js';
import { ProposalReview } from '../../kit/ui/review/proposal-review.js';
import { deferred, descriptions, fakeClient, northmark, proposal, rowFor } from './review-helpers.js';

function setup(input: unknown = northmark(), replies: (DecideReply | Promise<DecideReply>)[] = [], template: string | null = null) {
  const request = proposal(input);
  const row = rowFor(request, { renderedTemplate: template });
  const { client, calls } = fakeClient(...replies);
  const onDone = vi.fn();
  const view = render(<ProposalReview row={row} request={request} decide={client.decide} onDone={onDone} />);
  return { request, row, client, calls, onDone, view };
}

const cell = (name: string) => screen.getByRole('cell', { name });
const include = (title: string) => screen.getByRole('checkbox', { name: `Include ${title}` }) as HTMLInputElement;
const proposed = (title: string) => screen.getByLabelText(`Proposed ${title}`) as HTMLInputElement;
const button = (name: string) => screen.getByRole('button', { name });
const counter = () => screen.getByText(/ of \d+ included$/);

/** A one-record update with a Current value for every field, to exercise equality and the Current cell. */
function update() {
  return {
    message: 'Update Acme',
    columns: { sources: [{ key: 'apollo', label: 'Apollo' }, { key: 'crunchbase', label: 'Crunchbase' }], current: { label: 'Salesforce' } },
    requestedSchema: {
      type: 'object',
      properties: {
        name: { type: 'string', title: 'Name', default: 'Acme' },
        tags: { type: 'array', title: 'Tags', items: { anyOf: [{ const: 'a', title: 'Alpha' }, { const: 'b', title: 'Beta' }, { const: 'c', title: 'Gamma' }] }, default: ['a', 'b'] },
        tier: { type: 'string', title: 'Tier', oneOf: [{ const: 'gold', title: 'Gold tier' }, { const: 'silver', title: 'Silver tier' }], default: 'gold' },
        city: { type: 'string', title: 'City', default: 'Paris' },
        note: { type: 'string', title: 'Note', default: 'new' },
      },
      required: ['name'],
    },
    fields: {
      name: { sources: { apollo: 'Acme', crunchbase: 'Acme Corp' }, current: 'Acme' },
      tags: { sources: { apollo: ['b', 'a'], crunchbase: ['a', 'c'] }, current: ['a', 'b'] },
      tier: { sources: { apollo: 'silver' }, current: 'gold' },
      city: { sources: { apollo: 'Lyon' }, current: 'Berlin', include: false },
    },
  };
}

describe('ProposalReview: layout', () => {
  it('shows the message as a heading and the rendered template above the grid, sanitized', () => {
    setup(northmark(), [], '<h3>Account <b>678cd3</b></h3><script>alert(1)</script>');
    expect(screen.getByRole('heading', { name: 'Sync NorthMark Strategies from Apollo into Salesforce' })).toBeTruthy();
    expect(screen.getByRole('heading', { name: 'Account 678cd3' })).toBeTruthy();
    expect(document.querySelector('.template b')?.textContent).toBe('678cd3');
    expect(document.querySelector('script')).toBeNull();
  });

  it('renders nothing above the grid without a template', () => {
    setup();
    expect(document.querySelector('.template')).toBeNull();
  });

  it('has a header per column in order and a row per property', () => {
    setup();
    const table = screen.getByRole('table', { name: 'Proposed changes' });
    const headers = within(table).getAllByRole('columnheader').map((h) => h.textContent);
    expect(headers).toEqual(['Field', 'Apollo', 'Crunchbase', 'Salesforce', 'Proposed', 'Include']);
    const rows = within(table).getAllByRole('rowheader').map((h) => h.textContent);
    expect(rows).toEqual(['Name', 'Website', 'Number of Employees', 'Institution Types']);
  });

  it('shows values readably: lists joined, options by title, blanks for nothing', () => {
    setup(update());
    expect(cell('Apollo: Tags').textContent).toBe('Beta, Alpha');
    expect(cell('Salesforce: Tier').textContent).toBe('Gold tier');
    expect(cell('Apollo: Tier').textContent).toBe('Silver tier');
    expect(cell('Crunchbase: Tier').textContent).toBe('');
    expect(cell('Apollo: Note').textContent).toBe('');
    expect(cell('Salesforce: Note').textContent).toBe('');
  });

  it('renames the footer buttons with labels; header actions stay', () => {
    const input = { ...northmark(), labels: { ok: 'Create Account', cancel: 'Skip' } };
    setup(input);
    expect(button('Create Account')).toBeTruthy();
    expect(button('Skip')).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Submit Changes' })).toBeNull();
    expect(button('Accept All')).toBeTruthy();
  });

  it('has default labels', () => {
    setup();
    expect(button('Submit Changes')).toBeTruthy();
    expect(button('Cancel')).toBeTruthy();
  });
});

describe('ProposalReview: highlights', () => {
  it('outlines every populated source on a create (NorthMark)', () => {
    setup();
    expect(cell('Apollo: Name').classList.contains('differs')).toBe(true);
    expect(cell('Crunchbase: Name').classList.contains('differs')).toBe(true);
    expect(cell('Apollo: Website').classList.contains('differs')).toBe(true);
    expect(cell('Apollo: Institution Types').classList.contains('differs')).toBe(true);
    // Crunchbase omitted the website: nothing to disagree with.
    expect(cell('Crunchbase: Website').classList.contains('differs')).toBe(false);
    expect(cell('Crunchbase: Website').textContent).toBe('');
  });

  it('highlights each source independently; equal values and reordered lists are not outlined', () => {
    setup(update());
    expect(cell('Apollo: Name').classList.contains('differs')).toBe(false);
    expect(cell('Crunchbase: Name').classList.contains('differs')).toBe(true);
    expect(cell('Apollo: Tags').classList.contains('differs')).toBe(false);
    expect(cell('Crunchbase: Tags').classList.contains('differs')).toBe(true);
    expect(cell('Salesforce: Name').classList.contains('differs')).toBe(false);
  });
});

describe('ProposalReview: double-click', () => {
  it('copies a source into Proposed and includes the row, with a tooltip', () => {
    setup(update());
    expect(include('Tier').checked).toBe(false);
    const source = cell('Apollo: Tier');
    expect(source.getAttribute('title')).toBe('Double-click to use as proposed value.');
    fireEvent.dblClick(source);
    expect((screen.getByLabelText('Proposed Tier') as HTMLSelectElement).value).toBe('silver');
    expect(include('Tier').checked).toBe(true);
    expect(counter().textContent).toBe('2 of 5 included');
  });

  it('copies the Crunchbase name on a create', () => {
    setup();
    fireEvent.dblClick(cell('Crunchbase: Name'));
    expect(proposed('Name').value).toBe('NorthMark Strategies Inc.');
  });

  it('offers nothing on an empty source cell', () => {
    setup();
    const empty = cell('Crunchbase: Website');
    expect(empty.getAttribute('title')).toBeNull();
    fireEvent.dblClick(empty);
    expect(proposed('Website').value).toBe('https://www.northmarkstrategies.com/');
  });

  it('restores Current into Proposed and excludes the row, with a tooltip', () => {
    setup(update());
    fireEvent.dblClick(cell('Apollo: City'));
    expect(include('City').checked).toBe(true);
    const current = cell('Salesforce: City');
    expect(current.getAttribute('title')).toBe('Double-click to restore the current value.');
    fireEvent.dblClick(current);
    expect(proposed('City').value).toBe('Berlin');
    expect(include('City').checked).toBe(false);
  });

  it('offers no restore on an empty Current cell', () => {
    setup();
    const current = cell('Salesforce: Website');
    expect(current.getAttribute('title')).toBeNull();
    fireEvent.dblClick(current);
    expect(proposed('Website').value).toBe('https://www.northmarkstrategies.com/');
    expect(include('Website').checked).toBe(true);
  });
});

describe('ProposalReview: include', () => {
  it('includes rows whose Proposed differs from Current, honours fields[k].include, and counts', () => {
    setup(update());
    expect(include('Name').checked).toBe(false); // default equals current
    expect(include('Tags').checked).toBe(false); // same set
    expect(include('Tier').checked).toBe(false);
    expect(include('City').checked).toBe(false); // differs, but include: false
    expect(include('Note').checked).toBe(true); // proposed-only field
    expect(counter().textContent).toBe('1 of 5 included');
    expect(counter().getAttribute('aria-live')).toBe('polite');
  });

  it('includes everything on the NorthMark create (institutionTypes by include: true)', () => {
    setup();
    expect(counter().textContent).toBe('4 of 4 included');
  });

  it('locks a required field without a Current value (NorthMark Name)', () => {
    setup();
    expect(include('Name').disabled).toBe(true);
    expect(include('Name').checked).toBe(true);
    expect(include('Website').disabled).toBe(false);
    fireEvent.click(include('Name'));
    expect(include('Name').checked).toBe(true);
  });

  it('leaves a required field with a Current value unlocked', () => {
    setup(update());
    expect(include('Name').disabled).toBe(false);
    fireEvent.click(include('Name'));
    expect(include('Name').checked).toBe(true);
    fireEvent.click(include('Name'));
    expect(include('Name').checked).toBe(false);
  });

  it('toggles a row by its checkbox', () => {
    setup();
    fireEvent.click(include('Website'));
    expect(include('Website').checked).toBe(false);
    expect(counter().textContent).toBe('3 of 4 included');
  });

  it('Accept All, Reject All (keeping the lock) and Restore Proposed', () => {
    setup();
    fireEvent.click(button('Reject All'));
    expect(counter().textContent).toBe('1 of 4 included');
    expect(include('Name').checked).toBe(true);
    expect(include('Website').checked).toBe(false);
    fireEvent.click(button('Accept All'));
    expect(counter().textContent).toBe('4 of 4 included');
    fireEvent.input(proposed('Website'), { target: { value: 'https://example.com/' } });
    fireEvent.input(proposed('Number of Employees'), { target: { value: '5' } });
    fireEvent.click(include('Website'));
    fireEvent.click(button('Restore Proposed'));
    expect(proposed('Website').value).toBe('https://www.northmarkstrategies.com/');
    expect(proposed('Number of Employees').value).toBe('230');
    // Inclusion is a separate choice: Restore Proposed keeps it.
    expect(include('Website').checked).toBe(false);
  });
});

describe('ProposalReview: editors', () => {
  it('uses the editor for each kind', () => {
    setup();
    expect(proposed('Name').type).toBe('text');
    expect(proposed('Number of Employees').type).toBe('number');
    expect(proposed('Number of Employees').step).toBe('1');
    const multi = screen.getByLabelText('Proposed Institution Types') as HTMLSelectElement;
    expect(multi.multiple).toBe(true);
    expect(Array.from(multi.options).filter((o) => o.selected).map((o) => o.value)).toEqual(['Asset Manager', 'Private Equity']);
  });

  it('editing a Proposed value includes its row: an edit the submit would drop is never what the person meant', () => {
    setup();
    fireEvent.click(include('Website'));
    expect(include('Website').checked).toBe(false);
    fireEvent.input(proposed('Website'), { target: { value: 'https://northmark.example/' } });
    expect(include('Website').checked).toBe(true);
    expect(counter().textContent).toBe('4 of 4 included');
  });
});

describe('ProposalReview: submit', () => {
  it('sends exactly the included values, in the shape submission() gives', async () => {
    const { calls, onDone } = setup();
    fireEvent.click(include('Website'));
    fireEvent.input(proposed('Number of Employees'), { target: { value: '231' } });
    fireEvent.click(button('Submit Changes'));
    await screen.findByText('Decision sent.');
    expect(calls).toEqual([{
      elicitationId: 'el-1',
      decision: 'approved',
      included: ['name', 'employeeCount', 'institutionTypes'],
      values: { name: 'NorthMark Strategies', employeeCount: 231, institutionTypes: ['Asset Manager', 'Private Equity'] },
    }]);
    expect(screen.getByRole('status').textContent).toBe('Decision sent.');
    expect(onDone).toHaveBeenCalledTimes(1);
  });

  it('sends the comment when there is one', async () => {
    const { calls } = setup();
    fireEvent.input(screen.getByRole('textbox', { name: 'Comment (optional)' }), { target: { value: ' Looks right ' } });
    fireEvent.click(button('Submit Changes'));
    await screen.findByText('Decision sent.');
    expect(calls[0]?.comment).toBe('Looks right');
  });

  it('blocks a format error next to its field, without calling the hub', async () => {
    const { calls } = setup();
    fireEvent.input(proposed('Website'), { target: { value: 'not a url' } });
    fireEvent.click(button('Submit Changes'));
    const input = proposed('Website');
    await waitFor(() => expect(input.getAttribute('aria-invalid')).toBe('true'));
    expect(descriptions(input)[0]).toMatch(/format "uri"/);
    expect(calls).toEqual([]);
  });

  it('does not validate an excluded field', async () => {
    const { calls } = setup();
    fireEvent.input(proposed('Website'), { target: { value: 'not a url' } });
    fireEvent.click(include('Website'));
    fireEvent.click(button('Submit Changes'));
    await screen.findByText('Decision sent.');
    expect(calls[0]?.included).toEqual(['name', 'employeeCount', 'institutionTypes']);
  });

  it('flags a cleared required field; editing one field keeps the other errors', async () => {
    const { calls } = setup();
    fireEvent.input(proposed('Name'), { target: { value: '' } });
    fireEvent.input(proposed('Website'), { target: { value: 'nope' } });
    fireEvent.click(button('Submit Changes'));
    await waitFor(() => expect(proposed('Name').getAttribute('aria-invalid')).toBe('true'));
    // Said for a person, not in the validator's words for agents.
    expect(screen.getByText('Required.')).toBeTruthy();
    expect(proposed('Website').getAttribute('aria-invalid')).toBe('true');
    fireEvent.input(proposed('Name'), { target: { value: 'NorthMark' } });
    expect(proposed('Name').getAttribute('aria-invalid')).toBeNull();
    expect(proposed('Website').getAttribute('aria-invalid')).toBe('true');
    expect(proposed('Website').value).toBe('nope');
    expect(calls).toEqual([]);
  });

  it('cancels directly from the footer button', async () => {
    const { calls, onDone } = setup();
    fireEvent.input(screen.getByRole('textbox', { name: 'Comment (optional)' }), { target: { value: 'wrong company' } });
    fireEvent.click(button('Cancel'));
    await screen.findByText('Decision sent.');
    expect(calls).toEqual([{ elicitationId: 'el-1', decision: 'rejected', comment: 'wrong company' }]);
    expect(screen.queryByRole('alertdialog')).toBeNull();
    expect(onDone).toHaveBeenCalled();
  });

  it('disables the buttons while a decision is in flight', async () => {
    const pending = deferred<DecideReply>();
    const { calls } = setup(northmark(), [pending.promise]);
    fireEvent.click(button('Submit Changes'));
    await waitFor(() => expect((button('Submit Changes') as HTMLButtonElement).disabled).toBe(true));
    expect((button('Cancel') as HTMLButtonElement).disabled).toBe(true);
    fireEvent.keyDown(proposed('Name'), { key: 'Enter', ctrlKey: true });
    pending.resolve({ state: 'answered', ok: false, reason: 'expired' });
    await screen.findByRole('alert');
    expect((button('Submit Changes') as HTMLButtonElement).disabled).toBe(false);
    expect(calls).toHaveLength(1);
  });
});

describe('ProposalReview: replies', () => {
  it('shows the hub\'s invalid issues next to the fields and keeps what was typed', async () => {
    const { calls, onDone } = setup(northmark(), [{
      state: 'answered', ok: false, reason: 'invalid',
      issues: [
        { path: 'values.employeeCount', rule: 'maximum', message: 'values.employeeCount: must be at most 100, got 231' },
        { path: 'included[0]', rule: 'unknown_field', message: 'included[0]: not a property' },
      ],
    }]);
    fireEvent.input(proposed('Number of Employees'), { target: { value: '231' } });
    fireEvent.input(proposed('Name'), { target: { value: 'NorthMark LLC' } });
    fireEvent.click(button('Submit Changes'));
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toMatch(/refused/);
    const count = proposed('Number of Employees');
    expect(count.getAttribute('aria-invalid')).toBe('true');
    expect(descriptions(count)).toEqual(['must be at most 100, got 231', 'A whole number']);
    expect(screen.getByRole('list', { name: 'Problems' }).textContent).toContain('included[0]: not a property');
    expect(count.value).toBe('231');
    expect(proposed('Name').value).toBe('NorthMark LLC');
    expect(calls).toHaveLength(1);
    expect(onDone).not.toHaveBeenCalled();
  });

  it.each([
    ['already_decided', 'This request was already decided; your decision was not used.'],
    ['expired', 'This request expired before your decision reached the agent.'],
    ['withdrawn', 'The agent withdrew this request.'],
    ['not_found', 'The hub no longer knows this request.'],
  ] as const)('explains a %s refusal in an alert and keeps the edits', async (reason, text) => {
    const { onDone } = setup(northmark(), [{ state: 'answered', ok: false, reason }]);
    fireEvent.input(proposed('Website'), { target: { value: 'https://example.org/' } });
    fireEvent.click(button('Submit Changes'));
    expect((await screen.findByRole('alert')).textContent).toBe(text);
    expect(proposed('Website').value).toBe('https://example.org/');
    expect(onDone).not.toHaveBeenCalled();
  });

  it('reports a queued decision as saved and stays on the page', async () => {
    const { onDone } = setup(northmark(), [{ state: 'queued' }]);
    fireEvent.click(button('Submit Changes'));
    await waitFor(() => expect(screen.getByRole('status').textContent)
      .toBe('The hub is unreachable. Your decision is saved and will be delivered when it reconnects.'));
    expect(onDone).not.toHaveBeenCalled();
  });

  it('shows an error reply in an alert and lets the reviewer retry', async () => {
    const { calls } = setup(northmark(), [{ state: 'error', message: 'Background not responding' }]);
    fireEvent.click(button('Submit Changes'));
    expect((await screen.findByRole('alert')).textContent).toBe('Background not responding');
    fireEvent.click(button('Submit Changes'));
    await screen.findByText('Decision sent.');
    expect(calls).toHaveLength(2);
  });

  it('treats a failing client as an error, not a crash', async () => {
    const { client } = setup();
    vi.mocked(client.decide).mockRejectedValueOnce(new Error('port closed'));
    fireEvent.click(button('Submit Changes'));
    expect((await screen.findByRole('alert')).textContent).toBe('port closed');
  });
});

describe('ProposalReview: keyboard', () => {
  it('submits on Ctrl+Enter and on Cmd+Enter', async () => {
    const first = setup();
    fireEvent.keyDown(proposed('Name'), { key: 'Enter', ctrlKey: true });
    await screen.findByText('Decision sent.');
    expect(first.calls[0]?.decision).toBe('approved');
    first.view.unmount();

    const second = setup();
    fireEvent.keyDown(screen.getByRole('table', { name: 'Proposed changes' }), { key: 'Enter', metaKey: true });
    await screen.findByText('Decision sent.');
    expect(second.calls[0]?.decision).toBe('approved');
  });

  it('ignores a plain Enter', () => {
    const { calls } = setup();
    fireEvent.keyDown(proposed('Name'), { key: 'Enter' });
    expect(calls).toEqual([]);
  });

  it('asks on Escape; "Keep reviewing" closes the question and keeps everything', () => {
    const { calls } = setup();
    fireEvent.input(proposed('Website'), { target: { value: 'https://example.org/' } });
    fireEvent.keyDown(proposed('Website'), { key: 'Escape' });
    const dialog = screen.getByRole('alertdialog', { name: 'Cancel this request?' });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Keep reviewing' }));
    expect(screen.queryByRole('alertdialog')).toBeNull();
    expect(proposed('Website').value).toBe('https://example.org/');
    expect(calls).toEqual([]);
  });

  it('cancels on Escape then "Yes, cancel"', async () => {
    const { calls } = setup();
    fireEvent.keyDown(document.body, { key: 'Escape' });
    fireEvent.click(within(screen.getByRole('alertdialog')).getByRole('button', { name: 'Yes, cancel' }));
    await screen.findByText('Decision sent.');
    expect(calls).toEqual([{ elicitationId: 'el-1', decision: 'rejected' }]);
  });

  it('closes the question on a second Escape', () => {
    setup();
    fireEvent.keyDown(proposed('Name'), { key: 'Escape' });
    expect(screen.getByRole('alertdialog')).toBeTruthy();
    fireEvent.keyDown(screen.getByRole('button', { name: 'Keep reviewing' }), { key: 'Escape' });
    expect(screen.queryByRole('alertdialog')).toBeNull();
  });
});

describe('ProposalReview: reopening a decision the hub refused', () => {
  it('starts from the refused attempt, with the hub issues next to their fields and the comment kept', () => {
    const request = proposal();
    const row = rowFor(request, {
      delivery: 'refused',
      outcome: { decision: 'approved', action: 'submit', values: { name: 'NorthMark', employeeCount: 3.5 }, included: ['name', 'employeeCount'], comment: 'checked by hand' },
      refusal: { reason: 'invalid', issues: [{ path: 'values.employeeCount', rule: 'invalid_type', message: 'values.employeeCount: must be an integer, got number 3.5' }] },
    });
    const { client } = fakeClient();
    render(<ProposalReview row={row} request={request} decide={client.decide} />);
    expect(proposed('Name').value).toBe('NorthMark');
    expect(proposed('Number of Employees').value).toBe('3.5');
    expect(proposed('Number of Employees').getAttribute('aria-invalid')).toBe('true');
    expect(screen.getByText('must be an integer, got number 3.5')).toBeTruthy();
    expect(include('Website').checked).toBe(false);
    expect(include('Number of Employees').checked).toBe(true);
    expect((screen.getByLabelText('Comment (optional)') as HTMLTextAreaElement).value).toBe('checked by hand');
  });
});

/** Sources as agents' systems return them: numbers as text, options in another case, values that fit nowhere. */
function messy() {
  return {
    message: 'Update Beta',
    columns: { sources: [{ key: 'apollo', label: 'Apollo' }, { key: 'zoominfo', label: 'ZoomInfo' }], current: { label: 'Salesforce' } },
    requestedSchema: {
      type: 'object',
      properties: {
        employees: { type: 'integer', title: 'Employees', minimum: 1, default: 10 },
        kind: { type: 'string', title: 'Kind', oneOf: [{ const: 'reit', title: 'REIT' }, { const: 'pe', title: 'Private Equity' }], default: 'pe' },
        types: { type: 'array', title: 'Types', items: { enum: ['Asset Manager', 'REIT'] }, default: ['REIT'] },
        public: { type: 'boolean', title: 'Public', default: false },
        code: { type: 'string', title: 'Code', default: 'B-1' },
      },
    },
    fields: {
      employees: { sources: { apollo: '230', zoominfo: '3.5' }, current: '120' },
      kind: { sources: { apollo: 'private equity', zoominfo: 'Bank' }, current: 'pe' },
      types: { sources: { apollo: ['reit', 'asset manager'], zoominfo: ['REIT', 'Bank', 'Fund'] } },
      public: { sources: { apollo: 'TRUE', zoominfo: 'yes' } },
      code: { sources: { apollo: 2026 } },
    },
  };
}

const refusalIn = (name: string) => within(cell(name)).queryByRole('alert')?.textContent ?? null;

/** Every Proposed editor's state as the person sees it. */
function proposedState(): string[] {
  return Array.from(document.querySelectorAll<HTMLInputElement | HTMLSelectElement>('td.proposed input, td.proposed select')).map((el) => {
    if (el instanceof HTMLSelectElement) return Array.from(el.selectedOptions).map((o) => o.value).join('|');
    return el.type === 'checkbox' ? String(el.checked) : el.value;
  });
}

describe('ProposalReview: double-click copies the value converted to the field\'s type', () => {
  it.each<[string, string, string, unknown]>([
    ['numeric text into an integer', 'Apollo: Employees', 'employees', 230],
    ['an option by its title, ignoring case', 'Apollo: Kind', 'kind', 'pe'],
    ['a list of options, ignoring case', 'Apollo: Types', 'types', ['REIT', 'Asset Manager']],
    ['"TRUE" into a boolean', 'Apollo: Public', 'public', true],
    ['a number into a text field', 'Apollo: Code', 'code', '2026'],
  ])('%s', async (_name, source, key, sent) => {
    const { calls } = setup(messy());
    fireEvent.click(button('Reject All'));
    fireEvent.dblClick(cell(source));
    expect(refusalIn(source)).toBeNull();
    fireEvent.click(button('Submit Changes'));
    await screen.findByText('Decision sent.');
    expect(calls[0]?.included).toEqual([key]);
    expect(calls[0]?.values).toEqual({ [key]: sent });
  });

  it.each<[string, string, string]>([
    ['a fraction into an integer', 'ZoomInfo: Employees', 'Not copied: "3.5" is not a whole number.'],
    ['a value that is not an option', 'ZoomInfo: Kind', 'Not copied: "Bank" is not one of the options.'],
    ['a list with items that are not options: none is dropped', 'ZoomInfo: Types', 'Not copied: "Bank", "Fund" are not options.'],
    ['"yes" into a boolean', 'ZoomInfo: Public', 'Not copied: "yes" is not true or false.'],
  ])('refuses %s: the cell says why at once, Proposed and Include stay', (_name, source, text) => {
    setup(messy());
    const before = proposedState();
    const counted = counter().textContent;
    fireEvent.dblClick(cell(source));
    // role="alert": announced to screen readers as it appears.
    expect(refusalIn(source)).toBe(text);
    expect(proposedState()).toEqual(before);
    expect(counter().textContent).toBe(counted);
  });

  it('the reason goes with the next change', () => {
    setup(messy());
    fireEvent.dblClick(cell('ZoomInfo: Kind'));
    expect(refusalIn('ZoomInfo: Kind')).not.toBeNull();
    fireEvent.dblClick(cell('Apollo: Employees'));
    expect(refusalIn('ZoomInfo: Kind')).toBeNull();
    expect(proposed('Employees').value).toBe('230');
  });

  it('converts the Current cell too: numeric text restores as a number, the row left out', async () => {
    const { calls } = setup(messy());
    fireEvent.click(button('Reject All'));
    fireEvent.dblClick(cell('Apollo: Employees'));
    fireEvent.dblClick(cell('Salesforce: Employees'));
    expect(proposed('Employees').value).toBe('120');
    expect(include('Employees').checked).toBe(false);
    fireEvent.click(include('Employees'));
    fireEvent.click(button('Submit Changes'));
    await screen.findByText('Decision sent.');
    expect(calls[0]?.values).toEqual({ employees: 120 });
  });
});

describe('ProposalReview: checked as the person types, with the shared validator', () => {
  it('says what is wrong next to the field at once, and clears it when fixed', () => {
    const { calls } = setup();
    fireEvent.input(proposed('Website'), { target: { value: 'not a url' } });
    expect(proposed('Website').getAttribute('aria-invalid')).toBe('true');
    expect(descriptions(proposed('Website'))[0]).toMatch(/must be an absolute URI .* \(format "uri"\)/);
    fireEvent.input(proposed('Website'), { target: { value: 'https://northmark.example/' } });
    expect(proposed('Website').getAttribute('aria-invalid')).toBeNull();
    expect(calls).toEqual([]);
  });

  it('checks a number as it is typed, against the schema\'s bounds', () => {
    setup(messy());
    fireEvent.input(proposed('Employees'), { target: { value: '0' } });
    expect(descriptions(proposed('Employees'))).toEqual(['must be at least 1, got 0', 'A whole number, at least 1']);
    fireEvent.input(proposed('Employees'), { target: { value: '2.5' } });
    expect(descriptions(proposed('Employees'))[0]).toBe('must be an integer, got number 2.5');
  });

  it('a half-typed number is flagged, and nothing is sent for it', async () => {
    const { calls } = setup();
    const count = proposed('Number of Employees');
    Object.defineProperty(count, 'validity', { configurable: true, value: { badInput: true } });
    fireEvent.input(count, { target: { value: '' } });
    expect(descriptions(count)[0]).toBe('Not a number.');
    fireEvent.click(button('Submit Changes'));
    await waitFor(() => expect(document.activeElement).toBe(count));
    expect(calls).toEqual([]);
  });

  it('a value copied into an included row is checked too; leaving the row out clears its message', () => {
    setup(messy());
    fireEvent.input(proposed('Code'), { target: { value: '' } });
    fireEvent.input(proposed('Employees'), { target: { value: '0' } });
    expect(proposed('Employees').getAttribute('aria-invalid')).toBe('true');
    fireEvent.click(include('Employees'));
    expect(proposed('Employees').getAttribute('aria-invalid')).toBeNull();
    fireEvent.click(include('Employees'));
    expect(proposed('Employees').getAttribute('aria-invalid')).toBe('true');
  });
});

/** Properties without a default, on a record that has values. */
function blanks() {
  return {
    message: 'Update Beta',
    columns: { sources: [{ key: 'apollo', label: 'Apollo' }], current: { label: 'Salesforce' } },
    requestedSchema: {
      type: 'object',
      properties: {
        name: { type: 'string', title: 'Name', default: 'Beta' },
        phone: { type: 'string', title: 'Phone' },
        active: { type: 'boolean', title: 'Active' },
        verified: { type: 'boolean', title: 'Verified' },
      },
      required: ['verified'],
    },
    fields: {
      name: { sources: {}, current: 'Beta Ltd' },
      phone: { sources: { apollo: '+1 555 0199' }, current: '+1 555 0100' },
      active: { sources: {}, current: true },
    },
  };
}

describe('ProposalReview: a property without a default proposes nothing', () => {
  it('is not included, shows an unticked box for a boolean, and the agent receives no null', async () => {
    const { calls } = setup(blanks());
    expect(include('Phone').checked).toBe(false);
    expect(include('Active').checked).toBe(false);
    expect((screen.getByLabelText('Proposed Active') as HTMLInputElement).checked).toBe(false);
    fireEvent.click(button('Submit Changes'));
    await screen.findByText('Decision sent.');
    expect(calls[0]?.values).toEqual({ name: 'Beta', verified: false });
  });

  it('a required boolean with no default is locked in unticked and sends false, with no "Required." beside it', async () => {
    const { calls } = setup(blanks());
    expect(include('Verified').disabled).toBe(true);
    const box = screen.getByLabelText('Proposed Verified') as HTMLInputElement;
    expect(box.checked).toBe(false);
    fireEvent.click(button('Submit Changes'));
    await screen.findByText('Decision sent.');
    expect(screen.queryByText('Required.')).toBeNull();
    expect(calls[0]?.values).toHaveProperty('verified', false);
  });

  it('Accept All leaves it out: it would clear the record\'s value although nobody proposed that', () => {
    setup(blanks());
    fireEvent.click(button('Accept All'));
    expect(include('Phone').checked).toBe(false);
    expect(include('Active').checked).toBe(false);
    expect(counter().textContent).toBe('2 of 4 included');
  });

  it('a person who includes it and leaves it empty sends null on purpose', async () => {
    const { calls } = setup(blanks());
    fireEvent.click(include('Phone'));
    fireEvent.click(button('Submit Changes'));
    await screen.findByText('Decision sent.');
    expect(calls[0]?.values).toEqual({ name: 'Beta', phone: null, verified: false });
  });
});

// Agents choose property and column names; these are Object.prototype's.
const HOSTILE = ['constructor', 'toString', 'hasOwnProperty'] as const;

function hostile(name: string) {
  return {
    message: `Fields named ${name}`,
    columns: { sources: [{ key: name, label: 'Odd source' }, { key: 'zoominfo', label: 'ZoomInfo' }], current: { label: 'Salesforce' } },
    requestedSchema: {
      type: 'object',
      properties: { [name]: { type: 'string', title: 'Odd', default: 'kept' }, plain: { type: 'integer', title: 'Plain' } },
      required: [name],
    },
    // Neither the odd property nor the odd column has an entry: a plain lookup would find Object.prototype's.
    fields: { plain: { sources: { zoominfo: '7' }, current: 3 } },
  };
}

/** The same request with a property named "__proto__", as JSON.parse gives it (the server refuses one at creation). */
function protoRequest(): ProposalRequest {
  const base = proposal(hostile('zzproto'));
  return JSON.parse(JSON.stringify(base).replaceAll('zzproto', '__proto__')) as ProposalRequest;
}

describe('ProposalReview: names an agent may choose', () => {
  it.each(HOSTILE)('a property and a column named %s: the review renders, checks and decides', async (name) => {
    const { calls } = setup(hostile(name));
    expect(cell('Odd source: Plain').textContent).toBe('');
    expect(cell('Odd source: Plain').getAttribute('title')).toBeNull();
    expect(cell('Odd source: Plain').classList.contains('differs')).toBe(false);
    fireEvent.input(proposed('Odd'), { target: { value: '' } });
    expect(descriptions(proposed('Odd'))).toEqual(['Required.']);
    fireEvent.input(proposed('Odd'), { target: { value: 'edited' } });
    fireEvent.dblClick(cell('ZoomInfo: Plain'));
    fireEvent.click(button('Submit Changes'));
    await screen.findByText('Decision sent.');
    expect(calls[0]).toMatchObject({ decision: 'approved', included: [name, 'plain'], values: { [name]: 'edited', plain: 7 } });
  });

  it('a property named "__proto__" that reaches the review is an ordinary field', async () => {
    const request = protoRequest();
    const { client, calls } = fakeClient();
    render(<ProposalReview row={rowFor(request)} request={request} decide={client.decide} />);
    fireEvent.input(proposed('Odd'), { target: { value: 'edited' } });
    fireEvent.click(button('Submit Changes'));
    await screen.findByText('Decision sent.');
    const values = calls[0]?.values ?? {};
    expect(Object.hasOwn(values, '__proto__') && values.__proto__).toBe('edited');
    expect(Object.getPrototypeOf(values)).toBe(Object.prototype);
  });
});

describe('ProposalReview: the footer says what each button does, whatever its label', () => {
  it('an ok labelled "No, keep it" is still described, and shown, as approving', () => {
    setup({ ...northmark(), labels: { ok: 'No, keep it', cancel: 'Yes, change it' } });
    const ok = button('No, keep it');
    expect(descriptions(ok)).toEqual(['approves: sends the included fields']);
    expect(descriptions(button('Yes, change it'))).toEqual(['rejects: changes nothing']);
    expect(ok.nextElementSibling?.textContent).toBe('approves: sends the included fields');
    expect(ok.classList.contains('primary')).toBe(true);
  });
});

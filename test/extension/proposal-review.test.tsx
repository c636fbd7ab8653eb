import { fireEvent, render, screen, waitFor, within } from '@testing-library/preact';
import { describe, expect, it, vi } from 'vitest';
import type { DecideReply } from '../../extension/messages.js';
import { ProposalReview } from '../../extension/ui/review/proposal-review.js';
import { deferred, fakeClient, northmark, proposal, rowFor } from './review-helpers.js';

function setup(input: unknown = northmark(), replies: (DecideReply | Promise<DecideReply>)[] = [], template: string | null = null) {
  const request = proposal(input);
  const row = rowFor(request, { renderedTemplate: template });
  const { client, calls } = fakeClient(...replies);
  const onDone = vi.fn();
  const view = render(<ProposalReview row={row} request={request} client={client} onDone={onDone} />);
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
    const error = document.getElementById(input.getAttribute('aria-describedby') ?? '');
    expect(error?.textContent).toMatch(/format "uri"/);
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
    expect(document.getElementById(count.getAttribute('aria-describedby') ?? '')?.textContent).toBe('must be at most 100, got 231');
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
    render(<ProposalReview row={row} request={request} client={client} />);
    expect(proposed('Name').value).toBe('NorthMark');
    expect(proposed('Number of Employees').value).toBe('3.5');
    expect(proposed('Number of Employees').getAttribute('aria-invalid')).toBe('true');
    expect(screen.getByText('must be an integer, got number 3.5')).toBeTruthy();
    expect(include('Website').checked).toBe(false);
    expect(include('Number of Employees').checked).toBe(true);
    expect((screen.getByLabelText('Comment (optional)') as HTMLTextAreaElement).value).toBe('checked by hand');
  });
});

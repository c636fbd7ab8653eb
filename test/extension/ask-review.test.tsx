// The three asks routed to the extension (elicit_confirm, elicit_form, elicit_selection), as a person answers them:
// what each shows, what each button sends, the keyboard (Enter where unambiguous, Ctrl+Enter, Esc) and the checks that
// keep an answer the hub would refuse from leaving.
import { fireEvent, render, screen, waitFor, within } from '@testing-library/preact';
import { describe, expect, it, vi } from 'vitest';
import { selectionIssues, type ConfirmAsk, type FormAsk, type SelectionAsk } from '../../shared/ask-input.js';
import { shownHash } from '../../shared/shown-hash.js';
import type { RequestRow } from '../../kit/rows/rows.js';
import type { DecideReply } from '../../kit/messages.js';
import { ReviewView } from '../../kit/ui/review/review-view.js';
import { confirmAsk, descriptions, fakeClient, formAsk, rowFor, selectionAsk } from './review-helpers.js';

function show(request: ConfirmAsk | FormAsk | SelectionAsk, replies: DecideReply[] = [], extra: Partial<RequestRow> = {}) {
  const { client, calls } = fakeClient(...replies);
  const onDone = vi.fn();
  const row = rowFor(request, extra);
  render(<ReviewView row={row} decide={client.decide} onDone={onDone} />);
  // Every decision carries the hash of the row the review renders: the hub refuses one that is not its request.
  return { calls, onDone, shown: shownHash(row) };
}

const button = (name: string) => screen.getByRole('button', { name });
const sent = () => screen.findByText('Decision sent.');

describe('a yes/no question (elicit_confirm)', () => {
  it('shows the question and two buttons named by the agent, each with fixed words saying what it sends', () => {
    show(confirmAsk('¿Publicar la versión 2.0?', 'Sí', 'No'));
    expect(screen.getByRole('heading', { name: '¿Publicar la versión 2.0?' })).toBeTruthy();
    expect(descriptions(button('Sí'))).toEqual(['answers yes']);
    expect(descriptions(button('No'))).toEqual(['answers no']);
    expect(descriptions(button('Dismiss'))).toEqual(['declines to answer']);
    // An ask's result carries no comment: a box the agent never reads would mislead.
    expect(screen.queryByRole('textbox')).toBeNull();
  });

  it('the yes label answers yes', async () => {
    const { calls, onDone, shown } = show(confirmAsk('Ship it?', 'Sí', 'No'));
    fireEvent.click(button('Sí'));
    await sent();
    expect(calls).toEqual([{ elicitationId: 'el-1', decision: 'approved', values: { confirmed: true }, shownHash: await shown }]);
    expect(onDone).toHaveBeenCalledTimes(1);
  });

  it('the no label answers no (an approved answer of false, not a dismissal)', async () => {
    const { calls, shown } = show(confirmAsk('Ship it?', 'Sí', 'No'));
    fireEvent.click(button('No'));
    await sent();
    expect(calls).toEqual([{ elicitationId: 'el-1', decision: 'approved', values: { confirmed: false }, shownHash: await shown }]);
  });

  it('labels that say the opposite of what they send are still announced by what they send', async () => {
    const { calls } = show(confirmAsk('Delete the branch?', 'No', 'Yes'));
    expect(descriptions(button('No'))).toEqual(['answers yes']);
    expect(button('No').nextElementSibling?.textContent).toBe('answers yes');
    fireEvent.click(button('No'));
    await sent();
    expect(calls[0]?.values).toEqual({ confirmed: true });
  });

  it('Dismiss declines to answer', async () => {
    const { calls, shown } = show(confirmAsk('Ship it?'));
    fireEvent.click(button('Dismiss'));
    await sent();
    expect(calls).toEqual([{ elicitationId: 'el-1', decision: 'rejected', shownHash: await shown }]);
  });

  it('Esc asks first: "Keep answering" closes, "Yes, dismiss" declines', async () => {
    const { calls, shown } = show(confirmAsk('Ship it?'));
    fireEvent.keyDown(document.body, { key: 'Escape' });
    const dialog = screen.getByRole('alertdialog', { name: 'Dismiss without answering?' });
    expect(document.activeElement).toBe(within(dialog).getByRole('button', { name: 'Keep answering' }));
    fireEvent.click(within(dialog).getByRole('button', { name: 'Keep answering' }));
    expect(screen.queryByRole('alertdialog')).toBeNull();
    expect(calls).toEqual([]);
    fireEvent.keyDown(button('Yes'), { key: 'Escape' });
    fireEvent.click(within(screen.getByRole('alertdialog')).getByRole('button', { name: 'Yes, dismiss' }));
    await sent();
    expect(calls).toEqual([{ elicitationId: 'el-1', decision: 'rejected', shownHash: await shown }]);
  });

  it('Ctrl+Enter sends nothing: neither answer is the default', async () => {
    const { calls, shown } = show(confirmAsk('Ship it?'));
    fireEvent.keyDown(button('Yes'), { key: 'Enter', ctrlKey: true });
    fireEvent.keyDown(document.body, { key: 'Enter', ctrlKey: true });
    expect(calls).toEqual([]);
    expect(screen.queryByText('Decision sent.')).toBeNull();
    // An answer given after the keys is the only one sent: one the keys had started would have been sent first.
    fireEvent.click(button('No'));
    await sent();
    expect(calls).toEqual([{ elicitationId: 'el-1', decision: 'approved', values: { confirmed: false }, shownHash: await shown }]);
  });

  it('shows characters that do not show in the agent\'s labels', () => {
    show(confirmAsk('Ship it?', 'Yes\u202E', 'No'));
    const yes = screen.getByRole('button', { name: /^Yes/ });
    expect(yes.textContent).toBe('Yes⟨U+202E⟩');
  });

  it('a second click while the first answer is on its way sends nothing more', async () => {
    const { calls } = show(confirmAsk('Ship it?'));
    fireEvent.click(button('Yes'));
    fireEvent.click(button('No'));
    await sent();
    expect(calls).toHaveLength(1);
    expect((button('No') as HTMLButtonElement).disabled).toBe(true);
  });
});

describe('a form (elicit_form)', () => {
  const schema = {
    type: 'object',
    properties: {
      version: { type: 'string', title: 'Version', minLength: 1 },
      prerelease: { type: 'boolean', title: 'Pre-release' },
      notes: { type: 'string', title: 'Notes', default: 'fix\u200Bes' },
    },
    required: ['version'],
  };

  it('uses the approval form\'s editors: labels, required marks, defaults, hidden-character warnings', () => {
    show(formAsk('Enter release details', schema));
    expect(screen.getByRole('heading', { name: 'Enter release details' })).toBeTruthy();
    const version = screen.getByRole('textbox', { name: 'Version' });
    expect(version.getAttribute('aria-required')).toBe('true');
    expect((screen.getByRole('checkbox', { name: 'Pre-release' }) as HTMLInputElement).checked).toBe(false);
    expect(descriptions(screen.getByRole('textbox', { name: 'Notes' }))).toEqual(['This value holds characters that do not show, and they are sent as they are: ⟨U+200B⟩ ZERO WIDTH SPACE.']);
    expect(descriptions(button('Submit'))).toEqual(['sends the form']);
    expect(screen.queryByRole('textbox', { name: 'Comment (optional)' })).toBeNull();
  });

  it('a checkbox without a default that the person never touched is sent as false, never null', async () => {
    const { calls, shown } = show(formAsk('Enter release details', schema));
    fireEvent.input(screen.getByRole('textbox', { name: 'Version' }), { target: { value: '1.2.0' } });
    fireEvent.click(button('Submit'));
    await sent();
    expect(calls).toEqual([{ elicitationId: 'el-1', decision: 'approved', values: { version: '1.2.0', prerelease: false, notes: 'fix\u200Bes' }, shownHash: await shown }]);
  });

  it('checks as the person types and refuses to send what the hub would refuse', async () => {
    const { calls } = show(formAsk('Enter release details', schema));
    const version = screen.getByRole('textbox', { name: 'Version' });
    fireEvent.click(button('Submit'));
    await waitFor(() => expect(version.getAttribute('aria-invalid')).toBe('true'));
    expect(descriptions(version)).toContain('Required.');
    expect(calls).toEqual([]);
    fireEvent.input(version, { target: { value: '2.0.0' } });
    expect(version.getAttribute('aria-invalid')).toBeNull();
  });

  it('Ctrl+Enter submits, with the box ticked', async () => {
    const { calls } = show(formAsk('Enter release details', schema));
    const version = screen.getByRole('textbox', { name: 'Version' });
    fireEvent.input(version, { target: { value: '2.0.0' } });
    fireEvent.click(screen.getByRole('checkbox', { name: 'Pre-release' }));
    fireEvent.keyDown(version, { key: 'Enter', ctrlKey: true });
    await sent();
    expect(calls[0]).toMatchObject({ decision: 'approved', values: { version: '2.0.0', prerelease: true } });
  });

  it('Esc asks, then dismisses without sending the values', async () => {
    const { calls, shown } = show(formAsk('Enter release details', schema));
    fireEvent.input(screen.getByRole('textbox', { name: 'Version' }), { target: { value: '2.0.0' } });
    fireEvent.keyDown(document.body, { key: 'Escape' });
    fireEvent.click(within(screen.getByRole('alertdialog', { name: 'Dismiss without answering?' })).getByRole('button', { name: 'Yes, dismiss' }));
    await sent();
    expect(calls).toEqual([{ elicitationId: 'el-1', decision: 'rejected', shownHash: await shown }]);
  });

  it('shows the hub\'s refusal next to the field and keeps what was typed', async () => {
    show(formAsk('Enter release details', schema), [{
      state: 'answered', ok: false, reason: 'invalid',
      issues: [{ path: 'values.version', rule: 'pattern', message: 'values.version: is not a version the agent accepts' }],
    }]);
    const version = screen.getByRole('textbox', { name: 'Version' }) as HTMLInputElement;
    fireEvent.input(version, { target: { value: 'v2' } });
    fireEvent.click(button('Submit'));
    await screen.findByRole('alert');
    expect(descriptions(version)).toContain('is not a version the agent accepts');
    expect(version.value).toBe('v2');
  });
});

describe('a form\'s multi-select field (type array of enum items)', () => {
  const schema = {
    type: 'object',
    properties: {
      platforms: { type: 'array', title: 'Platforms', minItems: 1, maxItems: 2, items: { anyOf: [{ const: 'mac', title: 'macOS' }, { const: 'win', title: 'Windows' }, { const: 'linux', title: 'Linux' }] }, default: ['mac'] },
    },
    required: ['platforms'],
  };

  it('is a group of checkboxes named by the options, like elicit_selection, with its bounds in words', () => {
    show(formAsk('Build for which platforms?', schema));
    const group = screen.getByRole('group', { name: /^Platforms/ });
    expect(within(group).getAllByRole('checkbox').map((c) => [c.getAttribute('value'), (c as HTMLInputElement).checked])).toEqual([['mac', true], ['win', false], ['linux', false]]);
    expect(screen.queryByRole('listbox')).toBeNull();
    expect(descriptions(group)).toEqual(['Choose 1–2']);
  });

  it('sends the ticked values in the options\' order, as the list box did; a refusal marks the boxes and the first one takes the focus', async () => {
    const { calls, shown } = show(formAsk('Build for which platforms?', schema));
    fireEvent.click(checkbox('macOS'));
    fireEvent.click(button('Submit'));
    await waitFor(() => expect(checkbox('macOS').getAttribute('aria-invalid')).toBe('true'));
    expect(document.activeElement).toBe(checkbox('macOS'));
    expect(calls).toEqual([]);
    fireEvent.click(checkbox('Linux'));
    fireEvent.click(checkbox('Windows'));
    fireEvent.click(button('Submit'));
    await sent();
    expect(calls).toEqual([{ elicitationId: 'el-1', decision: 'approved', values: { platforms: ['win', 'linux'] }, shownHash: await shown }]);
  });
});

const regions = [
  { value: 'eu', label: 'Europe', description: 'Frankfurt and Dublin' },
  { value: 'us', label: 'United States', description: 'Virginia' },
  { value: 'ap' },
];

function many(n: number) {
  return Array.from({ length: n }, (_, i) => ({ value: `opt-${i}`, label: `Option ${i}`, ...(i === 7 ? { description: 'the blue one' } : {}) }));
}

const radio = (name: string) => screen.getByRole('radio', { name }) as HTMLInputElement;
const checkbox = (name: string) => screen.getByRole('checkbox', { name }) as HTMLInputElement;
/** The message shown next to the group, as the shared check words it (without its path). */
const sharedWording = (ask: SelectionAsk, selected: string[]) => selectionIssues(ask, selected).map((i) => i.message.replace(/^values\.selected: /, ''));

describe('a single choice (elicit_selection)', () => {
  it('radios named by their labels (the value when there is none), descriptions and values beside them, the default picked', () => {
    show(selectionAsk({ message: 'Deploy where?', options: regions, default: ['us'] }));
    expect(screen.getByRole('group', { name: 'Choose one' })).toBeTruthy();
    expect(screen.getAllByRole('radio').map((r) => (r as HTMLInputElement).value)).toEqual(['eu', 'us', 'ap']);
    expect(radio('United States').checked).toBe(true);
    expect(radio('Europe').checked).toBe(false);
    expect(radio('ap').checked).toBe(false);
    expect(descriptions(radio('Europe'))).toEqual(['Frankfurt and Dublin', 'eu']);
    expect(descriptions(radio('ap'))).toEqual([]);
    expect(descriptions(button('Submit'))).toEqual(['sends the chosen option']);
    expect(screen.queryByRole('searchbox')).toBeNull();
  });

  it('sends the one option picked, by its value', async () => {
    const { calls, shown } = show(selectionAsk({ message: 'Deploy where?', options: regions, default: ['us'] }));
    fireEvent.click(radio('Europe'));
    fireEvent.click(button('Submit'));
    await sent();
    expect(calls).toEqual([{ elicitationId: 'el-1', decision: 'approved', values: { selected: ['eu'] }, shownHash: await shown }]);
  });

  it('with nothing picked, Submit says so next to the group in the shared check\'s words, and sends nothing', async () => {
    const ask = selectionAsk({ message: 'Deploy where?', options: regions });
    const { calls } = show(ask);
    fireEvent.click(button('Submit'));
    await waitFor(() => expect(radio('Europe').getAttribute('aria-invalid')).toBe('true'));
    expect(sharedWording(ask, [])).toEqual(['choose one']);
    expect(descriptions(radio('Europe'))).toEqual(['Frankfurt and Dublin', 'eu', 'choose one']);
    expect(document.activeElement).toBe(radio('Europe'));
    expect(calls).toEqual([]);
    fireEvent.click(radio('ap'));
    expect(radio('ap').getAttribute('aria-invalid')).toBeNull();
  });

  it('Enter on a radio submits once one is picked, and does nothing while none is', async () => {
    const { calls, shown } = show(selectionAsk({ message: 'Deploy where?', options: regions }));
    fireEvent.keyDown(radio('Europe'), { key: 'Enter' });
    expect(calls).toEqual([]);
    // The answer below is then the only one sent: a send the first Enter had started would have come first.
    fireEvent.click(radio('United States'));
    fireEvent.keyDown(radio('United States'), { key: 'Enter' });
    await sent();
    expect(calls).toEqual([{ elicitationId: 'el-1', decision: 'approved', values: { selected: ['us'] }, shownHash: await shown }]);
  });

  it('Esc asks, then dismisses', async () => {
    const { calls, shown } = show(selectionAsk({ message: 'Deploy where?', options: regions, default: ['eu'] }));
    fireEvent.keyDown(radio('Europe'), { key: 'Escape' });
    fireEvent.click(within(screen.getByRole('alertdialog', { name: 'Dismiss without answering?' })).getByRole('button', { name: 'Yes, dismiss' }));
    await sent();
    expect(calls).toEqual([{ elicitationId: 'el-1', decision: 'rejected', shownHash: await shown }]);
  });

  it('shows characters that do not show in a label, and sends the value exactly as the agent wrote it', async () => {
    const { calls } = show(selectionAsk({ message: 'Which?', options: [{ value: 'a\u200Bb', label: 'Safe\u202Eoption' }, { value: 'c' }] }));
    const hostile = screen.getByRole('radio', { name: /^Safe/ });
    expect(document.querySelector(`label[for="${hostile.id}"]`)?.textContent).toBe('Safe⟨U+202E⟩option');
    expect(descriptions(hostile)).toEqual(['a⟨U+200B⟩b']);
    fireEvent.click(hostile);
    fireEvent.click(button('Submit'));
    await sent();
    expect(calls[0]?.values).toEqual({ selected: ['a\u200Bb'] });
  });
});

describe('a multiple choice (elicit_selection, multiple: true)', () => {
  const bounded = () => selectionAsk({ message: 'Which checks?', options: many(5), multiple: true, minSelected: 2, maxSelected: 3, default: ['opt-3'] });

  it('checkboxes with the defaults ticked and the bounds in words', () => {
    show(bounded());
    expect(screen.getByRole('group', { name: 'Choose 2 to 3 · 1 chosen' })).toBeTruthy();
    expect(screen.getAllByRole('checkbox').map((c) => (c as HTMLInputElement).checked)).toEqual([false, false, false, true, false]);
    expect(descriptions(button('Submit'))).toEqual(['sends the chosen options']);
  });

  it('too few: refused before sending, in the shared check\'s words next to the group', async () => {
    const ask = bounded();
    const { calls } = show(ask);
    fireEvent.click(button('Submit'));
    await screen.findByText('choose at least 2');
    expect(sharedWording(ask, ['opt-3'])).toEqual(['choose at least 2']);
    expect(checkbox('Option 0').getAttribute('aria-invalid')).toBe('true');
    expect(calls).toEqual([]);
    // The message follows the choice and goes once it fits.
    fireEvent.click(checkbox('Option 1'));
    expect(screen.queryByText('choose at least 2')).toBeNull();
  });

  it('too many: said at once, and the message goes when one is unticked', () => {
    const ask = bounded();
    const { calls } = show(ask);
    fireEvent.click(checkbox('Option 0'));
    expect(screen.queryByText('choose at least 2')).toBeNull();
    fireEvent.click(checkbox('Option 1'));
    fireEvent.click(checkbox('Option 2'));
    expect(sharedWording(ask, ['opt-0', 'opt-1', 'opt-2', 'opt-3'])).toEqual(['choose at most 3']);
    expect(screen.getByText('choose at most 3')).toBeTruthy();
    fireEvent.click(button('Submit'));
    expect(calls).toEqual([]);
    fireEvent.click(checkbox('Option 0'));
    expect(screen.queryByText('choose at most 3')).toBeNull();
  });

  it('sends the chosen values in the options\' order, whatever order they were ticked in', async () => {
    const { calls, shown } = show(bounded());
    fireEvent.click(checkbox('Option 4'));
    fireEvent.click(checkbox('Option 1'));
    fireEvent.keyDown(checkbox('Option 1'), { key: 'Enter', ctrlKey: true });
    await sent();
    expect(calls).toEqual([{ elicitationId: 'el-1', decision: 'approved', values: { selected: ['opt-1', 'opt-3', 'opt-4'] }, shownHash: await shown }]);
  });

  it('Enter on a checkbox does not submit: several answers are possible', async () => {
    const { calls, shown } = show(selectionAsk({ message: 'Which?', options: regions, multiple: true }));
    fireEvent.click(checkbox('Europe'));
    fireEvent.keyDown(checkbox('Europe'), { key: 'Enter' });
    expect(calls).toEqual([]);
    // A submission after the key is the only one sent: one the Enter had started would have been sent first.
    fireEvent.click(button('Submit'));
    await sent();
    expect(calls).toEqual([{ elicitationId: 'el-1', decision: 'approved', values: { selected: ['eu'] }, shownHash: await shown }]);
  });

  it('no bounds: nothing chosen is an answer too', async () => {
    const { calls } = show(selectionAsk({ message: 'Any extras?', options: regions, multiple: true }));
    expect(screen.getByRole('group', { name: /^Choose any/ })).toBeTruthy();
    fireEvent.click(button('Submit'));
    await sent();
    expect(calls[0]?.values).toEqual({ selected: [] });
  });
});

describe('the filter box past 10 options', () => {
  it('is not there for 10 options', () => {
    show(selectionAsk({ message: 'Which?', options: many(10) }));
    expect(screen.queryByRole('searchbox', { name: 'Filter options' })).toBeNull();
    expect(screen.getAllByRole('radio')).toHaveLength(10);
  });

  it('for 11 it filters by label, value and description, and keeps a chosen option in view', async () => {
    const { calls, shown } = show(selectionAsk({ message: 'Which?', options: many(11), multiple: true, default: ['opt-2'] }));
    const filter = screen.getByRole('searchbox', { name: 'Filter options' });
    fireEvent.input(filter, { target: { value: 'option 1' } });
    expect(screen.getAllByRole('checkbox').map((c) => (c as HTMLInputElement).value)).toEqual(['opt-1', 'opt-2', 'opt-10']);
    expect(screen.getByText('Showing 3 of 11 options')).toBeTruthy();
    fireEvent.input(filter, { target: { value: 'BLUE' } });
    expect(screen.getAllByRole('checkbox').map((c) => (c as HTMLInputElement).value)).toEqual(['opt-2', 'opt-7']);
    fireEvent.click(checkbox('Option 7'));
    fireEvent.input(filter, { target: { value: 'nothing like it' } });
    expect(screen.getAllByRole('checkbox').map((c) => (c as HTMLInputElement).value)).toEqual(['opt-2', 'opt-7']);
    // Enter in the filter box is typing, not an answer.
    fireEvent.keyDown(filter, { key: 'Enter' });
    fireEvent.click(button('Submit'));
    await sent();
    expect(calls).toEqual([{ elicitationId: 'el-1', decision: 'approved', values: { selected: ['opt-2', 'opt-7'] }, shownHash: await shown }]);
  });
});

describe('an ask that is no longer waiting for this browser', () => {
  it('a queued answer shows read-only, in the ask\'s own words', () => {
    show(confirmAsk('Ship it?', 'Sí', 'No'), [], { outcome: { decision: 'approved', action: 'submit', values: { confirmed: false } }, delivery: 'queued' });
    expect(screen.queryByRole('button', { name: 'Sí' })).toBeNull();
    expect(screen.getByText('Answered: No')).toBeTruthy();
    expect(screen.getByText('Waiting for the hub to deliver this decision.')).toBeTruthy();
  });

  it('a decided choice shows what was chosen, by name', () => {
    show(selectionAsk({ message: 'Deploy where?', options: regions, multiple: true }), [], {
      status: 'approved', outcome: { decision: 'approved', action: 'submit', values: { selected: ['eu', 'ap'] } }, delivery: 'delivered',
    });
    expect(screen.getByText(/^This request is no longer pending: /).textContent).toBe('This request is no longer pending: chose: Europe, ap.');
    expect(screen.getAllByText('Chose: Europe, ap')).toHaveLength(2);
    expect(screen.getByText('Choose any of: Europe, United States, ap')).toBeTruthy();
  });
});

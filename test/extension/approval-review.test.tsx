import { fireEvent, render, screen, waitFor, within } from '@testing-library/preact';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ApprovalRequest } from '../../shared/approval-input.js';
import type { DecideReply } from '../../kit/messages.js';
import { ApprovalReview } from '../../kit/ui/review/approval-review.js';
import { approval, descriptions, fakeClient, rowFor } from './review-helpers.js';

const form = {
  type: 'object',
  properties: {
    recipient: { type: 'string', title: 'Recipient', format: 'email', default: 'ops@example.com' },
    amount: { type: 'number', title: 'Amount', minimum: 0, description: 'In euros' },
    urgent: { type: 'boolean', title: 'Urgent' },
    channel: { type: 'string', title: 'Channel', oneOf: [{ const: 'mail', title: 'E-mail' }, { const: 'sms', title: 'SMS' }], default: 'mail' },
  },
  required: ['recipient', 'amount'],
};

function setup(input: Record<string, unknown>, replies: DecideReply[] = [], template: string | null = null) {
  const request = approval({ message: 'Send the payout?', ...input });
  const row = rowFor(request, { renderedTemplate: template });
  const { client, calls } = fakeClient(...replies);
  const onDone = vi.fn();
  render(<ApprovalReview row={row} request={request} decide={client.decide} onDone={onDone} />);
  return { request, calls, onDone };
}

const button = (name: string) => screen.getByRole('button', { name });

describe('ApprovalReview: json mode', () => {
  it('a context that is not an object is its JSON alone', () => {
    setup({ context: ['a', 'b'] });
    const pre = screen.getByLabelText('Context');
    expect(pre.tagName).toBe('PRE');
    expect(pre.textContent).toBe(JSON.stringify(['a', 'b'], null, 2));
  });

  it('shows the message and the context as text rows and JSON text, never as HTML', () => {
    setup({ context: { tool: 'rm', path: '<img src=x onerror=alert(1)>' } });
    expect(screen.getByRole('heading', { name: 'Send the payout?' })).toBeTruthy();
    const rows = screen.getByRole('region', { name: 'Context' });
    expect(Array.from(rows.querySelectorAll('dd'), (dd) => dd.textContent)).toEqual(['rm', '<img src=x onerror=alert(1)>']);
    const pre = screen.getByLabelText('Context as JSON');
    expect(pre.tagName).toBe('PRE');
    expect(pre.textContent).toBe(JSON.stringify({ tool: 'rm', path: '<img src=x onerror=alert(1)>' }, null, 2));
    expect(document.querySelector('img')).toBeNull();
    expect(screen.queryByRole('textbox', { name: 'Recipient' })).toBeNull();
  });

  it('shows the rendered template instead of the JSON when there is one', () => {
    setup({ context: { id: 7 } }, [], '<p>Payout <b>#7</b></p>');
    expect(screen.queryByLabelText('Context')).toBeNull();
    expect(document.querySelector('.template b')?.textContent).toBe('#7');
  });

  it('approves without values, with default labels', async () => {
    const { calls, onDone } = setup({ context: { id: 7 } });
    fireEvent.click(button('Approve'));
    await screen.findByText('Decision sent.');
    expect(calls).toEqual([{ elicitationId: 'el-1', decision: 'approved' }]);
    expect(onDone).toHaveBeenCalledTimes(1);
  });

  it('an approval a team\'s quorum counted says so: the request is not approved yet', async () => {
    const { calls } = setup({ context: { id: 7 } }, [{ state: 'answered', ok: true, status: 'pending' }]);
    fireEvent.click(button('Approve'));
    await screen.findByText('Your approval is counted. The team needs more approvals before this request is approved.');
    expect(screen.queryByText('Decision sent.')).toBeNull();
    expect(calls).toEqual([{ elicitationId: 'el-1', decision: 'approved' }]);
  });

  it('declines with a comment, under renamed labels', async () => {
    const { calls } = setup({ context: { id: 7 }, labels: { ok: 'Pay', cancel: 'Hold' } });
    expect(screen.queryByRole('button', { name: 'Approve' })).toBeNull();
    fireEvent.input(screen.getByRole('textbox', { name: 'Comment (optional)' }), { target: { value: 'not today' } });
    fireEvent.click(button('Hold'));
    await screen.findByText('Decision sent.');
    expect(calls).toEqual([{ elicitationId: 'el-1', decision: 'rejected', comment: 'not today' }]);
    expect(button('Pay')).toBeTruthy();
  });
});

describe('ApprovalReview: form mode', () => {
  it('renders one labelled editor per property, required marked, defaults prefilled, no context', () => {
    setup({ requestedSchema: form });
    expect(screen.queryByLabelText('Context')).toBeNull();
    const recipient = screen.getByRole('textbox', { name: 'Recipient' }) as HTMLInputElement;
    expect(recipient.value).toBe('ops@example.com');
    expect(recipient.getAttribute('aria-required')).toBe('true');
    const label = document.querySelector(`label[for="${recipient.id}"]`);
    expect(label?.textContent).toBe('Recipient*');
    expect((screen.getByRole('spinbutton', { name: 'Amount' }) as HTMLInputElement).value).toBe('');
    expect(descriptions(screen.getByRole('spinbutton', { name: 'Amount' }))).toEqual(['In euros', 'A number, at least 0']);
    expect((screen.getByRole('checkbox', { name: 'Urgent' }) as HTMLInputElement).checked).toBe(false);
    expect((screen.getByRole('combobox', { name: 'Channel' }) as HTMLSelectElement).value).toBe('mail');
    expect(screen.getByRole('checkbox', { name: 'Urgent' }).getAttribute('aria-required')).toBeNull();
  });

  it('validates before sending: errors next to fields, the hub not called', async () => {
    const { calls } = setup({ requestedSchema: form });
    fireEvent.input(screen.getByRole('textbox', { name: 'Recipient' }), { target: { value: 'not an email' } });
    fireEvent.click(button('Approve'));
    const recipient = screen.getByRole('textbox', { name: 'Recipient' });
    await waitFor(() => expect(recipient.getAttribute('aria-invalid')).toBe('true'));
    expect(descriptions(recipient)[0]).toMatch(/format "email"/);
    const amount = screen.getByRole('spinbutton', { name: 'Amount' });
    expect(amount.getAttribute('aria-invalid')).toBe('true');
    expect(descriptions(amount)).toEqual(['In euros', 'Required.', 'A number, at least 0']);
    expect(calls).toEqual([]);
  });

  it('sends the checked values', async () => {
    const { calls } = setup({ requestedSchema: form });
    fireEvent.input(screen.getByRole('spinbutton', { name: 'Amount' }), { target: { value: '12.5' } });
    fireEvent.click(screen.getByRole('checkbox', { name: 'Urgent' }));
    fireEvent.change(screen.getByRole('combobox', { name: 'Channel' }), { target: { value: 'sms' } });
    fireEvent.click(button('Approve'));
    await screen.findByText('Decision sent.');
    expect(calls).toEqual([{
      elicitationId: 'el-1', decision: 'approved',
      values: { recipient: 'ops@example.com', amount: 12.5, urgent: true, channel: 'sms' },
    }]);
  });

  it('shows the hub\'s invalid issues next to the fields and keeps the values', async () => {
    setup({ requestedSchema: form }, [{
      state: 'answered', ok: false, reason: 'invalid',
      issues: [{ path: 'values.amount', rule: 'maximum', message: 'values.amount: must be at most 10, got 12' }],
    }]);
    fireEvent.input(screen.getByRole('spinbutton', { name: 'Amount' }), { target: { value: '12' } });
    fireEvent.click(button('Approve'));
    await screen.findByRole('alert');
    const amount = screen.getByRole('spinbutton', { name: 'Amount' }) as HTMLInputElement;
    expect(amount.getAttribute('aria-invalid')).toBe('true');
    expect(screen.getByText('must be at most 10, got 12')).toBeTruthy();
    expect(amount.value).toBe('12');
  });
});

describe('ApprovalReview: both mode', () => {
  it('shows the context and the form together', async () => {
    const { calls } = setup({ context: { payee: 'ACME' }, requestedSchema: form });
    expect(screen.getByLabelText('Context').textContent).toContain('"payee": "ACME"');
    fireEvent.input(screen.getByRole('spinbutton', { name: 'Amount' }), { target: { value: '3' } });
    fireEvent.click(button('Approve'));
    await screen.findByText('Decision sent.');
    expect(calls[0]?.values).toEqual({ recipient: 'ops@example.com', amount: 3, urgent: false, channel: 'mail' });
  });
});

describe('ApprovalReview: replies and keyboard', () => {
  it.each([
    ['already_decided', 'This request was already decided; your decision was not used.'],
    ['expired', 'This request expired before your decision reached the agent.'],
    ['withdrawn', 'The agent withdrew this request.'],
    ['not_found', 'The hub no longer knows this request.'],
  ] as const)('explains a %s refusal', async (reason, text) => {
    const { onDone } = setup({ context: { id: 1 } }, [{ state: 'answered', ok: false, reason }]);
    fireEvent.click(button('Approve'));
    expect((await screen.findByRole('alert')).textContent).toBe(text);
    expect(onDone).not.toHaveBeenCalled();
  });

  it('reports a queued decision and stays, so the person sees it waiting for the hub', async () => {
    const { onDone } = setup({ context: { id: 1 } }, [{ state: 'queued' }]);
    fireEvent.click(button('Approve'));
    await screen.findByText('The hub is unreachable. Your decision is saved and will be delivered when it reconnects.');
    expect(onDone).not.toHaveBeenCalled();
    expect((button('Approve') as HTMLButtonElement).disabled).toBe(true);
  });

  it('tells the person another popup or tab of this browser decided first, and offers nothing more to send', async () => {
    const { onDone, calls } = setup({ context: { id: 1 } }, [{
      state: 'already_decided_here', decision: { decision: 'approved', action: 'submit' }, delivery: 'queued',
    }]);
    fireEvent.click(button('Decline'));
    expect((await screen.findByRole('alert')).textContent).toBe(
      'Already decided in this browser (in another popup or tab): approved, and it is waiting for the hub. This decision was not sent.',
    );
    expect(calls).toHaveLength(1);
    expect(onDone).not.toHaveBeenCalled();
    expect((button('Approve') as HTMLButtonElement).disabled).toBe(true);
    expect((button('Decline') as HTMLButtonElement).disabled).toBe(true);
  });

  it('shows a decision too large to send next to the field it names, and lets the person shorten it', async () => {
    const notesForm = { type: 'object', properties: { notes: { type: 'string', title: 'Notes' } } };
    const issue = { path: 'values.notes', rule: 'too_large', message: "values.notes: is 1048578 bytes as JSON; a decision must fit in 1048576 bytes (the hub's message limit) and this one is 1048620 bytes" };
    const { calls } = setup({ requestedSchema: notesForm }, [{ state: 'too_large', issues: [issue] }]);
    const notes = screen.getByRole('textbox', { name: 'Notes' });
    fireEvent.input(notes, { target: { value: 'long' } });
    fireEvent.click(button('Approve'));
    expect((await screen.findByRole('alert')).textContent).toBe('This decision is too large to send to the hub; shorten the field named below.');
    expect(notes.getAttribute('aria-invalid')).toBe('true');
    expect(screen.getByText("is 1048578 bytes as JSON; a decision must fit in 1048576 bytes (the hub's message limit) and this one is 1048620 bytes")).toBeTruthy();
    fireEvent.input(notes, { target: { value: 'short' } });
    fireEvent.click(button('Approve'));
    await screen.findByText('Decision sent.');
    expect(calls.map((c) => c.values)).toEqual([{ notes: 'long' }, { notes: 'short' }]);
  });

  it('shows an error reply', async () => {
    setup({ context: { id: 1 } }, [{ state: 'error', message: 'No background' }]);
    fireEvent.click(button('Approve'));
    expect((await screen.findByRole('alert')).textContent).toBe('No background');
  });

  it('approves on Ctrl+Enter', async () => {
    const { calls } = setup({ requestedSchema: form });
    const amount = screen.getByRole('spinbutton', { name: 'Amount' });
    fireEvent.input(amount, { target: { value: '1' } });
    fireEvent.keyDown(amount, { key: 'Enter', ctrlKey: true });
    await screen.findByText('Decision sent.');
    expect(calls[0]?.decision).toBe('approved');
  });

  it('asks on Escape: "Keep reviewing" closes, "Yes, cancel" declines', async () => {
    const { calls } = setup({ context: { id: 1 } });
    fireEvent.keyDown(document.body, { key: 'Escape' });
    fireEvent.click(within(screen.getByRole('alertdialog', { name: 'Cancel this request?' })).getByRole('button', { name: 'Keep reviewing' }));
    expect(screen.queryByRole('alertdialog')).toBeNull();
    expect(calls).toEqual([]);
    fireEvent.keyDown(button('Approve'), { key: 'Escape' });
    fireEvent.click(within(screen.getByRole('alertdialog')).getByRole('button', { name: 'Yes, cancel' }));
    await screen.findByText('Decision sent.');
    expect(calls).toEqual([{ elicitationId: 'el-1', decision: 'rejected' }]);
  });
});

describe('ApprovalReview: reopening a decision the hub refused', () => {
  it('starts from a decision refused as too large to send, with the issue next to the field', () => {
    const notesForm = { type: 'object', properties: { notes: { type: 'string', title: 'Notes' } } };
    const request = approval({ message: 'Send the payout?', requestedSchema: notesForm });
    const row = rowFor(request, {
      delivery: 'refused',
      outcome: { decision: 'approved', action: 'submit', values: { notes: 'very long' } },
      refusal: { reason: 'too_large', issues: [{ path: 'values.notes', rule: 'too_large', message: 'values.notes: is 2000000 bytes as JSON; too much' }] },
    });
    const { client } = fakeClient();
    render(<ApprovalReview row={row} request={request} decide={client.decide} />);
    expect((screen.getByLabelText('Notes') as HTMLInputElement).value).toBe('very long');
    expect(screen.getByText('is 2000000 bytes as JSON; too much')).toBeTruthy();
  });

  it('starts from the refused values with the issue shown next to the field', () => {
    const request = approval({ message: 'Send the payout?', requestedSchema: form });
    const row = rowFor(request, {
      delivery: 'refused',
      outcome: { decision: 'approved', action: 'submit', values: { recipient: 'not-mail', amount: 12 } },
      refusal: { reason: 'invalid', issues: [{ path: 'values.recipient', rule: 'format', message: 'values.recipient: must be an e-mail address' }] },
    });
    const { client } = fakeClient();
    render(<ApprovalReview row={row} request={request} decide={client.decide} />);
    expect((screen.getByLabelText('Recipient') as HTMLInputElement).value).toBe('not-mail');
    expect((screen.getByLabelText('Amount') as HTMLInputElement).value).toBe('12');
    expect(screen.getByText('must be an e-mail address')).toBeTruthy();
  });
});

describe('ApprovalReview: checked as the person types, with the shared validator', () => {
  it('says what is wrong next to the field at once, and clears it when fixed', () => {
    const { calls } = setup({ requestedSchema: form });
    const recipient = screen.getByRole('textbox', { name: 'Recipient' });
    fireEvent.input(recipient, { target: { value: 'not an email' } });
    expect(recipient.getAttribute('aria-invalid')).toBe('true');
    expect(descriptions(recipient)[0]).toMatch(/must be an email address .* \(format "email"\)/);
    fireEvent.input(recipient, { target: { value: 'payouts@example.com' } });
    expect(recipient.getAttribute('aria-invalid')).toBeNull();
    fireEvent.input(recipient, { target: { value: '' } });
    expect(descriptions(recipient)[0]).toBe('Required.');
    expect(calls).toEqual([]);
  });

  it('shows a string\'s length limits as a hint and checks them in characters, as the validator counts', () => {
    setup({ requestedSchema: { type: 'object', properties: { code: { type: 'string', title: 'Code', minLength: 2, maxLength: 3 } } } });
    const code = screen.getByRole('textbox', { name: 'Code' });
    expect(descriptions(code)).toEqual(['2–3 characters']);
    fireEvent.input(code, { target: { value: '😀😀😀' } });
    expect(code.getAttribute('aria-invalid')).toBeNull();
    fireEvent.input(code, { target: { value: '😀😀😀😀' } });
    expect(descriptions(code)).toEqual(['must be at most 3 characters long, got 4', '2–3 characters']);
  });
});

describe('ApprovalReview: a date-time field', () => {
  const originalZone = process.env.TZ;
  beforeAll(() => {
    process.env.TZ = 'Europe/Paris';
  });
  afterAll(() => {
    process.env.TZ = originalZone;
  });
  const schedule = { type: 'object', properties: { at: { type: 'string', title: 'Start at', format: 'date-time', default: '2026-11-30T16:05:00Z' } } };

  it('an untouched default reaches the agent exactly as the agent wrote it, shown in local time', async () => {
    const { calls } = setup({ requestedSchema: schedule });
    expect((screen.getByLabelText('Start at') as HTMLInputElement).value).toBe('2026-11-30T17:05');
    fireEvent.click(button('Approve'));
    await screen.findByText('Decision sent.');
    expect(calls[0]?.values).toEqual({ at: '2026-11-30T16:05:00Z' });
  });

  it('a local time set by the person is sent as RFC 3339 with their offset', async () => {
    const { calls } = setup({ requestedSchema: schedule });
    fireEvent.input(screen.getByLabelText('Start at'), { target: { value: '2026-12-01T09:30' } });
    fireEvent.click(button('Approve'));
    await screen.findByText('Decision sent.');
    expect(calls[0]?.values).toEqual({ at: '2026-12-01T09:30:00+01:00' });
  });
});

const HOSTILE = ['constructor', 'toString', 'hasOwnProperty'] as const;

function hostileForm(name: string) {
  return { type: 'object', properties: { [name]: { type: 'string', title: 'Odd', minLength: 2 }, flag: { type: 'boolean', title: 'Flag' } }, required: [name] };
}

describe('ApprovalReview: names an agent may choose', () => {
  it.each(HOSTILE)('a form property named %s: the review renders, checks and decides', async (name) => {
    const { calls } = setup({ requestedSchema: hostileForm(name) });
    const odd = screen.getByRole('textbox', { name: 'Odd' });
    expect(odd.getAttribute('aria-invalid')).toBeNull();
    fireEvent.input(odd, { target: { value: 'x' } });
    expect(descriptions(odd)[0]).toBe('must be at least 2 characters long, got 1');
    fireEvent.input(odd, { target: { value: 'ok' } });
    fireEvent.click(button('Approve'));
    await screen.findByText('Decision sent.');
    expect(calls[0]).toMatchObject({ decision: 'approved', values: { [name]: 'ok', flag: false } });
  });

  it.each(HOSTILE)('a submit-time issue for %s shows next to its field', async (name) => {
    const { calls } = setup({ requestedSchema: hostileForm(name) });
    fireEvent.click(button('Approve'));
    await waitFor(() => expect(screen.getByRole('textbox', { name: 'Odd' }).getAttribute('aria-invalid')).toBe('true'));
    expect(screen.getByText('Required.')).toBeTruthy();
    expect(calls).toEqual([]);
  });

  it('a property named "__proto__" that reaches the review is an ordinary field, and its value is sent', async () => {
    const base = approval({ message: 'Send the payout?', requestedSchema: hostileForm('zzproto') });
    const request = JSON.parse(JSON.stringify(base).replaceAll('zzproto', '__proto__')) as ApprovalRequest;
    const { client, calls } = fakeClient();
    render(<ApprovalReview row={rowFor(request)} request={request} decide={client.decide} />);
    const odd = screen.getByRole('textbox', { name: 'Odd' });
    fireEvent.input(odd, { target: { value: 'x' } });
    expect(descriptions(odd)[0]).toBe('must be at least 2 characters long, got 1');
    fireEvent.input(odd, { target: { value: 'ok' } });
    fireEvent.click(button('Approve'));
    await screen.findByText('Decision sent.');
    const values = calls[0]?.values ?? {};
    expect(Object.hasOwn(values, '__proto__') && values.__proto__).toBe('ok');
    expect(Object.getPrototypeOf(values)).toBe(Object.prototype);
  });
});

describe('ApprovalReview: the footer says what each button does, whatever its label', () => {
  it.each<[string, Record<string, unknown>, string, string]>([
    ['json mode', { context: { id: 7 } }, 'approves', 'rejects'],
    ['form mode', { requestedSchema: form }, 'approves: sends the form', 'rejects: sends nothing'],
  ])('%s: an ok labelled "No, keep it" is announced and shown as approving', async (_name, input, ok, cancel) => {
    const { calls } = setup({ ...input, labels: { ok: 'No, keep it', cancel: 'Yes, delete it' } });
    expect(descriptions(button('No, keep it'))).toEqual([ok]);
    expect(descriptions(button('Yes, delete it'))).toEqual([cancel]);
    expect(button('No, keep it').nextElementSibling?.textContent).toBe(ok);
    fireEvent.input(screen.queryByRole('spinbutton', { name: 'Amount' }) ?? document.createElement('input'), { target: { value: '1' } });
    fireEvent.click(button('No, keep it'));
    await screen.findByText('Decision sent.');
    expect(calls[0]?.decision).toBe('approved');
  });
});

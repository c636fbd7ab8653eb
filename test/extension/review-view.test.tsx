import { dateTime } from '../../kit/ui/format-time.js';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/preact';
import { describe, expect, it } from 'vitest';
import { shownHash } from '../../shared/shown-hash.js';
import type { RequestRow } from '../../kit/rows/rows.js';
import type { DecideReply, Decision } from '../../kit/messages.js';
import { REFUSAL_TEXT } from '../../kit/ui/labels.js';
import { RequestDetail } from '../../kit/ui/review/request-detail.js';
import { ReviewView } from '../../kit/ui/review/review-view.js';
import { SafeHtml } from '../../kit/ui/review/safe-html.js';
import { approval, bashPermission, fakeClient, proposal, rowFor } from './review-helpers.js';

function view(row: RequestRow) {
  const { client } = fakeClient();
  return render(<ReviewView row={row} decide={client.decide} />);
}

describe('SafeHtml', () => {
  function html(source: string): HTMLElement {
    const { container } = render(<SafeHtml html={source} />);
    const root = container.querySelector('div.template');
    if (!(root instanceof HTMLElement)) throw new Error('no template root');
    return root;
  }

  it('drops <script> with its content', () => {
    const root = html('<p>before<script>window.pwned = 1</script>after</p>');
    expect(root.innerHTML).toBe('<p>beforeafter</p>');
  });

  it('drops an <img onerror> and other embedded resources', () => {
    const root = html('<img src="x" onerror="alert(1)">ok<object data="x.swf">fallback</object><form><input value="v"></form><svg><text>t</text></svg><style>p{}</style>');
    expect(root.innerHTML).toBe('ok');
  });

  it('turns links into their text', () => {
    const root = html('<p>See <a href="javascript:alert(1)">the record</a>.</p>');
    expect(root.innerHTML).toBe('<p>See the record.</p>');
    expect(root.querySelector('a')).toBeNull();
  });

  it('strips every attribute, event handlers included', () => {
    const root = html('<b onclick="alert(1)" style="color:red" class="x" id="y">bold</b><p onmouseover="alert(2)">p</p>');
    expect(root.innerHTML).toBe('<b>bold</b><p>p</p>');
  });

  it('keeps formatting and unwraps containers', () => {
    const root = html('<div><span><b>B</b> <em>E</em></span><ul><li>one</li></ul><!-- note --></div>');
    expect(root.innerHTML).toBe('<b>B</b> <em>E</em><ul><li>one</li></ul>');
  });

  it('keeps text that looks like markup as text', () => {
    const root = html('&lt;script&gt;x&lt;/script&gt;');
    expect(root.textContent).toBe('<script>x</script>');
    expect(root.querySelector('script')).toBeNull();
  });

  it('bounds nesting depth', () => {
    const root = html(`${'<b>'.repeat(100)}deep${'</b>'.repeat(100)}`);
    expect(root.querySelectorAll('b').length).toBeLessThanOrEqual(33);
    expect(root.textContent).toBe('');
  });

  it('bounds the number of nodes', () => {
    const root = html('<i>x</i>'.repeat(6000));
    expect(root.querySelectorAll('i').length).toBeLessThan(5000);
  });
});

describe('ReviewView', () => {
  it('opens a pending proposal in the grid', () => {
    view(rowFor(proposal()));
    expect(screen.getByRole('table', { name: 'Proposed changes' })).toBeTruthy();
  });

  it('opens a pending approval in the approval review', () => {
    view(rowFor(approval({ message: 'Deploy?', context: { env: 'prod' } })));
    expect(screen.getByLabelText('Context').textContent).toContain('"env": "prod"');
    expect(screen.getByRole('button', { name: 'Approve' })).toBeTruthy();
  });

  it('shows a decided request read-only, with a note', () => {
    const row = rowFor(proposal(), {
      status: 'approved',
      decidedAt: Date.UTC(2025, 0, 2, 3, 10),
      outcome: { decision: 'approved', included: ['name'], values: { name: 'NorthMark' }, comment: 'ok' },
      delivery: 'delivered',
    });
    view(row);
    expect(screen.getByText('This request is no longer pending: approved.')).toBeTruthy();
    expect(screen.queryByRole('table', { name: 'Proposed changes' })).toBeNull();
    expect(screen.queryByRole('button')).toBeNull();
  });

  it('keeps saying this browser decided first after the review turns into the read-only detail', async () => {
    const request = approval({ message: 'Deploy?', context: { env: 'prod' } });
    const pending = rowFor(request);
    const { client } = fakeClient({ state: 'already_decided_here', decision: { decision: 'approved', action: 'submit' }, delivery: 'queued' });
    const { rerender } = render(<ReviewView row={pending} decide={client.decide} />);
    fireEvent.click(screen.getByRole('button', { name: 'Decline' }));
    const text = 'Already decided in this browser (in another popup or tab): approved, and it is waiting for the hub. This decision was not sent.';
    await waitFor(() => expect(screen.getByRole('alert').textContent).toBe(text));
    // The other surface's decision reaches the row: the review gives way to the detail, the notice stays.
    rerender(<ReviewView row={{ ...pending, outcome: { decision: 'approved', action: 'submit' }, delivery: 'queued' }} decide={client.decide} />);
    expect(screen.getByText('Waiting for the hub to deliver this decision.')).toBeTruthy();
    expect(screen.getByRole('alert').textContent).toBe(text);
    expect(screen.queryByRole('button', { name: 'Decline' })).toBeNull();
  });

  it.each(['already_decided', 'expired', 'withdrawn', 'not_found'] as const)('a decision the hub refused as final (%s): the buttons go at once and the review says why', async (reason) => {
    const pending = rowFor(approval({ message: 'Deploy?', context: { env: 'prod' } }));
    const { client } = fakeClient({ state: 'answered', ok: false, reason });
    render(<ReviewView row={pending} decide={client.decide} />);
    fireEvent.click(screen.getByRole('button', { name: 'Approve' }));
    await waitFor(() => expect(screen.getByRole('alert').textContent).toBe(REFUSAL_TEXT[reason]));
    expect(screen.queryByRole('button', { name: 'Approve' })).toBeNull();
    expect(screen.queryByRole('button', { name: 'Decline' })).toBeNull();
  });

  it('a refusal a second try can mend (an invalid value) keeps the buttons', async () => {
    const pending = rowFor(approval({ message: 'Deploy?', context: { env: 'prod' } }));
    const { client } = fakeClient({ state: 'answered', ok: false, reason: 'invalid', issues: [] });
    render(<ReviewView row={pending} decide={client.decide} />);
    fireEvent.click(screen.getByRole('button', { name: 'Approve' }));
    await waitFor(() => expect(screen.getByRole('alert').textContent).toBe(REFUSAL_TEXT.invalid));
    expect((screen.getByRole('button', { name: 'Approve' }) as HTMLButtonElement).disabled).toBe(false);
  });

  it('opening another request of the same kind starts from that request, never from the first one\'s rows', async () => {
    const first = proposal({
      message: 'First',
      columns: { sources: [{ key: 'crm', label: 'CRM' }], current: { label: 'Billing' } },
      requestedSchema: { type: 'object', properties: { a: { type: 'string', title: 'Alpha' }, b: { type: 'string', title: 'Beta' } } },
      fields: { a: { sources: { crm: 'a1' }, current: 'a0' }, b: { sources: { crm: 'b1' }, current: 'b0' } },
    });
    const second = proposal({
      message: 'Second',
      columns: { sources: [{ key: 'crm', label: 'CRM' }], current: { label: 'Billing' } },
      requestedSchema: { type: 'object', properties: { c: { type: 'string', title: 'Gamma' } } },
      fields: { c: { sources: { crm: 'c1' }, current: 'c0' } },
    });
    const { client, calls } = fakeClient();
    const { rerender } = render(<ReviewView row={rowFor(first, { elicitationId: 'el-a' })} decide={client.decide} />);
    const counter = () => document.querySelector('.counter')?.textContent;
    expect(counter()).toBe('0 of 2 included');
    rerender(<ReviewView row={rowFor(second, { elicitationId: 'el-b' })} decide={client.decide} />);
    expect(counter()).toBe('0 of 1 included');
    expect(screen.getByRole('table', { name: 'Proposed changes' }).querySelectorAll('tbody tr')).toHaveLength(1);
    fireEvent.click(screen.getByRole('button', { name: /Submit/ }));
    await waitFor(() => expect(calls).toHaveLength(1));
    expect(calls[0]).toMatchObject({ elicitationId: 'el-b', included: [] });
  });

  it('a json context reads as one label and value per key, with the exact JSON one tap away', () => {
    view(rowFor(approval({ message: 'Deploy?', context: { env: 'prod', build: 812, canary: false } })));
    const region = screen.getByRole('region', { name: 'Context' });
    const rows = Array.from(region.querySelectorAll('dt'), (dt) => [dt.textContent, dt.nextElementSibling?.textContent]);
    expect(rows).toEqual([['env', 'prod'], ['build', '812'], ['canary', 'false']]);
    // A string reads as itself, anything else as its JSON in code type, so "812" and 812 never look alike.
    expect(region.querySelectorAll('dd code')).toHaveLength(2);
    const raw = within(region).getByText('Raw JSON').closest('details');
    expect(raw?.open).toBe(false);
    expect(raw?.querySelector('pre')?.textContent).toBe(JSON.stringify({ env: 'prod', build: 812, canary: false }, null, 2));
  });

  describe('sends the hash of what it shows, which the hub checks against the request it holds', () => {
    const held = approval({ message: 'Deploy?', context: { env: 'prod' } });
    /** A hub holding `held` (template: `heldTemplate`): it refuses a decision whose shown hash is not its request's, as the engine does. */
    function hub(heldTemplate: string | null = '<p>Deploy <b>prod</b></p>') {
      const sent: Decision[] = [];
      const decide = async (decision: Decision): Promise<DecideReply> => {
        sent.push(decision);
        if (decision.shownHash !== await shownHash({ request: held, renderedTemplate: heldTemplate })) return { state: 'answered', ok: false, reason: 'shown_mismatch', status: 'pending' };
        return { state: 'answered', ok: true, status: decision.decision };
      };
      return { sent, decide };
    }

    it.each([
      ['its request differs (a changed context)', rowFor(approval({ message: 'Deploy?', context: { env: 'staging' } }), { renderedTemplate: '<p>Deploy <b>prod</b></p>' })],
      ['its rendered template differs', rowFor(held, { renderedTemplate: '<p>Deploy <b>staging</b></p>' })],
      ['it shows no template where the hub rendered one', rowFor(held)],
    ])('a view whose row is not the hub\'s request is refused, and the person is told to look again: %s', async (_, stale) => {
      const { sent, decide } = hub();
      render(<ReviewView row={stale} decide={decide} />);
      fireEvent.click(screen.getByRole('button', { name: 'Approve' }));
      await waitFor(() => expect(screen.getByRole('alert').textContent).toBe(REFUSAL_TEXT.shown_mismatch));
      expect(sent).toEqual([{ elicitationId: 'el-1', decision: 'approved', shownHash: await shownHash(stale) }]);
      expect(sent[0]?.shownHash).not.toBe(await shownHash({ request: held, renderedTemplate: '<p>Deploy <b>prod</b></p>' }));
      // Nothing was decided: the review stays, to be looked at again.
      expect(screen.getByRole('button', { name: 'Approve' })).toBeTruthy();
      expect(screen.queryByText('Decision sent.')).toBeNull();
    });

    it.each([
      ['an approval', rowFor(held)],
      ['a permission prompt', rowFor(bashPermission())],
    ])('%s: the review that comes back after "waiting for the hub" (a new one) still says the hub refused what was shown', (_, pending) => {
      // The extension's sequence: the decision is queued (the review gives way to the detail), then the hub's refusal
      // reaches the row and the review is mounted anew, from the row.
      const { client } = fakeClient();
      const { rerender } = render(<ReviewView row={pending} decide={client.decide} />);
      expect(screen.queryByRole('alert')).toBeNull();
      const outcome = { decision: 'approved' as const, action: 'submit' as const };
      rerender(<ReviewView row={{ ...pending, outcome, delivery: 'queued' }} decide={client.decide} />);
      expect(screen.getByText('Waiting for the hub to deliver this decision.')).toBeTruthy();
      rerender(<ReviewView row={{ ...pending, outcome, delivery: 'refused', refusal: { reason: 'shown_mismatch' } }} decide={client.decide} />);
      expect(screen.getByRole('alert').textContent).toBe(REFUSAL_TEXT.shown_mismatch);
      // Still pending: the review is there to be looked at again, and decided.
      expect(screen.getAllByRole('button').length).toBeGreaterThan(0);
      expect(screen.queryByText('Waiting for the hub to deliver this decision.')).toBeNull();
    });

    it('the same review on the row the hub holds is taken', async () => {
      const { sent, decide } = hub();
      const row = rowFor(held, { renderedTemplate: '<p>Deploy <b>prod</b></p>' });
      render(<ReviewView row={row} decide={decide} />);
      fireEvent.click(screen.getByRole('button', { name: 'Approve' }));
      await screen.findByText('Decision sent.');
      expect(sent).toEqual([{ elicitationId: 'el-1', decision: 'approved', shownHash: await shownHash(row) }]);
      expect(screen.queryByRole('alert')).toBeNull();
    });
  });

  it('shows a queued decision read-only even while the hub still says pending', () => {
    const row = rowFor(proposal(), { outcome: { decision: 'rejected' }, delivery: 'queued' });
    view(row);
    expect(screen.getByText('Waiting for the hub to deliver this decision.')).toBeTruthy();
    expect(screen.queryByRole('table', { name: 'Proposed changes' })).toBeNull();
  });
});

describe('RequestDetail', () => {
  it('describes a submitted proposal: what was asked and what was decided', () => {
    const row = rowFor(proposal(), {
      status: 'consumed',
      decidedAt: Date.UTC(2025, 0, 2, 3, 10),
      outcome: {
        decision: 'approved', action: 'submit', included: ['name', 'institutionTypes'],
        values: { name: 'NorthMark', institutionTypes: ['REIT', 'Hedge Fund'] }, comment: 'checked on the website',
      },
    });
    render(<RequestDetail row={row} />);
    expect(screen.getByRole('heading', { name: 'Sync NorthMark Strategies from Apollo into Salesforce' })).toBeTruthy();
    const facts = within(screen.getByLabelText('Request', { selector: 'dl' })).getAllByRole('definition').map((d) => d.textContent);
    expect(facts).toContain('Proposal');
    expect(facts).toContain('Claude Code');
    expect(facts).toContain('Decided, and the agent has read the decision');
    expect(facts).toContain(dateTime(row.createdAt));
    expect(facts).toContain(dateTime(Date.UTC(2025, 0, 2, 3, 10)));
    const asked = screen.getByRole('table', { name: 'Proposed values' });
    expect(within(asked).getByRole('row', { name: 'Number of Employees 230' })).toBeTruthy();
    expect(within(asked).getByRole('row', { name: 'Institution Types Asset Manager, Private Equity' })).toBeTruthy();
    expect(screen.getByText('Submitted')).toBeTruthy();
    const sent = screen.getByLabelText('Values sent');
    expect(sent.textContent).toBe('NameNorthMarkInstitution TypesREIT, Hedge Fund');
    expect(screen.getByText('Comment: checked on the website')).toBeTruthy();
  });

  it('describes an approval with its context and template', () => {
    const request = approval({ message: 'Deploy?', context: { env: 'prod' } });
    const { unmount } = render(<RequestDetail row={rowFor(request, { status: 'rejected', outcome: { decision: 'rejected' } })} />);
    expect(screen.getByLabelText('Context').textContent).toContain('"env": "prod"');
    expect(screen.getByText('Declined')).toBeTruthy();
    unmount();
    render(<RequestDetail row={rowFor(request, { status: 'expired', renderedTemplate: '<p>Deploy <b>prod</b><img src=x onerror=alert(1)></p>' })} />);
    expect(document.querySelector('.template')?.innerHTML).toBe('<p>Deploy <b>prod</b></p>');
    expect(screen.getByText('Expired without a decision')).toBeTruthy();
    expect(screen.getByText('No decision was made here.')).toBeTruthy();
  });

  it('explains a refusal in words, with its issues', () => {
    const row = rowFor(proposal(), {
      status: 'canceled',
      outcome: { decision: 'approved', values: { name: 'X' }, included: ['name'] },
      delivery: 'refused',
      refusal: { reason: 'withdrawn' },
    });
    render(<RequestDetail row={row} />);
    expect(screen.getByText('The hub did not take this decision: The agent withdrew this request.')).toBeTruthy();
    expect(screen.getByText('Withdrawn by the agent')).toBeTruthy();
  });

  it('explains a decision refused here as too large to send, with its issue', () => {
    const row = rowFor(proposal(), {
      delivery: 'refused',
      outcome: { decision: 'approved', values: { name: 'X' }, included: ['name'] },
      refusal: { reason: 'too_large', issues: [{ path: 'values.name', rule: 'too_large', message: 'values.name: is 2000000 bytes as JSON' }] },
    });
    render(<RequestDetail row={row} />);
    expect(screen.getByText('The hub did not take this decision: This decision is too large to send to the hub; shorten the field named below.')).toBeTruthy();
    expect(screen.getByText('values.name: is 2000000 bytes as JSON')).toBeTruthy();
  });

  it('lists the issues of an invalid refusal', () => {
    const row = rowFor(proposal(), {
      delivery: 'refused',
      refusal: { reason: 'invalid', issues: [{ path: 'values.website', rule: 'format', message: 'values.website: must be a URI' }] },
    });
    render(<RequestDetail row={row} />);
    expect(screen.getByText('values.website: must be a URI')).toBeTruthy();
  });
});

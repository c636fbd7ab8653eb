// Keyboard flow for a queue: j/k/Enter in the inbox, x and batch decisions for approve-as-is requests, n for the next
// pending request after a decision, ? for the help.
import { fireEvent, render, screen, waitFor, within } from '@testing-library/preact';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { shownHash } from '../../shared/shown-hash.js';
import type { ElicitlyDb } from '../../extension/db/database.js';
import { rowFromView, type RequestRow } from '../../kit/rows/rows.js';
import { App } from '../../extension/ui/app.js';
import { Inbox } from '../../extension/ui/inbox.js';
import { freshDb, proposalView, jsonApprovalRow } from './fakes.js';
import { fakeClient } from './review-helpers.js';

let db: ElicitlyDb;

beforeEach(() => {
  db = freshDb();
  window.location.hash = '#/inbox';
});
afterEach(async () => {
  db.close();
});

const jsonApproval = jsonApprovalRow;

function formApproval(id: string, createdAt: number): RequestRow {
  const row = jsonApproval(id, createdAt, { message: `Fill ${id}` });
  return {
    ...row,
    request: { ...row.request, kind: 'approval', mode: 'form', context: null, requestedSchema: { type: 'object', properties: { n: { type: 'string' } } } } as RequestRow['request'],
  };
}

const key = (k: string, target: Element = document.activeElement ?? document.body) => fireEvent.keyDown(target, { key: k });

async function inboxButtons(): Promise<HTMLElement[]> {
  const list = await screen.findByRole('list', { name: 'Pending requests' });
  return within(list).getAllByRole('button');
}

describe('the inbox by keyboard', () => {
  it('j and k move through the requests, Enter opens the focused one; letters typed in a field are left alone', async () => {
    const now = Date.now();
    await db.requests.bulkPut([jsonApproval('a', now - 3000), jsonApproval('b', now - 2000), jsonApproval('c', now - 1000)]);
    const opened: string[] = [];
    render(
      <>
        <input aria-label="Somewhere to type" />
        <Inbox db={db} onOpen={(id) => opened.push(id)} />
      </>,
    );
    const [c, b, a] = await inboxButtons();
    key('j', document.body);
    expect(document.activeElement).toBe(c);
    key('j');
    key('j');
    key('j');
    expect(document.activeElement).toBe(a);
    key('k');
    expect(document.activeElement).toBe(b);
    key('Enter');
    expect(opened).toEqual(['b']);

    const field = screen.getByRole('textbox', { name: 'Somewhere to type' });
    field.focus();
    key('j', field);
    key('Enter', field);
    expect(document.activeElement).toBe(field);
    expect(opened).toEqual(['b']);
  });

  it('x selects approve-as-is requests; several are approved together, one durable decision each', async () => {
    const now = Date.now();
    const rowOne = jsonApproval('one', now - 4000);
    const rowTwo = jsonApproval('two', now - 1000);
    // A json approval that needs a passkey is decided in its review, where the passkey signs it: no box.
    const signed = { ...jsonApproval('signed', now - 5000), assurance: 'passkey' as const };
    await db.requests.bulkPut([signed, rowOne, formApproval('form', now - 3000), rowFromView(proposalView('prop', now - 2000)), rowTwo]);
    const { client, calls } = fakeClient({ state: 'answered', ok: true, status: 'approved' }, { state: 'queued' });
    render(<Inbox db={db} client={client} onOpen={() => undefined} />);
    const [two, prop, form, one, passkeyOne] = await inboxButtons();
    // Only the json-mode approvals can be selected: the others need the review (a form to fill, fields to include).
    expect(screen.getAllByRole('checkbox').map((box) => box.getAttribute('aria-label'))).toEqual(['Select: Approve two', 'Select: Approve one']);

    two!.focus();
    key('x');
    prop!.focus();
    key('x');
    form!.focus();
    key('x');
    one!.focus();
    key('x');
    passkeyOne!.focus();
    key('x');
    const bar = screen.getByRole('group', { name: 'Selected requests' });
    expect(bar.textContent).toContain('2 selected');
    fireEvent.click(within(bar).getByRole('button', { name: 'Approve 2' }));
    await waitFor(() => expect(screen.getByText('1 approved, 1 waiting for the hub.')).toBeTruthy());
    // Each decision carries the hash of its own row, as the list read it: the hub refuses one that is not its request.
    const [hashOne, hashTwo] = [await shownHash(rowOne), await shownHash(rowTwo)];
    expect(hashOne).not.toBe(hashTwo);
    expect(calls).toEqual([
      { elicitationId: 'two', decision: 'approved', shownHash: hashTwo },
      { elicitationId: 'one', decision: 'approved', shownHash: hashOne },
    ]);
    expect(screen.queryByRole('group', { name: 'Selected requests' })).toBeNull();
  });

  it('x again unselects, and a selected request that leaves the inbox is no longer counted', async () => {
    const now = Date.now();
    await db.requests.bulkPut([jsonApproval('one', now - 2000), jsonApproval('two', now - 1000)]);
    const { client } = fakeClient();
    render(<Inbox db={db} client={client} onOpen={() => undefined} />);
    const [two, one] = await inboxButtons();
    two!.focus();
    key('x');
    one!.focus();
    key('x');
    expect(screen.getByRole('group', { name: 'Selected requests' }).textContent).toContain('2 selected');
    key('x');
    expect(screen.getByRole('group', { name: 'Selected requests' }).textContent).toContain('1 selected');
    await db.requests.update('two', { status: 'canceled' });
    await waitFor(() => expect(screen.queryByRole('group', { name: 'Selected requests' })).toBeNull());
  });
});

describe('n and ? across the app', () => {
  it('n opens the next pending request from the inbox, not from an open question, and again once it is decided', async () => {
    const now = Date.now();
    await db.requests.bulkPut([jsonApproval('older', now - 2000), jsonApproval('newer', now - 1000)]);
    const { client } = fakeClient();
    render(<App db={db} client={client} mode="popup" />);
    await inboxButtons();
    await waitFor(() => {
      key('n', document.body);
      expect(window.location.hash).toBe('#/review/newer');
    });
    await screen.findByRole('button', { name: /Approve/ });

    // Still pending and undecided here: n must not skip it. The shortcut navigates within its own key event, so the
    // hash tells at once.
    key('n', document.body);
    expect(window.location.hash).toBe('#/review/newer');

    // Its decision is on its way (queued): now n moves on.
    await db.requests.update('newer', { delivery: 'queued', outcome: { decision: 'approved', action: 'submit' } });
    await waitFor(async () => {
      key('n', document.body);
      expect(window.location.hash).toBe('#/review/older');
    });
    // At once on arrival, while the previous (decided) request may still be what the page last read: still no skip.
    key('n', document.body);
    // Then once the page has read the new request: that read (a live query inside the shortcut's component) shows
    // nowhere on the page, so it is given a fixed 50 ms rather than awaited.
    await new Promise((r) => setTimeout(r, 50));
    key('n', document.body);
    expect(window.location.hash).toBe('#/review/older');
  });

  it('? shows every shortcut; Esc closes it without cancelling anything, and focus returns', async () => {
    const { client, calls } = fakeClient();
    render(<App db={db} client={client} mode="popup" />);
    const before = screen.getByRole('link', { name: /Inbox/ });
    before.focus();
    key('?');
    const help = await screen.findByRole('dialog', { name: 'Keyboard shortcuts' });
    for (const k of ['j / k', 'Enter', 'x', 'n', 'Ctrl+Enter', 'Esc', '?']) expect(within(help).getByText(k)).toBeTruthy();
    await waitFor(() => expect(document.activeElement).toBe(within(help).getByRole('button', { name: 'Close' })));
    key('Escape');
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect(document.activeElement).toBe(before);
    expect(calls).toEqual([]);
  });
});

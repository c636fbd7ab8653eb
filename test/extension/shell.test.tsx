import { fireEvent, render, screen, waitFor, within } from '@testing-library/preact';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ElicitlyDb } from '../../extension/db/database.js';
import { rowFromView, type RequestRow } from '../../extension/db/rows.js';
import { patchSettings, readSettings, writeConnection } from '../../extension/db/settings-repo.js';
import type { BackgroundClient } from '../../extension/messages.js';
import { App } from '../../extension/ui/app.js';
import { ConnectionHeader } from '../../extension/ui/connection-header.js';
import { History } from '../../extension/ui/history.js';
import { Inbox } from '../../extension/ui/inbox.js';
import { SettingsForm } from '../../extension/ui/settings-form.js';
import type { RequestView } from '../../shared/wire-protocol.js';
import { freshDb, proposalView } from './fakes.js';

const MIN = 60_000;
const HOUR = 60 * MIN;

let db: ElicitlyDb;

beforeEach(() => {
  db = freshDb();
  window.location.hash = '';
});
afterEach(() => db.close());

function fakeClient(): BackgroundClient & { decide: ReturnType<typeof vi.fn>; reconnect: ReturnType<typeof vi.fn> } {
  return {
    decide: vi.fn(async () => ({ state: 'queued' as const })),
    reconnect: vi.fn(async () => undefined),
  };
}

function approval(id: string, createdAt: number, overrides: Partial<RequestView> = {}): RequestRow {
  const message = overrides.message ?? `Approve ${id}`;
  return rowFromView({
    elicitationId: id,
    kind: 'approval',
    status: 'pending',
    message,
    createdAt,
    expiresAt: createdAt + HOUR,
    requester: { client: 'claude-code', pid: 4242 },
    request: { kind: 'approval', message, mode: 'json', context: { ok: true }, requestedSchema: null, labels: { ok: 'Approve', cancel: 'Reject' }, timeoutSeconds: 3600 },
    renderedTemplate: null,
    ...overrides,
  });
}

async function seed(...rows: RequestRow[]): Promise<void> {
  await db.requests.bulkPut(rows);
}

describe('Inbox', () => {
  it('lists pending requests newest first, with kind, agent, age and time left', async () => {
    const now = Date.now();
    await seed(
      approval('older', now - 5 * MIN, { message: 'Delete the staging bucket' }),
      rowFromView(proposalView('newer', now - 30_000)),
      approval('gone', now - 2 * HOUR, { expiresAt: now - MIN }),
      approval('done', now - MIN, { status: 'approved' }),
    );
    const onOpen = vi.fn();
    render(<Inbox db={db} onOpen={onOpen} />);
    const list = await screen.findByRole('list', { name: 'Pending requests' });
    const buttons = within(list).getAllByRole('button');
    expect(buttons).toHaveLength(2);
    expect(buttons[0]!.textContent).toMatch(/^Sync NorthMark Strategies from Apollo into Salesforce Proposal · claude-code · just now · expires in 5\d min$/);
    expect(buttons[1]!.textContent).toMatch(/^Delete the staging bucket Approval · claude-code · 5 min ago · expires in 5\d min$/);
    expect(within(list).getByRole('button', { name: /^Delete the staging bucket/ })).toBe(buttons[1]);
    fireEvent.click(buttons[1]!);
    expect(onOpen).toHaveBeenCalledWith('older');
  });

  it('drops a request when its deadline passes, with no write to the database', async () => {
    const now = Date.now();
    await seed(approval('soon', now - MIN, { expiresAt: now + 1200, message: 'Short-lived' }), approval('later', now - 2 * MIN));
    render(<Inbox db={db} onOpen={() => undefined} />);
    expect(await screen.findByRole('button', { name: /^Short-lived/ })).toBeTruthy();
    await waitFor(() => expect(screen.queryByRole('button', { name: /^Short-lived/ })).toBeNull(), { timeout: 3000 });
    expect(screen.getByRole('button', { name: /^Approve later/ })).toBeTruthy();
  });

  it('shows new requests live and says how to connect an agent when empty', async () => {
    render(<Inbox db={db} onOpen={() => undefined} />);
    expect(await screen.findByText('Nothing to review.')).toBeTruthy();
    expect(screen.getByText(/Add elicitly-companion to your agent as an MCP server/).textContent).toBe(
      'Add elicitly-companion to your agent as an MCP server (npx elicitly-companion); its requests appear here.',
    );
    await seed(approval('new', Date.now()));
    expect(await screen.findByRole('button', { name: /^Approve new/ })).toBeTruthy();
  });
});

describe('ConnectionHeader', () => {
  it('says "Starting…" before the background wrote anything, then follows it live', async () => {
    render(<ConnectionHeader db={db} />);
    const status = screen.getByRole('status');
    await waitFor(() => expect(status.textContent).toBe('Starting…'));
    expect(status.dataset.state).toBe('starting');
    await writeConnection(db, { state: 'connected', since: Date.now() });
    await waitFor(() => expect(status.textContent).toBe('Connected'));
    expect(status.dataset.state).toBe('connected');
  });

  const cases: [string, Parameters<typeof writeConnection>[1], RegExp][] = [
    ['connecting', { state: 'connecting', since: 0 }, /^Connecting to the hub…$/],
    ['reconnecting', { state: 'reconnecting', since: 0, retryAt: Date.now() + 60_000 },
      /^Reconnecting — no hub on port 17400\. Start an agent that runs elicitly-companion\. next try in (5\d|60) s$/],
    ['pairing_needed', { state: 'pairing_needed', since: 0 },
      /^Pairing needed: run npx elicitly-companion pair and enter the code in Settings\.$/],
    ['version_mismatch', { state: 'version_mismatch', hubProtocol: 3, extensionProtocol: 2, since: 0, retryAt: Date.now() + 60_000 },
      /^Version mismatch: the hub speaks protocol 3, this extension protocol 2\. Update the Elicitly extension\.$/],
    ['version_mismatch', { state: 'version_mismatch', hubProtocol: 1, extensionProtocol: 2, since: 0 },
      /^Version mismatch: the hub speaks protocol 1, this extension protocol 2\. Update elicitly-companion \(the MCP server: npx -y elicitly-companion@latest\) and restart your agents\.$/],
    ['version_mismatch', { state: 'version_mismatch', hubProtocol: null, extensionProtocol: 2, since: 0 },
      /^Version mismatch: the hub speaks an older protocol, this extension protocol 2\. Update elicitly-companion \(the MCP server: npx -y elicitly-companion@latest\) and restart your agents\.$/],
  ];
  it.each(cases)('%s', async (state, connection, text) => {
    await patchSettings(db, { port: 17400, pairingCode: '', notifications: true, retentionDays: 30 });
    await writeConnection(db, connection);
    render(<ConnectionHeader db={db} />);
    const status = screen.getByRole('status');
    await waitFor(() => expect(status.textContent).toMatch(text));
    expect(status.dataset.state).toBe(state);
  });
});

describe('History', () => {
  const base = Date.now() - 10 * HOUR;
  function historyRows(): RequestRow[] {
    return Array.from({ length: 60 }, (_, i) => {
      const id = `h-${String(i).padStart(2, '0')}`;
      const common = { status: i % 2 === 0 ? 'approved' as const : 'rejected' as const, message: i % 10 === 0 ? `Rotate key ${i}` : `Merge branch ${i}` };
      return i % 3 === 0
        ? rowFromView(proposalView(id, base + i * MIN, common))
        : approval(id, base + i * MIN, common);
    });
  }
  function messages(): string[] {
    const table = screen.getByRole('table', { name: 'History' });
    return within(table).getAllByRole('button').map((b) => b.textContent ?? '');
  }

  it('lists newest first and loads more by cursor until the end', async () => {
    await seed(...historyRows());
    render(<History db={db} onOpen={() => undefined} />);
    await screen.findByRole('table', { name: 'History' });
    expect(messages()).toHaveLength(50);
    expect(messages()[0]).toBe('Merge branch 59');
    const headers = within(screen.getByRole('table', { name: 'History' })).getAllByRole('columnheader').map((h) => h.textContent);
    expect(headers).toEqual(['Created', 'Kind', 'Status', 'Message', 'Agent']);
    fireEvent.click(screen.getByRole('button', { name: 'Load more' }));
    await waitFor(() => expect(messages()).toHaveLength(60));
    expect(messages()[59]).toBe('Rotate key 0');
    expect(new Set(messages()).size).toBe(60);
    expect(screen.queryByRole('button', { name: 'Load more' })).toBeNull();
  });

  it('filters by status and kind, searches after a pause, and shows new decisions live', async () => {
    await seed(...historyRows());
    render(<History db={db} onOpen={() => undefined} />);
    await screen.findByRole('table', { name: 'History' });

    fireEvent.change(screen.getByRole('combobox', { name: 'Status' }), { target: { value: 'rejected' } });
    await waitFor(() => expect(messages()).toHaveLength(30));
    fireEvent.change(screen.getByRole('combobox', { name: 'Kind' }), { target: { value: 'proposal' } });
    await waitFor(() => expect(messages()).toHaveLength(10));
    const table = screen.getByRole('table', { name: 'History' });
    expect(within(table).getAllByText('Proposal')).toHaveLength(10);
    expect(within(table).getAllByText('rejected')).toHaveLength(10);

    fireEvent.change(screen.getByRole('combobox', { name: 'Status' }), { target: { value: '' } });
    fireEvent.change(screen.getByRole('combobox', { name: 'Kind' }), { target: { value: '' } });
    fireEvent.input(screen.getByRole('searchbox', { name: 'Search' }), { target: { value: 'rot' } });
    await waitFor(() => expect(messages()).toEqual(['Rotate key 50', 'Rotate key 40', 'Rotate key 30', 'Rotate key 20', 'Rotate key 10', 'Rotate key 0']));

    await seed(approval('fresh', Date.now(), { status: 'approved', message: 'Rotate key fresh' }));
    await waitFor(() => expect(messages()[0]).toBe('Rotate key fresh'));

    fireEvent.input(screen.getByRole('searchbox', { name: 'Search' }), { target: { value: 'nothing matches this' } });
    expect(await screen.findByText('No requests match.')).toBeTruthy();
  });

  it('opens a row by its message and exports everything as a dated JSON file', async () => {
    await seed(...historyRows());
    const onOpen = vi.fn();
    render(<History db={db} onOpen={onOpen} />);
    fireEvent.click(await screen.findByRole('button', { name: 'Merge branch 58' }));
    expect(onOpen).toHaveBeenCalledWith('h-58');

    const blobs: Blob[] = [];
    const createObjectURL = vi.fn((blob: Blob) => {
      blobs.push(blob);
      return 'blob:export';
    });
    vi.stubGlobal('URL', Object.assign(URL, { createObjectURL, revokeObjectURL: vi.fn() }));
    const clicked: HTMLAnchorElement[] = [];
    const click = vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(function (this: HTMLAnchorElement) {
      clicked.push(this);
    });
    try {
      fireEvent.click(screen.getByRole('button', { name: 'Export JSON' }));
      await waitFor(() => expect(clicked).toHaveLength(1));
      expect(clicked[0]!.download).toMatch(/^elicitly-history-\d{4}-\d{2}-\d{2}\.json$/);
      expect(clicked[0]!.getAttribute('href')).toBe('blob:export');
      const exported = JSON.parse(await blobs[0]!.text()) as RequestRow[];
      expect(exported).toHaveLength(60);
      expect(exported[0]!.elicitationId).toBe('h-00');
    } finally {
      click.mockRestore();
      vi.unstubAllGlobals();
    }
  });
});

describe('SettingsForm', () => {
  it('names each invalid field and rule, keeps what was typed, then saves and reconnects', async () => {
    const client = fakeClient();
    render(<SettingsForm db={db} client={client} />);
    const port = await screen.findByLabelText('Hub port') as HTMLInputElement;
    expect(port.value).toBe('17391');
    const days = screen.getByLabelText('Keep history for (days)') as HTMLInputElement;
    const code = screen.getByLabelText('Pairing code') as HTMLInputElement;
    expect(code.getAttribute('aria-describedby')).toBeTruthy();
    expect(screen.getByText(/Only needed when the hub cannot recognise this browser's extension \(Firefox\)/)).toBeTruthy();

    fireEvent.input(port, { target: { value: '80' } });
    fireEvent.input(days, { target: { value: '' } });
    fireEvent.input(code, { target: { value: 'ABCD-1234' } });
    fireEvent.click(screen.getByRole('checkbox', { name: 'Show a notification for each new request' }));
    fireEvent.click(screen.getByRole('button', { name: 'Save' }));

    const alerts = await screen.findAllByRole('alert');
    expect(alerts.map((a) => a.textContent)).toEqual([
      'Hub port must be between 1024 and 65535.',
      'Keep history for (days) must be a whole number between 1 and 3650.',
    ]);
    expect(port.value).toBe('80');
    expect(code.value).toBe('ABCD-1234');
    expect(port.getAttribute('aria-invalid')).toBe('true');
    expect(client.reconnect).not.toHaveBeenCalled();
    expect(await readSettings(db)).toMatchObject({ port: 17391 });

    fireEvent.input(port, { target: { value: '18000' } });
    fireEvent.input(days, { target: { value: '14' } });
    fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(screen.getByRole('status').textContent).toBe('Saved.'));
    expect(screen.queryAllByRole('alert')).toHaveLength(0);
    expect(client.reconnect).toHaveBeenCalledTimes(1);
    expect(await readSettings(db)).toEqual({ port: 18000, pairingCode: 'ABCD-1234', notifications: false, retentionDays: 14 });
  });
});

describe('SettingsForm and the background', () => {
  it('saves only what the person changed: a pairing code the background spent meanwhile stays spent', async () => {
    await patchSettings(db, { pairingCode: 'abc123' });
    const client = fakeClient();
    render(<SettingsForm db={db} client={client} />);
    const port = await screen.findByLabelText('Hub port');
    expect((screen.getByLabelText('Pairing code') as HTMLInputElement).value).toBe('abc123');
    // The hub accepted the code while the form was open; the background forgets it.
    await patchSettings(db, { pairingCode: '' }, (current) => current.pairingCode === 'abc123');
    fireEvent.input(port, { target: { value: '18000' } });
    fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(screen.getByRole('status').textContent).toBe('Saved.'));
    expect(await readSettings(db)).toEqual({ port: 18000, pairingCode: '', notifications: true, retentionDays: 90 });
    // A second save compares with what the first one saved: the untouched code is still not written back.
    fireEvent.input(screen.getByLabelText('Keep history for (days)'), { target: { value: '30' } });
    fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(client.reconnect).toHaveBeenCalledTimes(2));
    expect(await readSettings(db)).toEqual({ port: 18000, pairingCode: '', notifications: true, retentionDays: 30 });
  });
});

describe('App', () => {
  it('routes by hash: inbox by default with the pending count, settings and history from the nav', async () => {
    await seed(approval('a', Date.now() - MIN), approval('b', Date.now(), { status: 'rejected' }));
    render(<App db={db} client={fakeClient()} mode="tab" />);
    const nav = screen.getByRole('navigation', { name: 'Sections' });
    await waitFor(() => expect(within(nav).getByRole('link', { name: 'Inbox (1)' })).toBeTruthy());
    expect(await screen.findByRole('list', { name: 'Pending requests' })).toBeTruthy();
    expect(document.querySelector('.app')!.classList.contains('mode-tab')).toBe(true);

    window.location.hash = '#/settings';
    expect(await screen.findByLabelText('Hub port')).toBeTruthy();

    window.location.hash = '#/history';
    const table = await screen.findByRole('table', { name: 'History' });
    fireEvent.click(within(table).getByRole('button', { name: 'Approve b' }));
    await waitFor(() => expect(window.location.hash).toBe('#/history/b'));
    expect(await screen.findByRole('link', { name: 'Back to history' })).toBeTruthy();
    expect((await screen.findAllByText('Approve b')).length).toBeGreaterThan(0);
  });

  it('opens a proposal from the inbox into its review grid, with "Open in a tab" in the popup', async () => {
    await seed(rowFromView(proposalView('p1', Date.now())));
    const openInTab = vi.fn();
    render(<App db={db} client={fakeClient()} mode="popup" openInTab={openInTab} />);
    expect(document.querySelector('.app')!.classList.contains('mode-popup')).toBe(true);
    fireEvent.click(await screen.findByRole('button', { name: /^Sync NorthMark Strategies/ }));
    await waitFor(() => expect(window.location.hash).toBe('#/review/p1'));
    expect(await screen.findByRole('table', { name: 'Proposed changes' })).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: 'Open in a tab' }));
    expect(openInTab).toHaveBeenCalledWith('#/review/p1');
  });

  it('renders the review route directly, and says so when the request is missing', async () => {
    await seed(rowFromView(proposalView('p2', Date.now())));
    window.location.hash = '#/review/p2';
    render(<App db={db} client={fakeClient()} mode="tab" />);
    expect(await screen.findByRole('table', { name: 'Proposed changes' })).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Open in a tab' })).toBeNull();
    window.location.hash = '#/review/nope';
    expect(await screen.findByText('Request not found.')).toBeTruthy();
  });
});

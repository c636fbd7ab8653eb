import { fireEvent, render, screen, waitFor, within } from '@testing-library/preact';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ElicitlyDb } from '../../extension/db/database.js';
import { rowFromView, type RequestRow } from '../../kit/rows/rows.js';
import { patchSettings, readSettings, savePairing, writeConnection } from '../../extension/db/settings-repo.js';
import type { ReviewerClient } from '../../kit/messages.js';
import { App } from '../../extension/ui/app.js';
import { ConnectionHeader } from '../../extension/ui/connection-header.js';
import { Inbox } from '../../extension/ui/inbox.js';
import { PairingForm } from '../../extension/ui/pairing-form.js';
import { SettingsForm } from '../../extension/ui/settings-form.js';
import { PAIRING_TTL_MINUTES } from '../../shared/hub-auth.js';
import { TEST_CODE, TEST_KEY, TEST_KEY_ID, freshDb, proposalView, jsonApprovalRow } from './fakes.js';

const MIN = 60_000;
const PAIRING_NEEDED = 'Pairing needed: enter the code from npx elicitly-companion pair in Settings → Pairing code\\.';
const HOUR = 60 * MIN;

let db: ElicitlyDb;

beforeEach(() => {
  db = freshDb();
  window.location.hash = '';
});
afterEach(() => db.close());

function fakeClient(): ReviewerClient & { decide: ReturnType<typeof vi.fn>; reconnect: ReturnType<typeof vi.fn> } {
  return {
    decide: vi.fn(async () => ({ state: 'queued' as const })),
    reconnect: vi.fn(async () => undefined),
  };
}

const approval = jsonApprovalRow;

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
    expect(onOpen).toHaveBeenCalledWith('older', expect.objectContaining({ elicitationId: 'older', message: 'Delete the staging bucket' }));
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
      /^Reconnecting — no hub on port 17400\. Start an agent that runs elicitly-companion\. Next try in (5\d|60) s\.$/],
    ['pairing_needed', { state: 'pairing_needed', port: 17400, since: 0 },
      new RegExp(`^${PAIRING_NEEDED}$`)],
    ['pairing_needed', { state: 'pairing_needed', port: 17400, reason: 'code_refused', since: 0 },
      new RegExp(`^${PAIRING_NEEDED} The pairing code was refused: check it, or make a new one with npx elicitly-companion pair\\.$`)],
    ['pairing_needed', { state: 'pairing_needed', port: 17400, reason: 'code_unproven', since: 0 },
      new RegExp(`^${PAIRING_NEEDED} The hub on port 17400 did not prove it knows that pairing code: check it, or make a new one with npx elicitly-companion pair\\. `
        + 'If the code is right, something that is not this computer\'s Elicitly hub answers on the port\\.$')],
    ['pairing_needed', { state: 'pairing_needed', port: 17400, reason: 'no_code_active', since: 0 },
      new RegExp(`^${PAIRING_NEEDED} No pairing code is active on the hub: run npx elicitly-companion pair in a terminal and enter the new code\\.$`)],
    ['pairing_needed', { state: 'pairing_needed', port: 17400, reason: 'key_unknown', since: 0 },
      new RegExp(`^${PAIRING_NEEDED} The hub on port 17400 no longer knows this browser's key \\(it was removed, or the hub's state was reset\\): pair again\\.$`)],
    ['untrusted_hub', { state: 'untrusted_hub', port: 17401, since: 0, retryAt: Date.now() + 60_000 },
      /^Untrusted hub on port 17401: something that is not this computer's Elicitly hub answers on the port, so nothing was sent to it\. Next try in (5\d|60) s\.$/],
    ['version_mismatch', { state: 'version_mismatch', hubProtocol: 3, extensionProtocol: 2, since: 0, retryAt: Date.now() + 60_000 },
      /^Version mismatch: the hub speaks protocol 3, this extension protocol 2\. Update the Elicitly extension\. Next try in (5\d|60) s\.$/],
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

describe('SettingsForm', () => {
  it('names each invalid field and rule, keeps what was typed, then saves and reconnects', async () => {
    const client = fakeClient();
    render(<SettingsForm db={db} client={client} />);
    const port = await screen.findByLabelText('Hub port') as HTMLInputElement;
    expect(port.value).toBe('17391');
    const days = screen.getByLabelText('Keep history for (days)') as HTMLInputElement;

    fireEvent.input(port, { target: { value: '80' } });
    fireEvent.input(days, { target: { value: '' } });
    fireEvent.click(screen.getByRole('checkbox', { name: 'Show a notification for each new request' }));
    fireEvent.click(screen.getByRole('button', { name: 'Save' }));

    const alerts = await screen.findAllByRole('alert');
    expect(alerts.map((a) => a.textContent)).toEqual([
      'Hub port must be between 1024 and 65535.',
      'Keep history for (days) must be a whole number between 1 and 3650.',
    ]);
    expect(port.value).toBe('80');
    expect(port.getAttribute('aria-invalid')).toBe('true');
    expect(client.reconnect).not.toHaveBeenCalled();
    expect(await readSettings(db)).toMatchObject({ port: 17391 });

    fireEvent.input(port, { target: { value: '18000' } });
    fireEvent.input(days, { target: { value: '14' } });
    fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(screen.getByRole('status').textContent).toBe('Saved.'));
    expect(screen.queryAllByRole('alert')).toHaveLength(0);
    expect(client.reconnect).toHaveBeenCalledTimes(1);
    expect(await readSettings(db)).toEqual({ port: 18000, pairingCode: '', notifications: false, retentionDays: 14, hubKeys: {} });
  });
});

describe('SettingsForm and the background', () => {
  it('saves only what the person changed: a key and a spent code the background wrote meanwhile stay as it left them', async () => {
    await patchSettings(db, { pairingCode: TEST_CODE });
    const client = fakeClient();
    render(<SettingsForm db={db} client={client} />);
    const port = await screen.findByLabelText('Hub port');
    // The hub paired this browser while the form was open: the background stored the key and forgot the code.
    await savePairing(db, 17391, { keyId: TEST_KEY_ID, key: TEST_KEY }, TEST_CODE);
    fireEvent.input(port, { target: { value: '18000' } });
    fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(screen.getByRole('status').textContent).toBe('Saved.'));
    const paired = { 17391: { keyId: TEST_KEY_ID, key: TEST_KEY } };
    expect(await readSettings(db)).toEqual({ port: 18000, pairingCode: '', notifications: true, retentionDays: 90, hubKeys: paired });
    // A second save compares with what the first one saved.
    fireEvent.input(screen.getByLabelText('Keep history for (days)'), { target: { value: '30' } });
    fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(client.reconnect).toHaveBeenCalledTimes(2));
    expect(await readSettings(db)).toEqual({ port: 18000, pairingCode: '', notifications: true, retentionDays: 30, hubKeys: paired });
  });
});

describe('PairingForm', () => {
  it('"Pairing code" and "Pair": a typo is caught here; a good code is stored normalized and the background pairs at once', async () => {
    const client = fakeClient();
    render(<PairingForm db={db} client={client} />);
    const code = await screen.findByLabelText('Pairing code') as HTMLInputElement;
    expect(code.getAttribute('aria-describedby')).toBe('pairing-hint');
    // The same validity the command prints beside the code's deadline (test/unit/pair-command.test.ts).
    expect(document.getElementById('pairing-hint')?.textContent).toBe(
      `Run npx elicitly-companion pair in a terminal on this computer and enter the code it prints before the time it names (a code is valid ${PAIRING_TTL_MINUTES} minutes).`,
    );
    await waitFor(() => expect(screen.getByRole('status').textContent).toBe('This browser is not paired with the hub on port 17391 yet.'));

    fireEvent.input(code, { target: { value: '0a1b-2c3d-4e5' } });
    fireEvent.click(screen.getByRole('button', { name: 'Pair' }));
    expect((await screen.findByRole('alert')).textContent).toBe(
      'Pairing code must be the 12 letters and digits (0–9, a–f) that npx elicitly-companion pair printed.',
    );
    expect(code.getAttribute('aria-invalid')).toBe('true');
    expect(client.reconnect).not.toHaveBeenCalled();
    expect((await readSettings(db)).pairingCode).toBe('');

    fireEvent.input(code, { target: { value: ' 0A1B-2C3D 4E5F ' } });
    fireEvent.click(screen.getByRole('button', { name: 'Pair' }));
    await waitFor(() => expect(client.reconnect).toHaveBeenCalledTimes(1));
    expect((await readSettings(db)).pairingCode).toBe(TEST_CODE);
    expect(code.value).toBe('');
    await waitFor(() => expect(screen.getByRole('status').textContent).toBe('Pairing with the hub on port 17391…'));

    // The background paired: the status follows the stored key.
    await savePairing(db, 17391, { keyId: TEST_KEY_ID, key: TEST_KEY }, TEST_CODE);
    await waitFor(() => expect(screen.getByRole('status').textContent).toBe('This browser is paired with the hub on port 17391.'));
  });

  it('the status is about the port in settings: a key for another port does not count', async () => {
    await savePairing(db, 17391, { keyId: TEST_KEY_ID, key: TEST_KEY }, '');
    await patchSettings(db, { port: 18000 });
    render(<PairingForm db={db} client={fakeClient()} />);
    await waitFor(() => expect(screen.getByRole('status').textContent).toBe('This browser is not paired with the hub on port 18000 yet.'));
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
    expect(screen.getByLabelText('Pairing code')).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Pair' })).toBeTruthy();

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

  it('the first-run page (#/welcome) asks for the pairing code, and the header links to where it goes', async () => {
    window.location.hash = '#/welcome';
    await writeConnection(db, { state: 'pairing_needed', port: 17391, since: 0 });
    const client = fakeClient();
    render(<App db={db} client={client} mode="tab" />);
    expect(await screen.findByRole('heading', { name: 'Pair this browser with elicitly-companion' })).toBeTruthy();
    expect(await screen.findByText(/The hub listens on port 17391\./)).toBeTruthy();
    fireEvent.input(screen.getByLabelText('Pairing code'), { target: { value: TEST_CODE } });
    fireEvent.click(screen.getByRole('button', { name: 'Pair' }));
    await waitFor(() => expect(client.reconnect).toHaveBeenCalledTimes(1));
    expect((await readSettings(db)).pairingCode).toBe(TEST_CODE);
    const link = await screen.findByRole('link', { name: 'Settings → Pairing code' });
    fireEvent.click(link);
    expect(link.getAttribute('href')).toBe('#/settings');
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

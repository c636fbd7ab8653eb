// Issue 20: the phone page's views on a real session over a fake hub socket: pairing from the QR's link, the inbox
// (agent text shown as text), a review decided with the extension's components, the history, and the header's states.
import { fireEvent, render, screen, waitFor, within } from '@testing-library/preact';
import { beforeEach, describe, expect, it } from 'vitest';
import { Store } from '../../kit/ui/store.js';
import { IDBFactory } from 'fake-indexeddb';
import { loadDeviceKey, openKeyStore, saveDeviceKey } from '../../phone/device-key.js';
import type { PairingRefusal } from '../../phone/device-connection.js';
import type { ConnectionState } from '../../kit/rows/rows.js';
import { PhoneApp } from '../../phone/phone-app.js';
import { createPhoneSession, type PhoneSession } from '../../phone/phone-session.js';
import { applyWelcome, NO_REQUESTS, recordOutcome, type RequestLists } from '../../phone/request-lists.js';
import { shownHash } from '../../shared/shown-hash.js';
import { PROTOCOL_VERSION, type RequestView } from '../../shared/wire-protocol.js';
import {
  HUB_PORT, ManualClock, fakeSockets, ORIGIN, TEST_CODE, TEST_KEY, TEST_KEY_ID, nextSent, pairHub, proposalView, proveHub, welcome,
} from './phone-fakes.js';

const HOSTILE = '<img src=x onerror="alert(1)"> Deploy to production?';

function approvalView(id: string, message = HOSTILE, overrides: Partial<RequestView> = {}): RequestView {
  const now = Date.now();
  return {
    elicitationId: id,
    kind: 'approval',
    status: 'pending',
    message,
    createdAt: now,
    expiresAt: now + 30 * 60_000 + 30_000,
    requester: { client: 'codex <script>', pid: 7 },
    request: { kind: 'approval', message, mode: 'json', context: { service: 'web' }, requestedSchema: null, labels: { ok: 'Approve', cancel: 'Reject' }, timeoutSeconds: 1800 },
    renderedTemplate: null,
    ...overrides,
  };
}

/** The page's IndexedDB, fresh for each test. */
let idb = new IDBFactory();
beforeEach(() => {
  idb = new IDBFactory();
});

/** The page as main.tsx builds it, on a fake socket and a fresh IndexedDB. */
async function mountLive(pairCode: string | null) {
  const { sockets, factory, last } = fakeSockets();
  const clock = new ManualClock();
  clock.t = Date.now();
  const { session, connection } = createPhoneSession({
    url: `${ORIGIN.replace(/^http/, 'ws')}/phone/socket`,
    hubPort: HUB_PORT,
    origin: ORIGIN,
    socketFactory: factory,
    clock,
    keys: await openKeyStore(idb, { hubPort: HUB_PORT, origin: ORIGIN }),
    client: { name: 'elicitly-phone', version: 'test' },
  });
  render(<PhoneApp session={session} pairCode={pairCode} suggestedName="iPhone (Safari)" />);
  connection.ensure();
  return { session, sockets, last, clock };
}

/** A session of plain stores, for the views alone. */
function staticSession(state: ConnectionState | null, lists: RequestLists = NO_REQUESTS, refused: PairingRefusal | null = null) {
  const pairs: [string, string][] = [];
  const session: PhoneSession = {
    state: new Store(state),
    lists: new Store(lists),
    pairingRefused: new Store(refused),
    client: { decide: () => Promise.resolve({ state: 'error', message: 'not in this test' }), reconnect: () => Promise.resolve() },
    pair: (code, name) => pairs.push([code, name]),
  };
  return { session, pairs };
}

describe('pairing from the QR\'s link', () => {
  it('names the device (prefilled, editable), pairs on tap, keeps the key, then shows the inbox with agent text as text', async () => {
    location.hash = '';
    const { last } = await mountLive(TEST_CODE);
    const name = screen.getByLabelText('Name this device') as HTMLInputElement;
    expect(name.value).toBe('iPhone (Safari)');
    expect(screen.queryByText(TEST_CODE)).toBeNull();
    fireEvent.input(name, { target: { value: 'Work phone' } });
    fireEvent.click(screen.getByRole('button', { name: 'Pair' }));
    const socket = last();
    expect(socket.protocols).toContain('elicitly.pair');
    socket.open();
    expect(await nextSent(socket, 'hello')).toMatchObject({ params: { pairing: true, deviceName: 'Work phone', role: 'device' } });
    await screen.findByRole('button', { name: 'Pairing…' });
    // The key, sealed with the code, and the welcome come in one answer to the auth call.
    await pairHub(socket, TEST_CODE, TEST_KEY, TEST_KEY_ID, welcome([approvalView('el_a')]));

    const list = await screen.findByRole('list', { name: 'Pending requests' });
    // The key was kept before the welcome was applied, as a key that cannot be read back.
    const kept = await loadDeviceKey(idb);
    expect(kept).toMatchObject({ keyId: TEST_KEY_ID, hubPort: HUB_PORT, origin: ORIGIN });
    // Kept as a key that cannot be read back, which proves as the key's text does.
    expect(kept?.key.extractable).toBe(false);
    const item = within(list).getByRole('link');
    expect(item.getAttribute('href')).toBe('#/r/el_a');
    expect(item.textContent).toContain(HOSTILE);
    expect(item.textContent).toContain('codex <script>');
    expect(item.textContent).toContain('Approval');
    expect(item.textContent).toContain('expires in 30 min');
    expect(document.querySelector('img')).toBeNull();
    expect(document.querySelector('.connection')?.getAttribute('data-state')).toBe('connected');
  });

  it('refuses an empty name before anything is sent', () => {
    const { session, pairs } = staticSession({ state: 'pairing_needed', port: HUB_PORT, since: 0 });
    render(<PhoneApp session={session} pairCode={TEST_CODE} suggestedName="Phone" />);
    fireEvent.input(screen.getByLabelText('Name this device'), { target: { value: '   ' } });
    fireEvent.click(screen.getByRole('button', { name: 'Pair' }));
    expect(screen.getByText('Give this device a name.')).toBeTruthy();
    expect(pairs).toEqual([]);
  });

  it('a refused code says so and how to get a new one', () => {
    const { session } = staticSession({ state: 'pairing_needed', port: HUB_PORT, reason: 'no_code_active', since: 0 }, NO_REQUESTS, 'no_code_active');
    render(<PhoneApp session={session} pairCode={TEST_CODE} suggestedName="Phone" />);
    expect(screen.getByRole('alert').textContent).toMatch(/No pairing code is active/);
    expect(screen.getByText(/elicitly-companion remote pair/)).toBeTruthy();
  });
});

describe('the inbox, a review and the history', () => {
  it('opens a request, approves it with the extension\'s review, and shows it in the history as decided on a phone', async () => {
    location.hash = '';
    await saveDeviceKey(idb, { keyId: TEST_KEY_ID, key: TEST_KEY }, { hubPort: HUB_PORT, origin: ORIGIN });
    const { last } = await mountLive(null);
    const socket = last();
    socket.open();
    const { authId } = await proveHub(socket, TEST_KEY);
    const view = approvalView('el_a', 'Restart the web service?');
    socket.answer(authId, { welcome: welcome([view], [proposalView('el_old', Date.now() - 60_000, { status: 'expired', decidedAt: Date.now() - 1000 })]) });
    await screen.findByRole('link', { name: /Restart the web service\?/ });
    expect(screen.getByRole('link', { name: 'Inbox (1)' })).toBeTruthy();

    location.hash = '#/r/el_a';
    await screen.findByRole('button', { name: 'Approve' });
    fireEvent.click(screen.getByRole('button', { name: 'Approve' }));
    const decide = await nextSent(socket, 'decide');
    // The hash of the view as the hub sent it: what the page rendered is what the hub holds.
    expect(decide).toEqual({ id: expect.any(String), method: 'decide', params: { elicitationId: 'el_a', decision: 'approved', idempotencyKey: expect.any(String), shownHash: await shownHash(view) } });
    socket.answer(decide.id, { ok: true, status: 'approved' });
    socket.deliver({ method: 'request.removed', params: { elicitationId: 'el_a', status: 'approved', decidedVia: 'phone' } });
    // Back in the inbox, the confirmation names what was decided.
    await screen.findByText('Approved: Restart the web service?');
    await waitFor(() => expect(location.hash).toBe('#/'));
    expect(screen.getByText(/Nothing to review/)).toBeTruthy();

    location.hash = '#/history';
    const history = await screen.findByRole('list', { name: 'Recent requests' });
    const items = within(history).getAllByRole('link');
    expect(items.map((a) => a.getAttribute('href'))).toEqual(['#/r/el_a', '#/r/el_old']);
    expect(items[0]?.textContent).toMatch(/^Restart the web service\?Approved · decided on a paired phone · not collected yet/);
    expect(items[1]?.textContent).toMatch(/Expired/);

    location.hash = '#/r/el_a';
    await screen.findByText(/This request is no longer pending: approved/);
    expect(screen.queryByRole('button', { name: 'Approve' })).toBeNull();
  });
});

describe('the kit\'s inbox on the phone', () => {
  it('lists links to each review, moved through with j/k; no batch boxes; an expired or just-decided request is not listed', async () => {
    location.hash = '';
    const now = Date.now();
    const views = [
      approvalView('el_one', 'First?', { createdAt: now - 2000 }),
      approvalView('el_two', 'Second?', { createdAt: now - 1000 }),
      approvalView('el_gone', 'Expired?', { expiresAt: now - 1 }),
      approvalView('el_sent', 'Decided here?'),
    ];
    const lists = recordOutcome(applyWelcome(NO_REQUESTS, views, [], now), 'el_sent', { decision: 'approved' });
    const { session } = staticSession({ state: 'connected', since: 0 }, lists);
    render(<PhoneApp session={session} pairCode={null} suggestedName="Phone" />);
    const list = screen.getByRole('list', { name: 'Pending requests' });
    const links = within(list).getAllByRole('link');
    expect(links.map((a) => [a.querySelector('.message')?.textContent, a.getAttribute('href')])).toEqual([['First?', '#/r/el_one'], ['Second?', '#/r/el_two']]);
    // json approvals are batch-decidable in the extension; the phone offers no batch, so no boxes.
    expect(within(list).queryAllByRole('checkbox')).toEqual([]);
    fireEvent.keyDown(document.body, { key: 'j' });
    expect(document.activeElement).toBe(links[0]);
    fireEvent.keyDown(document.activeElement ?? document.body, { key: 'j' });
    expect(document.activeElement).toBe(links[1]);
  });
});

describe('the header and the not-paired help', () => {
  it('a removed phone says it is no longer paired and how to pair again', () => {
    const { session } = staticSession({ state: 'pairing_needed', port: HUB_PORT, reason: 'key_unknown', since: 0 });
    render(<PhoneApp session={session} pairCode={null} suggestedName="Phone" />);
    expect(screen.getByText('This phone is no longer paired.')).toBeTruthy();
    expect(screen.getByText(/elicitly-companion remote pair/)).toBeTruthy();
    expect(document.querySelector('.connection')?.getAttribute('data-state')).toBe('pairing_needed');
    expect(document.querySelector('.connection')?.textContent).toBe('No longer paired');
    expect(screen.queryByRole('navigation')).toBeNull();
  });

  it.each([
    [
      { state: 'version_mismatch', hubProtocol: PROTOCOL_VERSION + 1, extensionProtocol: PROTOCOL_VERSION, retryAt: Date.now() + 5000, since: 0 } satisfies ConnectionState,
      new RegExp(`the hub speaks protocol ${PROTOCOL_VERSION + 1}, this page protocol ${PROTOCOL_VERSION}\\. Reload this page`),
    ],
    [{ state: 'reconnecting', retryAt: Date.now() + 5000, detail: 'x', since: 0 } satisfies ConnectionState, /^Reconnecting — the hub is not answering \(is an agent running on the computer\?\)\. Next try in \d+ s\. \(x\)$/],
    [{ state: 'untrusted_hub', port: HUB_PORT, retryAt: Date.now() + 5000, since: 0 } satisfies ConnectionState, /^Untrusted hub: whatever answers at this address could not prove it holds this phone's key, so nothing was sent to it\./],
    [{ state: 'connected', since: 0 } satisfies ConnectionState, /^Connected$/],
    [{ state: 'pairing', since: 0 } satisfies ConnectionState, /^Pairing with the hub…$/],
  ])('%o', (state, text) => {
    const { session } = staticSession(state);
    render(<PhoneApp session={session} pairCode={null} suggestedName="Phone" />);
    expect(document.querySelector('.connection')?.textContent).toMatch(text);
  });
});

import { fireEvent, render, screen, waitFor } from '@testing-library/preact';
import { describe, expect, it } from 'vitest';
import type { McpUiHostContext } from '@modelcontextprotocol/ext-apps';
import type { CallToolResult } from '../../app/app-client.js';
import { applyHostContext, fullscreenToggle } from '../../app/host-context.js';
import { NO_KEY_NOTE, ReviewApp, decidedTime, type AppHost, type Incoming, type ToolInput } from '../../app/review-app.js';
import { Store } from '../../kit/ui/store.js';
import type { RequestView } from '../../shared/review-request.js';
import { shownHash } from '../../shared/shown-hash.js';
import { ID, TOKEN, fakeHost, northmarkView, structured, withKey } from './app-helpers.js';

function mount(host: AppHost, result: CallToolResult | null, ctx?: McpUiHostContext, args?: Record<string, unknown>) {
  const incoming = new Store<Incoming>(result ? { state: 'result', result } : { state: 'waiting' });
  const context = new Store<McpUiHostContext | undefined>(ctx);
  const input = new Store<ToolInput>(args);
  render(<ReviewApp app={host} incoming={incoming} input={input} context={context} />);
  return { incoming, context, input };
}

const button = (name: string) => screen.getByRole('button', { name });

describe('ReviewApp: the extension\'s review, fed by the app-only tools', () => {
  it('waits for the tool result, then reads the request named in its _meta', async () => {
    const { host, calls } = fakeHost({ view: northmarkView() });
    const { incoming } = mount(host, null);
    expect(screen.getByText('Waiting for the request…')).toBeTruthy();
    incoming.set({ state: 'result', result: withKey() });
    await screen.findByRole('table', { name: 'Proposed changes' });
    expect(calls[0]).toEqual({ name: 'elicit_app_view', arguments: { elicitationId: ID } });
  });

  it('shows the grid with the extension\'s accessible names and submits exactly the included values', async () => {
    const shown = northmarkView();
    const state: { view: RequestView; decided: { via: 'app' | 'extension'; at: number } | null } = { view: shown, decided: null };
    const { host, decidesOf } = fakeHost(state, (args) => {
      const at = Date.now();
      state.view = { ...state.view, status: 'approved', decidedAt: at, outcome: { decision: 'approved', decidedVia: 'app', action: 'submit', values: args.values as Record<string, unknown> } };
      state.decided = { via: 'app', at };
      return structured({ ok: true, status: 'approved' });
    });
    mount(host, withKey());
    await screen.findByRole('table', { name: 'Proposed changes' });
    for (const name of ['Submit Changes', 'Cancel', 'Accept All', 'Reject All', 'Restore Proposed']) expect(button(name)).toBeTruthy();
    expect(screen.getByText('4 of 4 included')).toBeTruthy();
    expect(screen.getByRole('cell', { name: 'Apollo: Name' })).toBeTruthy();
    expect(screen.getByLabelText('Proposed Name')).toBeTruthy();
    fireEvent.click(screen.getByRole('checkbox', { name: 'Include Number of Employees' }));
    expect(screen.getByText('3 of 4 included')).toBeTruthy();
    fireEvent.click(button('Submit Changes'));
    await screen.findByText(/^Decided here at /);
    const [sent] = decidesOf();
    // With the hash of the view elicit_app_view returned, which is what the review rendered.
    expect(sent).toMatchObject({ elicitationId: ID, token: TOKEN, decision: 'approved', shownHash: await shownHash(shown) });
    expect(sent?.included).toEqual(['name', 'website', 'institutionTypes']);
    expect(Object.keys(sent?.values as object)).toEqual(['name', 'website', 'institutionTypes']);
    expect(screen.getByText('This request is no longer pending: approved.')).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Submit Changes' })).toBeNull();
  });

  it('Ctrl+Enter submits and Escape asks to cancel, as in the extension', async () => {
    const { host, decidesOf } = fakeHost({ view: northmarkView() }, structured({ ok: false, reason: 'invalid', issues: [] }));
    mount(host, withKey());
    await screen.findByRole('table', { name: 'Proposed changes' });
    fireEvent.keyDown(document.body, { key: 'Escape' });
    expect(screen.getByRole('alertdialog', { name: 'Cancel this request?' })).toBeTruthy();
    fireEvent.click(button('Keep reviewing'));
    fireEvent.keyDown(document.body, { key: 'Enter', ctrlKey: true });
    await waitFor(() => expect(decidesOf()).toHaveLength(1));
  });

  it('answers an ask pending in the extension with the same ask view (elicit_confirm)', async () => {
    const view = northmarkView({ kind: 'confirm', message: 'Ship it?', request: { kind: 'confirm', message: 'Ship it?', labels: { yes: 'Sí', no: 'No' }, timeoutSeconds: 3600 } });
    const { host, decidesOf } = fakeHost({ view });
    mount(host, withKey());
    fireEvent.click(await screen.findByRole('button', { name: 'Sí' }));
    await waitFor(() => expect(decidesOf()).toHaveLength(1));
    expect(decidesOf()[0]).toEqual({ elicitationId: ID, token: TOKEN, decision: 'approved', values: { confirmed: true }, idempotencyKey: expect.any(String), shownHash: await shownHash(view) });
  });

  it('a question answered with its "no" label says the answer given, never "approved"', async () => {
    const ask = { kind: 'confirm' as const, message: 'Delete the staging cluster?', labels: { yes: 'Delete', no: 'Keep' }, timeoutSeconds: 3600 };
    const state: { view: RequestView; decided: { via: 'app' | 'extension'; at: number } | null } = { view: northmarkView({ kind: 'confirm', message: ask.message, request: ask }), decided: null };
    const { host, decidesOf } = fakeHost(state, (args) => {
      const at = Date.now();
      state.view = { ...state.view, status: 'approved', decidedAt: at, outcome: { decision: 'approved', decidedVia: 'app', action: 'submit', values: args.values as Record<string, unknown> } };
      state.decided = { via: 'app', at };
      return structured({ ok: true, status: 'approved' });
    });
    mount(host, withKey());
    fireEvent.click(await screen.findByRole('button', { name: 'Keep' }));
    await screen.findByText(/^Decided here at /);
    expect(decidesOf()[0]).toMatchObject({ decision: 'approved', values: { confirmed: false } });
    expect(screen.getByText(/^This request is no longer pending: /).textContent).toBe('This request is no longer pending: answered: Keep.');
    expect(document.body.textContent).toContain('Decision: Answered: Keep');
    expect(document.body.textContent).not.toMatch(/approved/i);
  });

  it('says when the extension decided first, and that this decision was not used', async () => {
    const at = Date.now() - 60_000;
    const state: { view: RequestView; decided: { via: 'app' | 'extension'; at: number } | null } = { view: northmarkView(), decided: null };
    const { host } = fakeHost(state, () => {
      state.view = { ...state.view, status: 'rejected', decidedAt: at, outcome: { decision: 'rejected', decidedVia: 'extension', action: 'cancel' } };
      state.decided = { via: 'extension', at };
      return structured({ error: { code: 'already_decided', field: 'elicitationId', message: 'already decided in the browser extension' }, decided: { via: 'extension', at } }, true);
    });
    mount(host, withKey());
    await screen.findByRole('table', { name: 'Proposed changes' });
    fireEvent.click(button('Submit Changes'));
    expect((await screen.findByText(/^Decided in the browser extension at /)).textContent).toBe(`Decided in the browser extension at ${decidedTime(at)}. Your decision here was not used.`);
  });

  it('has one <h1> in every state: waiting, a review, a result in words, a failure, a cancelled call', async () => {
    const headingOne = () => screen.getAllByRole('heading', { level: 1 }).map((h) => h.textContent);
    const { host } = fakeHost({ view: northmarkView() });
    const { incoming } = mount(host, null);
    expect(headingOne()).toEqual(['Elicitly review']);
    incoming.set({ state: 'result', result: withKey() });
    await screen.findByRole('table', { name: 'Proposed changes' });
    expect(headingOne()).toEqual(['Elicitly review']);
    incoming.set({ state: 'result', result: structured({ action: 'accept', confirmed: true }) });
    await screen.findByText(/^Answered/);
    expect(headingOne()).toEqual(['Elicitly review']);
    incoming.set({ state: 'failed', message: 'the host gave up' });
    await screen.findByText('the host gave up');
    expect(headingOne()).toEqual(['Elicitly review']);
    incoming.set({ state: 'cancelled' });
    await screen.findByText(/^The tool call was canceled/);
    expect(headingOne()).toEqual(['Elicitly review']);
  });

  it('shows who decided and when for a request already decided when the view opens', async () => {
    const at = Date.now() - 60_000;
    const view = northmarkView({ status: 'approved', decidedAt: at, outcome: { decision: 'approved', decidedVia: 'extension', action: 'submit', values: {} } });
    const { host } = fakeHost({ view, decided: { via: 'extension', at } });
    mount(host, withKey());
    expect((await screen.findByText(/^Decided in the browser extension at /)).textContent).toBe(`Decided in the browser extension at ${decidedTime(at)}.`);
    expect(screen.queryByRole('button', { name: 'Submit Changes' })).toBeNull();
  });

  it('says when a paired phone decided first', async () => {
    const at = Date.now() - 60_000;
    const view = northmarkView({ status: 'approved', decidedAt: at, outcome: { decision: 'approved', decidedVia: 'phone', action: 'submit', values: {} } });
    const { host } = fakeHost({ view, decided: { via: 'phone', at } });
    mount(host, withKey());
    expect((await screen.findByText(/^Decided on a paired phone at /)).textContent).toBe(`Decided on a paired phone at ${decidedTime(at)}.`);
  });

  it('without a key (the host dropped result _meta) shows the request read-only and says where to decide', async () => {
    const { host, calls } = fakeHost({ view: northmarkView() });
    mount(host, { content: [{ type: 'text', text: 'pending' }], structuredContent: { elicitationId: ID, status: 'pending' } });
    expect(await screen.findByText(NO_KEY_NOTE)).toBeTruthy();
    expect(screen.getByRole('table', { name: 'Proposed values' })).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Submit Changes' })).toBeNull();
    expect(calls.map((c) => c.name)).toEqual(['elicit_app_view']);
  });

  it('says an ask the host answered in words, with the labels of the tool input, and reads or decides nothing', async () => {
    const { host, calls } = fakeHost({ view: northmarkView() });
    const { incoming, input } = mount(host, null);
    // The host sends the input first, then the result.
    input.set({ question: 'Delete the staging cluster?', yesLabel: 'Delete', noLabel: 'Keep' });
    incoming.set({ state: 'result', result: structured({ confirmed: false, action: 'accept', via: 'host' }) });
    expect(await screen.findByText('Answered in the chat: Keep.')).toBeTruthy();
    expect(screen.getByRole('heading', { name: 'Delete the staging cluster?' })).toBeTruthy();
    expect(document.querySelector('main')?.textContent).not.toContain('{');
    expect(calls).toHaveLength(0);
  });

  it('a result it cannot read: a neutral sentence, and what the tool returned as text behind a closed disclosure', async () => {
    const { host, calls } = fakeHost({ view: northmarkView() });
    mount(host, { content: [{ type: 'text', text: 'The person answered: <b>yes</b>' }] });
    expect(screen.getByText('The tool answered. There is nothing to decide here.')).toBeTruthy();
    const details = document.querySelector('details');
    expect(details?.open).toBe(false);
    expect(details?.querySelector('summary')?.textContent).toBe('Show what the tool returned');
    expect(details?.textContent).toContain('The person answered: <b>yes</b>');
    expect(document.querySelector('b')).toBeNull();
    expect(calls).toHaveLength(0);
  });

  it('elicit_app_view\'s result rendered as the view: the request read-only, who decided, nothing called', async () => {
    const at = Date.now() - 60_000;
    const { host, calls } = fakeHost({ view: northmarkView() });
    const view = northmarkView({ status: 'approved', decidedAt: at, outcome: { decision: 'approved', decidedVia: 'app', action: 'submit', values: {} } });
    const { incoming } = mount(host, structured({ view, decided: { via: 'app', at } }), undefined, { elicitationId: ID });
    expect(screen.getByRole('table', { name: 'Proposed values' })).toBeTruthy();
    expect(screen.getByText(`Decided in the chat at ${decidedTime(at)}.`)).toBeTruthy();
    expect(screen.queryByText(NO_KEY_NOTE)).toBeNull();
    incoming.set({ state: 'result', result: structured({ view: northmarkView(), decided: null }) });
    expect(await screen.findByText(NO_KEY_NOTE)).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Submit Changes' })).toBeNull();
    expect(calls).toHaveLength(0);
  });

  it('shows a failed tool call and a canceled one, with nothing to decide', async () => {
    const { host, calls } = fakeHost({ view: northmarkView() });
    const { incoming } = mount(host, { isError: true, content: [{ type: 'text', text: 'requestedSchema: is required' }] });
    expect(screen.getByRole('alert').textContent).toBe('requestedSchema: is required');
    incoming.set({ state: 'cancelled', reason: 'user stopped it' });
    expect(await screen.findByText('The tool call was canceled: user stopped it. There is nothing to decide.')).toBeTruthy();
    expect(calls).toHaveLength(0);
  });

  it('says where to decide a request this chat may not review', async () => {
    const { host } = fakeHost({ view: northmarkView() });
    host.callServerTool = (async () => structured({ error: { code: 'not_in_app', field: 'elicitationId', message: 'el_x was not created for review in this chat' } }, true)) as unknown as AppHost['callServerTool'];
    mount(host, withKey('el_x'));
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toBe('Decide this in the Elicitly browser extension: it was not made for review in this chat. (el_x was not created for review in this chat)');
    expect(screen.queryByRole('button', { name: 'Try again' })).toBeNull();
  });

  it('offers full screen only when the host does, and asks for it on request', async () => {
    const { host } = fakeHost({ view: northmarkView() });
    const { context } = mount(host, withKey(), { displayMode: 'inline', availableDisplayModes: ['inline'] });
    await screen.findByRole('table', { name: 'Proposed changes' });
    expect(screen.queryByRole('button', { name: 'Full screen' })).toBeNull();
    context.set({ displayMode: 'inline', availableDisplayModes: ['inline', 'fullscreen'] });
    fireEvent.click(await screen.findByRole('button', { name: 'Full screen' }));
    expect(host.requestDisplayMode).toHaveBeenCalledWith({ mode: 'fullscreen' });
  });
});

describe('host context', () => {
  it('applies the host theme, its variables and the display mode to <html>', () => {
    const root = document.documentElement;
    applyHostContext({ theme: 'dark', displayMode: 'fullscreen', styles: { variables: { '--color-background-primary': '#010203' } as never } });
    expect(root.dataset.theme).toBe('dark');
    expect(root.style.colorScheme).toBe('dark');
    expect(root.style.getPropertyValue('--color-background-primary')).toBe('#010203');
    expect(root.dataset.displayMode).toBe('fullscreen');
  });

  it.each([
    ['neither', {}, false],
    ['the text only', { '--color-text-inverse': '#ffffff' }, false],
    ['the background only', { '--color-background-inverse': '#1d4ed8' }, false],
    ['a blank background', { '--color-background-inverse': ' ', '--color-text-inverse': '#ffffff' }, false],
    ['both', { '--color-background-inverse': '#1d4ed8', '--color-text-inverse': '#ffffff' }, true],
  ] as const)('the primary button takes the host\'s inverse pair only whole: %s', (_what, variables, whole) => {
    const root = document.createElement('html');
    applyHostContext({ styles: { variables: variables as never } }, root);
    expect(root.hasAttribute('data-host-primary')).toBe(whole);
  });

  it('a context change that brings the second of the pair completes it, and one that blanks it takes it back', () => {
    const root = document.createElement('html');
    applyHostContext({ styles: { variables: { '--color-text-inverse': '#ffffff' } as never } }, root);
    expect(root.hasAttribute('data-host-primary')).toBe(false);
    applyHostContext({ styles: { variables: { '--color-background-inverse': '#1d4ed8' } as never } }, root);
    expect(root.hasAttribute('data-host-primary')).toBe(true);
    applyHostContext({ styles: { variables: { '--color-background-inverse': '' } as never } }, root);
    expect(root.hasAttribute('data-host-primary')).toBe(false);
  });

  it.each([
    ['no host context', undefined, true, null],
    ['a host without full screen', { availableDisplayModes: ['inline'] }, true, null],
    ['a pending review inline', { displayMode: 'inline', availableDisplayModes: ['inline', 'fullscreen'] }, true, 'fullscreen'],
    ['a decided review inline', { displayMode: 'inline', availableDisplayModes: ['inline', 'fullscreen'] }, false, null],
    ['a pending review full screen', { displayMode: 'fullscreen', availableDisplayModes: ['inline', 'fullscreen'] }, true, 'inline'],
    ['a review decided while full screen', { displayMode: 'fullscreen', availableDisplayModes: ['inline', 'fullscreen'] }, false, 'inline'],
  ] as const)('the full-screen toggle for %s', (_what, ctx, pending, offered) => {
    expect(fullscreenToggle(ctx as McpUiHostContext | undefined, pending)).toBe(offered);
  });
});

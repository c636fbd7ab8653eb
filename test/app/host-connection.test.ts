// The view's side of the MCP Apps protocol against a scripted host window: what it sends, and that nothing the host
// sends is used before it is checked. The real host (the SDK's AppBridge in Chromium) is test/e2e/app.test.ts.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { HostConnection, type HostEvents } from '../../app/host-connection.js';

type Sent = { jsonrpc: '2.0'; id?: number | string; method?: string; params?: Record<string, unknown>; result?: unknown; error?: { code: number; message: string } };

function scriptedHost() {
  const sent: Sent[] = [];
  const host = { postMessage: vi.fn((message: Sent) => sent.push(message)) };
  const deliver = (data: unknown, source: unknown = host) => window.dispatchEvent(new MessageEvent('message', { data, source: source as Window }));
  return { host: host as unknown as Window, sent, deliver };
}

const HOST_CONTEXT = { theme: 'dark', displayMode: 'inline', availableDisplayModes: ['inline', 'fullscreen'], locale: 'en-US' };

async function connected(events: HostEvents = {}) {
  const h = scriptedHost();
  const connection = new HostConnection({ name: 'elicitly-review', version: '1.2.3' }, { availableDisplayModes: ['inline', 'fullscreen'] }, events, h.host);
  const connecting = connection.connect();
  h.deliver({ jsonrpc: '2.0', id: 0, result: { protocolVersion: '2026-01-26', hostInfo: { name: 'host', version: '1' }, hostCapabilities: {}, hostContext: HOST_CONTEXT } });
  await connecting;
  return { ...h, connection };
}

afterEach(() => vi.useRealTimers());

describe('HostConnection', () => {
  it('initializes as the SDK does, then says initialized and reports its size; the host context is the one the host gave', async () => {
    const { sent, connection } = await connected();
    await vi.waitFor(() => expect(sent.some((m) => m.method === 'ui/notifications/size-changed')).toBe(true));
    expect(sent[0]).toEqual({
      jsonrpc: '2.0', id: 0, method: 'ui/initialize',
      params: { appCapabilities: { availableDisplayModes: ['inline', 'fullscreen'] }, appInfo: { name: 'elicitly-review', version: '1.2.3' }, protocolVersion: '2026-01-26' },
    });
    expect(sent[1]).toEqual({ jsonrpc: '2.0', method: 'ui/notifications/initialized' });
    expect(connection.getHostContext()).toEqual(HOST_CONTEXT);
  });

  it('an initialize answer not in shape, or an error, fails connect()', async () => {
    for (const answer of [{ result: { protocolVersion: '2026-01-26' } }, { error: { code: -32603, message: 'no' } }]) {
      const h = scriptedHost();
      const connecting = new HostConnection({ name: 'a', version: '1' }, {}, {}, h.host).connect();
      h.deliver({ jsonrpc: '2.0', id: 0, ...answer });
      await expect(connecting).rejects.toThrow(/Invalid result for ui\/initialize|no/);
    }
  });

  it('tool input, result and cancellation reach the view checked; a message not in shape, or not from the host, does not', async () => {
    const events = { toolInput: vi.fn(), toolResult: vi.fn(), toolCancelled: vi.fn(), hostContextChanged: vi.fn() };
    const { deliver, connection } = await connected(events);
    deliver({ jsonrpc: '2.0', method: 'ui/notifications/tool-input', params: { arguments: { question: 'Go?' } } });
    deliver({ jsonrpc: '2.0', method: 'ui/notifications/tool-result', params: { content: [{ type: 'text', text: 'hi' }], isError: 'yes' } });
    deliver({ jsonrpc: '2.0', method: 'ui/notifications/tool-result', params: { content: [{ type: 'text' }] } });
    deliver({ jsonrpc: '2.0', method: 'ui/notifications/tool-result', params: { structuredContent: { a: 1 } } }, window);
    deliver({ jsonrpc: '2.0', method: 'ui/notifications/tool-result', params: { structuredContent: { a: 1 } } });
    deliver({ jsonrpc: '2.0', method: 'ui/notifications/tool-cancelled', params: { reason: 'user action' } });
    deliver({ jsonrpc: '2.0', method: 'ui/notifications/host-context-changed', params: { theme: 'sepia' } });
    deliver({ jsonrpc: '2.0', method: 'ui/notifications/host-context-changed', params: { displayMode: 'fullscreen' } });
    deliver('not JSON-RPC');
    expect(events.toolInput).toHaveBeenCalledExactlyOnceWith({ question: 'Go?' });
    // The result the SDK would also take: content defaults to none.
    expect(events.toolResult).toHaveBeenCalledExactlyOnceWith({ content: [], structuredContent: { a: 1 } });
    expect(events.toolCancelled).toHaveBeenCalledExactlyOnceWith('user action');
    expect(events.hostContextChanged).toHaveBeenCalledOnce();
    expect(connection.getHostContext()).toEqual({ ...HOST_CONTEXT, displayMode: 'fullscreen' });
  });

  it('tools/call carries a progress token and resolves with the checked result; an error answer rejects with its message', async () => {
    const { sent, deliver, connection } = await connected();
    const call = connection.callServerTool({ name: 'elicit_app_view', arguments: { elicitationId: 'el_1' } });
    expect(sent.at(-1)).toEqual({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'elicit_app_view', arguments: { elicitationId: 'el_1' }, _meta: { progressToken: 1 } } });
    deliver({ jsonrpc: '2.0', id: 1, result: { content: [], structuredContent: { ok: true }, isError: false } });
    await expect(call).resolves.toEqual({ content: [], structuredContent: { ok: true }, isError: false });

    const refused = connection.callServerTool({ name: 'elicit_status' });
    deliver({ jsonrpc: '2.0', id: 2, error: { code: -32603, message: 'tool elicit_status is not callable by the app' } });
    await expect(refused).rejects.toThrow('tool elicit_status is not callable by the app');
  });

  it('a request unanswered for a minute fails and is cancelled; progress on a tool call restarts its minute', async () => {
    vi.useFakeTimers();
    const { sent, deliver, connection } = await connected();
    const call = connection.callServerTool({ name: 'elicit_app_decide' });
    const settled = vi.fn();
    call.then(settled, settled);
    await vi.advanceTimersByTimeAsync(50_000);
    deliver({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } });
    await vi.advanceTimersByTimeAsync(50_000);
    expect(settled).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(10_000);
    await expect(call).rejects.toThrow('Request timed out');
    expect(sent.at(-1)).toEqual({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, reason: 'Request timed out' } });

    const mode = connection.requestDisplayMode({ mode: 'fullscreen' });
    deliver({ jsonrpc: '2.0', id: 2, result: { mode: 'inline' } });
    await expect(mode).resolves.toEqual({ mode: 'inline' });
  });

  it('answers the host\'s ping; any other request is a method it does not have', async () => {
    const { sent, deliver } = await connected();
    deliver({ jsonrpc: '2.0', id: 'p1', method: 'ping' });
    deliver({ jsonrpc: '2.0', id: 7, method: 'ui/resource-teardown', params: {} });
    expect(sent.filter((m) => m.id === 'p1' || m.id === 7)).toEqual([
      { jsonrpc: '2.0', id: 'p1', result: {} },
      { jsonrpc: '2.0', id: 7, error: { code: -32601, message: 'Method not found' } },
    ]);
  });
});

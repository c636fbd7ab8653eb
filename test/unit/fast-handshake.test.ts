// The first answers before the SDK loads (server/mcp/fast-handshake.ts): what is recognised (only whole, ordinary
// handshakes; anything the SDK could answer otherwise is left to it), what is handed over and in which order, and when
// the SDK is told to load. The answers against the SDK's own are compared in test/integration/handshake-conformance.test.ts.
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { declaresAppUi } from '../../shared/app-capability.js';
import { FastHandshake, plainCapabilities, plainClientInfo, recognise, type HandshakeIndex, type RecordedAnswer } from '../../server/mcp/fast-handshake.js';
import { StdioTapTransport } from '../../server/mcp/stdio-tap-transport.js';
import { fastStart } from '../../server/start-options.js';
import { setLogLevel } from '../../server/log.js';

const INDEX: HandshakeIndex = {
  format: 1,
  legacy: {
    '2025-11-25': { plain: { initialize: 0, 'tools/list': 1, ping: 2 }, apps: { initialize: 3, 'tools/list': 4, ping: 2 } },
    '2025-06-18': { plain: { initialize: 5, 'tools/list': 1 }, apps: { initialize: 5, 'tools/list': 4 } },
  },
  modern: { '2026-07-28': { plain: { 'server/discover': 6, 'tools/list': 7 }, apps: { 'server/discover': 6, 'tools/list': 8 } } },
};
const ANSWERS: RecordedAnswer[] = Array.from({ length: 9 }, (_, n) => [`{"result":{"n":${n}},"jsonrpc":"2.0","id":`, '}']);
const APPS = { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } } };
const INFO = { name: 'host', version: '1.0' };
const init = (params: Record<string, unknown> = {}, id: unknown = 0) => ({ jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: INFO, ...params } });
const envelope = (extra: Record<string, unknown> = {}, capabilities: unknown = {}) => ({
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': INFO,
  'io.modelcontextprotocol/clientCapabilities': capabilities,
  ...extra,
});
/** An object nested `levels` deep, built without recursion. */
function nested(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let i = 0; i < levels; i++) value = { a: value };
  return value;
}
const LEGACY = { era: 'legacy', version: '2025-11-25', apps: false } as const;
const MODERN = { era: 'modern', version: '2026-07-28', apps: false } as const;

describe('recognise', () => {
  const cases: [string, unknown, typeof LEGACY | typeof MODERN | null, string | null][] = [
    ['a plain initialize', init(), null, 'legacy/2025-11-25/plain/initialize'],
    ['an initialize from a client that renders apps', init({ capabilities: APPS }), null, 'legacy/2025-11-25/apps/initialize'],
    ['a string id', init({}, 'a'), null, 'legacy/2025-11-25/plain/initialize'],
    ['an older version it recorded', init({ protocolVersion: '2025-06-18' }), null, 'legacy/2025-06-18/plain/initialize'],
    ['a version it did not record', init({ protocolVersion: '2024-01-01' }), null, null],
    ['a fractional id', init({}, 1.5), null, null],
    ['a null id', init({}, null), null, null],
    ['no id (a notification)', { jsonrpc: '2.0', method: 'initialize', params: init().params }, null, null],
    ['an id of the replays', init({}, 'elicitly-fast-handshake-0'), null, null],
    ['a field beside the four', { ...init(), extra: 1 }, null, null],
    ['jsonrpc 1.0', { ...init(), jsonrpc: '1.0' }, null, null],
    ['_meta on initialize', init({ _meta: { progressToken: 1 } }), null, null],
    ['capabilities missing', { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', clientInfo: INFO } }, null, null],
    ['clientInfo without a version', init({ clientInfo: { name: 'x' } }), null, null],
    ['clientInfo with icons', init({ clientInfo: { ...INFO, icons: [] } }), null, null],
    ['a second initialize', init(), LEGACY, null],
    ['tools/list after initialize', { jsonrpc: '2.0', id: 1, method: 'tools/list' }, LEGACY, 'legacy/2025-11-25/plain/tools/list'],
    ['tools/list with empty params', { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }, LEGACY, 'legacy/2025-11-25/plain/tools/list'],
    ['tools/list with a progress token (Codex)', { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: { progressToken: 0 } } }, LEGACY, 'legacy/2025-11-25/plain/tools/list'],
    ['tools/list with a cursor', { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { cursor: 'x' } }, LEGACY, null],
    ['tools/list with other _meta', { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: { trace: 1 } } }, LEGACY, null],
    ['tools/list before any initialize', { jsonrpc: '2.0', id: 1, method: 'tools/list' }, null, null],
    ['tools/call', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x' } }, LEGACY, null],
    ['a 2026 discover', { jsonrpc: '2.0', id: 'd', method: 'server/discover', params: { _meta: envelope() } }, null, 'modern/2026-07-28/plain/server/discover'],
    ['a 2026 tools/list with a progress token (Copilot CLI)', { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope({ progressToken: 0 }) } }, MODERN, 'modern/2026-07-28/plain/tools/list'],
    ['a 2026 tools/list from a client that renders apps', { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope({}, APPS) } }, null, 'modern/2026-07-28/apps/tools/list'],
    ['a 2026 request whose surface differs from the first', { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope({}, APPS) } }, MODERN, null],
    ['a 2026 request after a 2025 initialize', { jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: envelope() } }, LEGACY, null],
    ['a 2026 envelope without clientInfo', { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: { ...envelope(), 'io.modelcontextprotocol/clientInfo': undefined } } }, null, null],
    ['a 2026 envelope with a log level', { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope({ 'io.modelcontextprotocol/logLevel': 'info' }) } }, null, null],
    ['a 2026 envelope of another revision', { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope({ 'io.modelcontextprotocol/protocolVersion': '2027-01-01' }) } }, null, null],
    ['a 2026 tools/list with a cursor', { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope(), cursor: 'x' } }, null, null],
    ['not an object', [init()], null, null],
    // params › capabilities › experimental › x, then the nesting: its innermost object at depth 3 + n.
    ['params nesting to depth 16', init({ capabilities: { experimental: { x: nested(13) } } }), null, null],
    ['params nesting to depth 15', init({ capabilities: { experimental: { x: nested(12) } } }), null, 'legacy/2025-11-25/plain/initialize'],
    ['clientInfo 100,000 levels deep', init({ clientInfo: { ...INFO, extra: nested(100_000) } }), null, null],
  ];
  it.each(cases)('%s', (_name, message, pinned, expected) => {
    const found = recognise(message, INDEX, true, pinned);
    expect(found === null ? null : `${found.era}/${found.version}/${found.apps ? 'apps' : 'plain'}/${found.method}`).toBe(expected);
  });

  it('offers the apps only where this process may (not a relay): the same request is plain then', () => {
    expect(recognise(init({ capabilities: APPS }), INDEX, false, null)?.apps).toBe(false);
  });
});

describe('plainCapabilities and plainClientInfo: accepted only where the SDK accepts too', () => {
  it.each([
    [{}, true],
    [{ elicitation: { form: {}, url: {} }, roots: { listChanged: true }, sampling: {} }, true],
    [{ experimental: { 'codex/auth-change': {} } }, true],
    [APPS, true],
    [{ elicitation: { form: { applyDefaults: true } } }, true],
    [{ elicitation: { form: { applyDefaults: 'yes' } } }, false],
    [{ elicitation: { form: [] } }, false],
    [{ roots: { listChanged: 'true' } }, false],
    [{ experimental: { x: 1 } }, false],
    [{ extensions: { x: [] } }, false],
    [{ sampling: { tools: true } }, false],
    [{ tasks: {} }, false],
    [{ elicitation: null }, false],
    [[], false],
    [null, false],
  ])('%j → %s', (capabilities, ok) => expect(plainCapabilities(capabilities)).toBe(ok));

  it.each([
    [INFO, true],
    [{ name: 'claude-code', title: 'Claude Code', version: '2.1.332', description: 'd', websiteUrl: 'https://claude.com' }, true],
    [{ name: 'x', version: 1 }, false],
    [{ name: 'x', version: '1', title: 5 }, false],
    [{ version: '1' }, false],
    ['x', false],
  ])('%j → %s', (info, ok) => expect(plainClientInfo(info)).toBe(ok));
});

describe('declaresAppUi', () => {
  it.each([
    [APPS, true],
    [{ extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html', 'text/html;profile=mcp-app'] } } }, true],
    [{ extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html'] } } }, false],
    [{ extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app', 3] } } }, false],
    [{ extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: 'text/html;profile=mcp-app' } } }, false],
    [{ extensions: { 'io.modelcontextprotocol/ui': [] } }, false],
    [{ extensions: [] }, false],
    [{}, false],
    [undefined, false],
  ])('%j → %s', (capabilities, ok) => expect(declaresAppUi(capabilities)).toBe(ok));
});

describe('fastStart', () => {
  it.each([
    [[], {}, { appSurface: true }],
    [['--port', '4100'], {}, { appSurface: true }],
    [['--port=4100'], {}, { appSurface: true }],
    [[], { ELICITLY_HUB_URL: 'wss://x' }, { appSurface: false }],
    [[], { ELICITLY_HUB_KEY: 'k' }, { appSurface: false }],
    [[], { ELICITLY_HUB_URL: ' ' }, { appSurface: true }],
    [[], { ELICITLY_FAST_HANDSHAKE: '0' }, undefined],
    [['hub'], {}, undefined],
    [['--port'], {}, undefined],
    [['--port', 'x'], {}, undefined],
    [['--help'], {}, undefined],
  ])('%j %j → %j', (argv, env, expected) => expect(fastStart(argv, env)).toEqual(expected));
});

describe('FastHandshake', () => {
  afterEach(() => vi.useRealTimers());

  function started(answers: (n: number) => RecordedAnswer | undefined = (n) => ANSWERS[n]) {
    const input = new PassThrough();
    const output = new PassThrough();
    const written: string[] = [];
    output.on('data', (chunk: Buffer) => written.push(...chunk.toString().split('\n').filter(Boolean)));
    let loads = 0;
    let settles = 0;
    const handshake = new FastHandshake({ input, output, answers: INDEX, answer: answers, appSurface: true, load: () => loads++, settled: () => settles++ });
    const send = (...messages: unknown[]) => input.write(messages.map((m) => `${typeof m === 'string' ? m : JSON.stringify(m)}\n`).join(''));
    return { input, handshake, written, send, loads: () => loads, settles: () => settles };
  }
  const flush = () => new Promise((resolve) => setImmediate(resolve));

  it('answers initialize and the lists with the recorded answers under their ids, and hands the SDK replays and the rest in order', async () => {
    const { handshake, written, send, loads } = started();
    send(init({}, 7), { jsonrpc: '2.0', method: 'notifications/initialized' }, { jsonrpc: '2.0', id: 'L', method: 'tools/list' });
    await flush();
    expect(written).toEqual(['{"result":{"n":0},"jsonrpc":"2.0","id":7}', '{"result":{"n":1},"jsonrpc":"2.0","id":"L"}']);
    expect(loads()).toBe(0);
    const opening = handshake.handOver();
    expect(opening.answered).toEqual(['initialize', 'tools/list']);
    expect(opening.lines.map((l) => JSON.parse(l) as { id?: unknown; method: string })).toEqual([
      { ...init({}, 'elicitly-fast-handshake-0') },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 'elicitly-fast-handshake-1', method: 'tools/list' },
    ]);
    expect([...opening.replays]).toEqual([['elicitly-fast-handshake-0', ANSWERS[0]], ['elicitly-fast-handshake-1', ANSWERS[1]]]);
    expect(() => handshake.handOver()).toThrow(/handed over already/);
  });

  it('stops answering at the first message it does not recognise, and asks for the SDK at once; a partial line is handed over', async () => {
    const { handshake, written, send, input, loads } = started();
    send(init(), { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'elicit_status' } }, { jsonrpc: '2.0', id: 2, method: 'tools/list' });
    input.write('{"jsonrpc":"2.0","id":3,');
    await flush();
    expect(written).toHaveLength(1);
    expect(loads()).toBe(1);
    const opening = handshake.handOver();
    expect(opening.lines.slice(1).map((l) => (JSON.parse(l) as { method: string }).method)).toEqual(['tools/call', 'tools/list']);
    expect(opening.rest).toBe('{"jsonrpc":"2.0","id":3,');
  });

  it('leaves a line that is not JSON, and an answer it cannot read, to the SDK', async () => {
    const unreadable = started(() => undefined);
    unreadable.send(init());
    await flush();
    expect(unreadable.written).toEqual([]);
    expect(unreadable.loads()).toBe(1);
    expect(unreadable.handshake.handOver().lines).toEqual([JSON.stringify(init())]);

    const garbled = started();
    garbled.send('{not json');
    await flush();
    expect(garbled.written).toEqual([]);
    expect(garbled.handshake.handOver().lines).toEqual(['{not json']);
  });

  it('does not ask for the SDK while only the handshake comes, however long; asks when the input ends (handed over)', async () => {
    vi.useFakeTimers();
    const idle = started();
    idle.send(init(), { jsonrpc: '2.0', method: 'notifications/initialized' }, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { jsonrpc: '2.0', id: 2, method: 'ping' });
    await vi.advanceTimersByTimeAsync(60_000);
    expect(idle.written).toHaveLength(3);
    expect(idle.loads()).toBe(0);
    idle.input.end();
    await vi.advanceTimersByTimeAsync(0);
    expect(idle.loads()).toBe(1);
    expect(idle.handshake.handOver().ended).toBe(true);
  });

  it('says once when the handshake has settled: 10 ms after the last answer, or 250 ms without a first message; not once loading', async () => {
    vi.useFakeTimers();
    const answered = started();
    answered.send(init());
    await vi.advanceTimersByTimeAsync(9);
    answered.send({ jsonrpc: '2.0', method: 'notifications/initialized' }, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    await vi.advanceTimersByTimeAsync(9);
    expect(answered.settles()).toBe(0);
    await vi.advanceTimersByTimeAsync(2);
    expect(answered.settles()).toBe(1);
    answered.send({ jsonrpc: '2.0', id: 2, method: 'ping' });
    await vi.advanceTimersByTimeAsync(1000);
    expect(answered.settles()).toBe(1);
    expect(answered.loads()).toBe(0);

    const silent = started();
    await vi.advanceTimersByTimeAsync(249);
    expect(silent.settles()).toBe(0);
    await vi.advanceTimersByTimeAsync(2);
    expect(silent.settles()).toBe(1);

    const called = started();
    called.send(init(), { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'elicit_status' } });
    await vi.advanceTimersByTimeAsync(1000);
    expect(called.loads()).toBe(1);
    expect(called.settles()).toBe(0);
  });

  it('asks for the SDK past 64 notifications held for it, and when stdout fails', async () => {
    const chatty = started();
    chatty.send(init());
    for (let i = 0; i < 64; i++) chatty.send({ jsonrpc: '2.0', method: 'notifications/roots/list_changed' });
    await flush();
    expect(chatty.loads()).toBe(0);
    chatty.send({ jsonrpc: '2.0', method: 'notifications/roots/list_changed' }, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    await flush();
    expect(chatty.loads()).toBe(1);
    // Held, not answered: the SDK answers the list after the notifications, in order.
    expect(chatty.written).toHaveLength(1);
    expect(chatty.handshake.handOver().lines).toHaveLength(67);

    const input = new PassThrough();
    const output = new PassThrough();
    let loads = 0;
    const handshake = new FastHandshake({ input, output, answers: INDEX, answer: (n) => ANSWERS[n], appSurface: true, load: () => loads++ });
    output.emit('error', new Error('EPIPE'));
    expect(loads).toBe(1);
    expect(handshake.handOver().ended).toBe(true);
  });
});

describe('StdioTapTransport given an opening', () => {
  it('handles the opening first, then new input; swallows the replays’ answers, and says when one differs from what was sent', async () => {
    setLogLevel('error');
    const errors: string[] = [];
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation((line) => (errors.push(String(line)), true));
    const input = new PassThrough();
    const output = new PassThrough();
    const written: string[] = [];
    output.on('data', (chunk: Buffer) => written.push(chunk.toString()));
    input.pause();
    const replays = new Map<string, RecordedAnswer>([['elicitly-fast-handshake-0', ['{"jsonrpc":"2.0","id":', ',"result":{}}']], ['elicitly-fast-handshake-1', ['{"jsonrpc":"2.0","id":', ',"result":{"tools":[]}}']]]);
    const opening = { lines: [JSON.stringify(init({}, 'elicitly-fast-handshake-0')), '{"jsonrpc":"2.0","method":"notifications/initialized"}'], rest: '{"jsonrpc":"2.0",', replays, ended: false, answered: ['initialize'] };
    const transport = new StdioTapTransport(input, output, undefined, opening);
    const seen: JSONRPCMessage[] = [];
    transport.onmessage = (message) => seen.push(message);
    await transport.start();
    input.write('"id":5,"method":"ping"}\n');
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen.map((m) => ('method' in m ? m.method : ''))).toEqual(['initialize', 'notifications/initialized', 'ping']);
    expect(transport.initialize?.clientInfo).toEqual(INFO);

    await transport.send({ jsonrpc: '2.0', id: 'elicitly-fast-handshake-0', result: {} });
    await transport.send({ jsonrpc: '2.0', id: 'elicitly-fast-handshake-1', result: { tools: [{ name: 'x' }] } as never });
    await transport.send({ jsonrpc: '2.0', id: 5, result: {} });
    expect(written).toEqual(['{"jsonrpc":"2.0","id":5,"result":{}}\n']);
    expect(errors.join('')).toMatch(/answered a handshake request differently/);
    expect(errors).toHaveLength(1);
    stderr.mockRestore();
    await transport.close();
  });

  it('closes when the input had ended before it took over', async () => {
    const input = new PassThrough();
    const transport = new StdioTapTransport(input, new PassThrough(), undefined, { lines: [], rest: '', replays: new Map(), ended: true, answered: [] });
    let closed = false;
    transport.onclose = () => (closed = true);
    await transport.start();
    expect(closed).toBe(true);
  });
});

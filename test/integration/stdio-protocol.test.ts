import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { APP_MIME_TYPE, UI_EXTENSION } from '../../shared/app-capability.js';
import { CLIENT_KINDS, SERVER_ENTRY, connect } from '../helpers/mcp-harness.js';
import { freePort } from '../helpers/scripted-extension.js';

describe('tools/list', () => {
  it.each(CLIENT_KINDS)('lists the tools alphabetically with 2020-12 input schemas (%s)', async (kind) => {
    const h = await connect(kind);
    try {
      const tools = await h.listTools();
      const names = tools.map((t) => t.name);
      expect(names).toEqual([...names].sort());
      expect(names).toEqual(expect.arrayContaining(['elicit_confirm', 'elicit_doctor', 'elicit_form']));
      for (const tool of tools) {
        expect(tool.inputSchema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
        // anyOf the tool's result and its refusal, each loose; `type: "object"` at the root, which the v1 client requires.
        const output = tool.outputSchema as { type?: string; anyOf?: { additionalProperties?: unknown }[] } | undefined;
        expect(output?.type).toBe('object');
        expect(output?.anyOf?.length).toBeGreaterThanOrEqual(2);
        for (const branch of output?.anyOf ?? []) expect(branch.additionalProperties).not.toBe(false);
      }
    } finally {
      await h.close();
    }
  });

  // The bundle lists tools from JSON computed at build time (scripts/build-server.mjs), not from the definitions: the
  // two must say the same, with and without the app (whose tools and _meta differ).
  const apps = { extensions: { [UI_EXTENSION]: { mimeTypes: [APP_MIME_TYPE] } } };
  it.each([['without', {}], ['with', apps]])('the built server lists exactly what the tool definitions list (%s the app)', async (_, capabilities) => {
    const listed = async (inProcess: boolean) => {
      const h = await connect('v2-2025', { inProcess, capabilities });
      try {
        return await h.listTools();
      } finally {
        await h.close();
      }
    };
    const [built, source] = [await listed(false), await listed(true)];
    expect(built.length).toBeGreaterThanOrEqual(10);
    expect(built).toEqual(source);
  });
});

describe('raw stdio', () => {
  const child = spawn(process.execPath, [SERVER_ENTRY], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ELICITLY_LOG_LEVEL: 'error' } });
  const lines: unknown[] = [];
  const waiters: (() => void)[] = [];
  createInterface({ input: child.stdout }).on('line', (line) => {
    lines.push(JSON.parse(line));
    waiters.splice(0).forEach((wake) => wake());
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    waiters.splice(0).forEach((wake) => wake());
  });
  afterAll(() => {
    child.kill();
  });

  /** Resolves once stderr matches `pattern`, within 5 s. */
  async function stderrMatches(pattern: RegExp): Promise<void> {
    const deadline = Date.now() + 5000;
    while (!pattern.test(stderr)) {
      if (Date.now() > deadline) throw new Error(`stderr did not match ${pattern} within 5 s: ${stderr}`);
      await new Promise<void>((resolve) => {
        waiters.push(resolve);
        setTimeout(resolve, 100);
      });
    }
  }

  async function next(): Promise<Record<string, unknown>> {
    const deadline = Date.now() + 5000;
    while (lines.length === 0) {
      if (Date.now() > deadline) throw new Error('no answer on stdout within 5 s');
      await new Promise<void>((resolve) => {
        waiters.push(resolve);
        setTimeout(resolve, 100);
      });
    }
    return lines.shift() as Record<string, unknown>;
  }
  const send = (text: string) => child.stdin.write(`${text}\n`);

  it('prints a one-line hint on stderr and nothing on stdout before a request', async () => {
    await stderrMatches(/elicitly-companion .*MCP server on stdio.*claude mcp add/);
    expect(lines).toHaveLength(0);
    // stdout is one ordered stream: if the first line on it answers this ping, nothing was printed before the request.
    send('{"jsonrpc":"2.0","id":0,"method":"ping"}');
    expect(await next()).toEqual({ jsonrpc: '2.0', id: 0, result: {} });
  });

  it('answers unparseable JSON with a parse error and keeps serving', async () => {
    send('{"jsonrpc": "2.0", "id": 1, "method": ');
    expect(await next()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
    send('{"hello": "world", "id": 7}');
    expect(await next()).toMatchObject({ id: 7, error: { code: -32600 } });
    send(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
      }),
    );
    expect(await next()).toMatchObject({ id: 2, result: { protocolVersion: '2025-06-18', serverInfo: { name: 'elicitly' } } });
    send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    send(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'elicit_doctor', arguments: {} } }));
    const doctor = await next();
    expect(doctor).toMatchObject({ id: 3, result: { structuredContent: { era: '2025', initialize: { request: { protocolVersion: '2025-06-18' } } } } });
  });
});

/** A server spawned for one test, spoken to line by line: a crash shows as `exited` instead of an answer. */
function rawServer() {
  const stateDir = mkdtempSync(join(tmpdir(), 'elicitly-raw-'));
  const child = spawn(process.execPath, [SERVER_ENTRY], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, ELICITLY_LOG_LEVEL: 'error', ELICITLY_STATE_DIR: stateDir, ELICITLY_PORT: String(freePort()) },
  });
  const lines: Record<string, unknown>[] = [];
  const waiters: (() => void)[] = [];
  const wake = () => waiters.splice(0).forEach((resolve) => resolve());
  let exited: string | null = null;
  let stderr = '';
  child.on('exit', (code, signal) => {
    exited = `exited with ${code ?? signal}`;
    wake();
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  createInterface({ input: child.stdout }).on('line', (line) => {
    lines.push(JSON.parse(line) as Record<string, unknown>);
    wake();
  });
  // A dead child's stdin errors (EPIPE) on the next write; the test reads the exit instead.
  child.stdin.on('error', () => undefined);
  return {
    send: (text: string) => child.stdin.write(`${text}\n`),
    /** The answer to `id`, within 10 s; a process that exits first fails the test with its stderr. */
    async answer(id: number): Promise<Record<string, unknown>> {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const index = lines.findIndex((line) => line.id === id);
        if (index !== -1) return lines.splice(index, 1)[0] as Record<string, unknown>;
        if (exited !== null) throw new Error(`the server ${exited} before answering ${id}: ${stderr.slice(-2000)}`);
        if (Date.now() > deadline) throw new Error(`no answer to ${id} within 10 s`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 100);
        });
      }
    },
    alive: () => exited === null,
    close() {
      child.kill();
      rmSync(stateDir, { recursive: true, force: true });
    },
  };
}

/** `{"a":{"a":…1…}}`, `levels` deep, built as text: no JSON.stringify (which recurses) on the sending side. */
const nested = (levels: number): string => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
const DEEP = 100_000;
const initialize = (id: number, params: string) => `{"jsonrpc":"2.0","id":${id},"method":"initialize","params":${params}}`;
const plainInitialize = (id: number) =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } } });

describe('deeply nested input', () => {
  const servers: ReturnType<typeof rawServer>[] = [];
  afterEach(() => {
    for (const server of servers.splice(0)) server.close();
  });
  const start = () => {
    const server = rawServer();
    servers.push(server);
    return server;
  };

  it.each([
    ['capabilities', `{"protocolVersion":"2025-06-18","capabilities":{"elicitation":{"form":{}},"x":${nested(DEEP)}},"clientInfo":{"name":"deep","version":"0"}}`],
    ['clientInfo', `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"deep","version":"0","x":${nested(DEEP)}}}`],
    ['protocolVersion', `{"protocolVersion":${nested(DEEP)},"capabilities":{},"clientInfo":{"name":"deep","version":"0"}}`],
  ])('finding 14: an initialize with %s nested 100,000 levels deep is answered and the server keeps serving', async (_where, params) => {
    const server = start();
    server.send(initialize(1, params));
    // Accepted or refused: either is an answer, and the process is still there to give the next one.
    expect(await server.answer(1)).toMatchObject({ jsonrpc: '2.0', id: 1 });
    server.send(plainInitialize(2));
    expect(await server.answer(2)).toMatchObject({ id: 2, result: { serverInfo: { name: 'elicitly' } } });
    server.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    server.send(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list', params: {} }));
    expect(await server.answer(3)).toMatchObject({ id: 3, result: { tools: expect.arrayContaining([expect.objectContaining({ name: 'elicit_doctor' })]) } });
    server.send(JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'elicit_doctor', arguments: {} } }));
    const doctor = await server.answer(4);
    expect(doctor).toMatchObject({ id: 4, result: { structuredContent: { era: '2025' } } });
    expect(server.alive()).toBe(true);
  });

  it('finding 14: the doctor echoes a deep initialize cut at a bounded depth, with a marker', async () => {
    const server = start();
    server.send(initialize(1, `{"protocolVersion":"2025-06-18","capabilities":{"elicitation":{"form":{}},"x":${nested(DEEP)}},"clientInfo":{"name":"deep","version":"0"}}`));
    expect(await server.answer(1)).toMatchObject({ id: 1, result: { protocolVersion: '2025-06-18' } });
    server.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    server.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'elicit_doctor', arguments: { share: true } } }));
    const answer = await server.answer(2);
    const report = (answer.result as { structuredContent: Record<string, Record<string, unknown>> }).structuredContent;
    expect(report.initialize?.truncated).toMatch(/levels/);
    expect(JSON.stringify(report.initialize?.request)).toContain('…[cut]');
    // What the client declared outside the deep branch still counts.
    expect(report.support).toMatchObject({ elicitation: true, elicitationForm: true });
    expect(report.shared).toBe(true);
  });

  it('finding 14: a 2026-style request whose _meta client capabilities nest 100,000 levels deep is answered and the server keeps serving', async () => {
    const server = start();
    const meta = `{"io.modelcontextprotocol/clientCapabilities":${nested(DEEP)}}`;
    server.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":${meta}}}`);
    expect(await server.answer(1)).toMatchObject({ jsonrpc: '2.0', id: 1 });
    server.send(plainInitialize(2));
    expect(await server.answer(2)).toMatchObject({ id: 2, result: { serverInfo: { name: 'elicitly' } } });
    server.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    server.send(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list', params: {} }));
    expect(await server.answer(3)).toMatchObject({ id: 3, result: { tools: expect.any(Array) } });
    expect(server.alive()).toBe(true);
  });
});

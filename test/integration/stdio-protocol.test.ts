import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { CLIENT_KINDS, SERVER_ENTRY, connect } from '../helpers/mcp-harness.js';

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
        expect(tool.outputSchema?.additionalProperties).not.toBe(false);
      }
    } finally {
      await h.close();
    }
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
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  afterAll(() => {
    child.kill();
  });

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
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(lines).toHaveLength(0);
    expect(stderr).toMatch(/elicitly-companion .*MCP server on stdio.*claude mcp add/);
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

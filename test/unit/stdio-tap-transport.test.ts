// The transport says once when the server's start is over (the first request after the handshake answered: a host's
// tools/list, or a first tools/call), which is when the server lets V8's young generation grow again
// (young-generation.ts): not at the initialize answer or a ping's, not twice.
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { StdioTapTransport } from '../../server/mcp/stdio-tap-transport.js';

describe('StdioTapTransport onStarted', () => {
  it('fires once, when the response to the first request after the handshake is sent', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    let started = 0;
    const transport = new StdioTapTransport(input, output, () => started++);
    const seen: JSONRPCMessage[] = [];
    transport.onmessage = (message) => seen.push(message);
    await transport.start();
    const line = (message: Record<string, unknown>) => input.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
    line({ id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '0' } } });
    line({ id: 2, method: 'ping' });
    line({ id: 7, method: 'tools/list' });
    line({ id: 8, method: 'tools/call', params: { name: 'elicit_status', arguments: {} } });
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen.map((m) => ('method' in m ? m.method : ''))).toEqual(['initialize', 'ping', 'tools/list', 'tools/call']);

    await transport.send({ jsonrpc: '2.0', id: 1, result: {} });
    await transport.send({ jsonrpc: '2.0', id: 2, result: {} });
    expect(started).toBe(0);
    // A notification or a request of the server's own with the same id is not the answer.
    await transport.send({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'x' } });
    await transport.send({ jsonrpc: '2.0', id: 7, method: 'ping' });
    expect(started).toBe(0);
    await transport.send({ jsonrpc: '2.0', id: 7, result: { tools: [] } });
    expect(started).toBe(1);
    await transport.send({ jsonrpc: '2.0', id: 8, result: { tools: [] } });
    expect(started).toBe(1);
    await transport.close();
  });
});

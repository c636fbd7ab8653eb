import { PassThrough, type Readable, type Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { JSONRPCMessage } from '@modelcontextprotocol/client';
import { parseConfig } from '../../server/config.js';
import { setLogLevel } from '../../server/log.js';
import { StdioTapTransport } from '../../server/mcp/stdio-tap-transport.js';
import { serveMcp } from '../../server/serve-mcp.js';
import { StateDir } from '../../server/state-dir.js';

/** The built files the server reads on demand, where `npm run build:server` puts them (the global setup checks). */
const BUILT = {
  appHtml: fileURLToPath(new URL('../../dist/server/review-app.html', import.meta.url)),
  phoneDir: fileURLToPath(new URL('../../dist/server/phone/', import.meta.url)),
};

/** The client's end of the pipe pair: newline-delimited JSON-RPC, as the stdio client transports speak it. */
class StreamClientTransport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private buffer = '';

  constructor(
    private readonly input: Readable,
    private readonly output: Writable,
  ) {}

  async start(): Promise<void> {
    this.input.setEncoding('utf8');
    this.input.on('data', (chunk: string) => {
      this.buffer += chunk;
      for (let newline = this.buffer.indexOf('\n'); newline !== -1; newline = this.buffer.indexOf('\n')) {
        const line = this.buffer.slice(0, newline);
        this.buffer = this.buffer.slice(newline + 1);
        try {
          this.onmessage?.(JSON.parse(line) as JSONRPCMessage);
        } catch (error) {
          this.onerror?.(error instanceof Error ? error : new Error(String(error)));
        }
      }
    });
    this.input.once('end', () => this.onclose?.());
  }

  async send(message: JSONRPCMessage): Promise<void> {
    this.output.write(`${JSON.stringify(message)}\n`);
  }

  async close(): Promise<void> {
    this.output.end();
  }
}

/**
 * The MCP server served in this process, as `main.ts` serves it on stdio: the configuration parsed from `env` the same
 * way, the server's stdio transport over two in-memory pipes. A refused configuration throws with the server's issues.
 */
export function serveInProcess(env: Record<string, string>): { transport: StreamClientTransport; close: () => Promise<void> } {
  const parsed = parseConfig([], env);
  if (!parsed.ok) throw new Error(`the server would not start: ${parsed.issues.join('; ')}`);
  setLogLevel(parsed.config.logLevel);
  const toServer = new PassThrough();
  const toClient = new PassThrough();
  const serving = serveMcp(parsed.config, new StateDir(parsed.config.stateDir), new StdioTapTransport(toServer, toClient), BUILT);
  return {
    transport: new StreamClientTransport(toClient, toServer),
    async close() {
      toServer.end();
      await serving.close();
      toClient.end();
    },
  };
}

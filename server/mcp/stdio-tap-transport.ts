import type { Readable, Writable } from 'node:stream';
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/server';
import { CLIENT_CAPABILITIES_META_KEY, parseJSONRPCMessage, serializeMessage } from '@modelcontextprotocol/server';
import { log } from '../log.js';
import { boundedJson } from './bounded-json.js';
import type { Opening } from './fast-handshake.js';
import { takeLines } from './stdio-lines.js';

/** What the host sent in `initialize`, before the SDK normalizes it (the doctor echoes it), cut only at KEPT_BOUNDS depth. */
export interface InitializeCapture {
  protocolVersion?: unknown;
  clientInfo?: unknown;
  capabilities?: unknown;
}

const MAX_LINE_BYTES = 10 * 1024 * 1024;

/** The requests of the handshake (2025's initialize, 2026-07-28's discovery) and pings: not yet the server's work. */
const HANDSHAKE = new Set(['initialize', 'server/discover', 'ping']);

/**
 * What is kept of the handshake: real capabilities and client info are a few levels deep, and a depth bound is what
 * keeps a 100,000-level `initialize` from overflowing the stack (structuredClone did, and ended the process). The size
 * is bounded by the line limit already; the doctor bounds what it echoes.
 */
const KEPT_BOUNDS = { maxDepth: 64, maxBytes: Number.POSITIVE_INFINITY };

const kept = (value: unknown): unknown => boundedJson(value, KEPT_BOUNDS).value;

function idOf(value: unknown): string | number | null {
  if (typeof value !== 'object' || value === null) return null;
  const id = (value as { id?: unknown }).id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

/**
 * A newline-delimited JSON-RPC transport over stdio. It exists instead of the SDK's StdioServerTransport for two
 * reasons: the SDK silently drops malformed lines (a peer gets no answer and hangs), and it does not expose the raw
 * `initialize` params the doctor must echo.
 */
export class StdioTapTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;
  initialize: InitializeCapture | undefined;
  /**
   * What the client declared it can do, from the first message that says: `initialize` (2025) or the first request's
   * envelope (2026-07-28). The server factory runs after that message arrived, so it can decide what to declare.
   */
  clientCapabilities: unknown;

  private buffer = '';
  private closed = false;
  /**
   * The id of the first request after the handshake (a host's `tools/list`, or a first `tools/call`) until it is
   * answered, then null: the end of the start (`onStarted`).
   */
  private firstWork: string | number | null | undefined;

  constructor(
    private readonly input: Readable = process.stdin,
    private readonly output: Writable = process.stdout,
    /** Called once, when the first request after the handshake has been answered: the server's start is over. */
    private readonly onStarted?: () => void,
    /** What came before the SDK was loaded (server/mcp/fast-handshake.ts): handled first, in order. */
    private readonly opening?: Opening,
  ) {}

  async start(): Promise<void> {
    this.input.setEncoding('utf8');
    this.input.on('data', this.onData);
    this.input.on('end', this.onEnd);
    this.input.on('close', this.onEnd);
    this.output.on('error', this.onOutputError);
    if (this.opening) {
      for (const line of this.opening.lines) this.handleLine(line);
      this.onData(this.opening.rest);
      if (this.opening.ended) this.onEnd();
      // The fast handshake paused it at the hand-over.
      else this.input.resume();
    }
  }

  private readonly onData = (chunk: string): void => {
    this.buffer = takeLines(this.buffer + chunk, (line) => this.handleLine(line));
    if (this.buffer.length > MAX_LINE_BYTES) {
      this.buffer = '';
      this.reject(null, -32600, `Invalid Request: a message longer than ${MAX_LINE_BYTES} bytes was discarded`);
    }
  };

  private handleLine(line: string): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch (error) {
      this.reject(null, -32700, `Parse error: ${(error as Error).message}`);
      return;
    }
    let message: JSONRPCMessage;
    try {
      message = parseJSONRPCMessage(parsed);
    } catch {
      this.reject(idOf(parsed), -32600, 'Invalid Request: not a JSON-RPC 2.0 request, notification or response');
      return;
    }
    try {
      this.tap(message);
    } catch (error) {
      // The tap only feeds the doctor and the capability check: a message it cannot keep is still served, never fatal.
      log('warn', 'could not keep what the client declared', { error: error instanceof Error ? error.message : String(error) });
    }
    this.onmessage?.(message);
  }

  private tap(message: JSONRPCMessage): void {
    if (this.firstWork === undefined && 'method' in message && 'id' in message && !HANDSHAKE.has(message.method)) this.firstWork = message.id;
    if ('method' in message && message.method === 'initialize' && 'id' in message) {
      const params = (message.params ?? {}) as Record<string, unknown>;
      this.initialize = {
        protocolVersion: kept(params.protocolVersion),
        clientInfo: kept(params.clientInfo),
        capabilities: kept(params.capabilities),
      };
      this.clientCapabilities ??= this.initialize.capabilities;
    } else if (this.clientCapabilities === undefined && 'method' in message) {
      const meta = (message.params as { _meta?: Record<string, unknown> } | undefined)?._meta;
      if (meta && CLIENT_CAPABILITIES_META_KEY in meta) this.clientCapabilities = kept(meta[CLIENT_CAPABILITIES_META_KEY]);
    }
  }

  private reject(id: string | number | null, code: number, message: string): void {
    log('warn', 'refused a malformed message on stdin', { code, message });
    // JSON-RPC 2.0 answers unparseable input with id null; our own writer, since the SDK types forbid a null id.
    this.write(`${JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } })}\n`);
  }

  private readonly onEnd = (): void => {
    void this.close();
  };

  private readonly onOutputError = (error: Error): void => {
    this.onerror?.(error);
    void this.close();
  };

  private write(text: string): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.closed) {
        reject(new Error('stdio transport is closed'));
        return;
      }
      if (this.output.write(text)) resolve();
      else this.output.once('drain', resolve);
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const text = serializeMessage(message);
    const isResponse = 'id' in message && !('method' in message);
    if (this.firstWork != null && isResponse && message.id === this.firstWork) {
      this.firstWork = null;
      this.onStarted?.();
    }
    const replayId = isResponse && typeof message.id === 'string' ? message.id : undefined;
    const sent = replayId === undefined ? undefined : this.opening?.replays.get(replayId);
    if (replayId !== undefined && sent !== undefined) {
      // A request the fast handshake answered already: the host has its answer, and this one must be the same.
      this.opening?.replays.delete(replayId);
      const expected = `${sent[0]}${JSON.stringify(replayId)}${sent[1]}\n`;
      if (text !== expected) log('error', 'the SDK answered a handshake request differently from the recorded answer sent before it loaded', { sent: expected.slice(0, 300), sdk: text.slice(0, 300) });
      return Promise.resolve();
    }
    return this.write(text);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.input.off('data', this.onData);
    this.input.off('end', this.onEnd);
    this.input.off('close', this.onEnd);
    this.input.pause();
    this.onclose?.();
  }
}

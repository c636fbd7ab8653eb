import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Stream } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as StdioClientTransportV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import { freePort } from './scripted-extension.js';

export const SERVER_ENTRY = fileURLToPath(new URL('../../dist/server/main.js', import.meta.url));

export type ClientKind = 'v2-2025' | 'v2-2026' | 'v1';
export const CLIENT_KINDS: readonly ClientKind[] = ['v2-2025', 'v2-2026', 'v1'];

/** What a form elicitation asks of the host, as the scripts read it (the SDKs type it per era; one schema for both). */
const ElicitParamsSchema = z.looseObject({ message: z.string(), requestedSchema: z.record(z.string(), z.unknown()) });
export type ElicitParams = z.infer<typeof ElicitParamsSchema>;
export interface ElicitAnswer {
  action: 'accept' | 'decline' | 'cancel';
  content?: Record<string, unknown>;
}
/** A scripted host: how it answers one elicitation. */
export type HostScript = (params: ElicitParams, signal: AbortSignal) => Promise<ElicitAnswer>;

export interface ToolResult {
  content?: unknown[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  _meta?: Record<string, unknown>;
}

export interface CallOptions {
  timeoutMs?: number;
  onprogress?: (progress: unknown) => void;
  signal?: AbortSignal;
  /** The call's own `_meta` (some hosts put what mode they run in there). */
  meta?: Record<string, unknown>;
}

export interface Harness {
  kind: ClientKind;
  /** The server process's pid. */
  pid: number | null;
  /** The server's state dir and hub port: the test's own unless the test named them in `env`. */
  stateDir: string;
  port: number;
  elicitations: ElicitParams[];
  stderr: () => string;
  listTools: () => Promise<{ name: string; inputSchema: Record<string, unknown>; outputSchema?: Record<string, unknown> }[]>;
  callTool: (name: string, args: Record<string, unknown>, options?: CallOptions) => Promise<ToolResult>;
  listPrompts: () => Promise<{ name: string; title?: string; description?: string; arguments?: { name: string; required?: boolean }[] }[]>;
  getPrompt: (name: string, args: Record<string, string>) => Promise<{ messages: { role: string; content: { type: string; text?: string } }[] }>;
  serverCapabilities: () => Record<string, unknown> | undefined;
  close: () => Promise<void>;
}

export interface HarnessOptions {
  capabilities?: Record<string, unknown>;
  /** What the client calls itself (default `test-host-<kind>`): the table of known hosts keys on it. */
  clientInfo?: { name: string; version: string };
  host?: HostScript;
  env?: Record<string, string>;
  /**
   * Serve the server in this test's process over a pair of in-memory streams (`server/serve-mcp.ts`, the same
   * composition `main.ts` serves on stdio) instead of spawning the built one: no process start per connection. For the
   * files about what the tools answer; a test about the process itself (its pid, stderr, exit, signals) spawns it.
   */
  inProcess?: boolean;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export const hosts = {
  acceptAfter: (ms: number, content: (p: ElicitParams) => Record<string, unknown>): HostScript => async (p) => {
    await sleep(ms);
    return { action: 'accept', content: content(p) };
  },
  answerAfter: (ms: number, action: 'decline' | 'cancel'): HostScript => async () => {
    await sleep(ms);
    return { action };
  },
  /** Holds the dialog open far past any bound the server sets; the server must give up first. */
  never: (): HostScript => () => new Promise(() => undefined),
  throws: (): HostScript => async () => {
    throw new Error('this host cannot show forms');
  },
};

function requestOptions(opts: CallOptions) {
  return {
    timeout: opts.timeoutMs ?? 20_000,
    ...(opts.onprogress ? { onprogress: opts.onprogress } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
  };
}

function baseEnv(extra: Record<string, string> | undefined): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env[key] = value;
  return { ...env, ELICITLY_LOG_LEVEL: 'warn', ...extra };
}

/**
 * A server over stdio. Unless the test names them, it gets a state dir of its own (removed on close) and a free port,
 * so an ask routed to the extension never touches the user's real state dir or another test's hub.
 */
export async function connect(kind: ClientKind, options: HarnessOptions = {}): Promise<Harness> {
  const ownDir = options.env?.ELICITLY_STATE_DIR === undefined ? mkdtempSync(join(tmpdir(), 'elicitly-harness-')) : null;
  const stateDir = ownDir ?? String(options.env?.ELICITLY_STATE_DIR);
  const port = Number(options.env?.ELICITLY_PORT ?? freePort());
  const env = { ELICITLY_STATE_DIR: stateDir, ELICITLY_PORT: String(port), ...options.env };
  const cleanup = () => {
    if (ownDir) rmSync(ownDir, { recursive: true, force: true });
  };
  const capabilities = options.capabilities ?? { elicitation: { form: {} } };
  const elicitations: ElicitParams[] = [];
  let stderr = '';
  const answer = async (params: ElicitParams, signal: AbortSignal): Promise<ElicitAnswer> => {
    elicitations.push(params);
    if (!options.host) throw new Error('no host script');
    return options.host(params, signal);
  };
  const params = { command: process.execPath, args: [SERVER_ENTRY], env: baseEnv(env), stderr: 'pipe' as const };
  // Loaded only when asked for: a spawning test never loads the server's modules (and may mock some of them).
  const served = options.inProcess ? (await import('./in-process-server.js')).serveInProcess(baseEnv(env)) : undefined;
  const closeServer = async () => {
    await served?.close();
    cleanup();
  };

  /** What both SDKs' clients offer alike; each kind's own part is how it calls a tool and where its process is. */
  interface AnyClient {
    listTools(): Promise<{ tools: unknown[] }>;
    listPrompts(): Promise<{ prompts: Awaited<ReturnType<Harness['listPrompts']>> }>;
    getPrompt(params: { name: string; arguments: Record<string, string> }): Promise<unknown>;
    getServerCapabilities(): unknown;
    close(): Promise<void>;
  }
  const harness = (client: AnyClient, callTool: Harness['callTool'], child: { pid: number | null; stderr: Stream | null } | undefined): Harness => {
    child?.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    return {
      kind,
      pid: child?.pid ?? null,
      stateDir,
      port,
      elicitations,
      stderr: () => stderr,
      listTools: async () => (await client.listTools()).tools as never,
      callTool,
      listPrompts: async () => (await client.listPrompts()).prompts,
      getPrompt: async (name, args) => (await client.getPrompt({ name, arguments: args })) as never,
      serverCapabilities: () => client.getServerCapabilities() as Record<string, unknown> | undefined,
      close: () => client.close().finally(closeServer),
    };
  };
  const callArgs = (name: string, args: Record<string, unknown>, opts: CallOptions) => ({ name, arguments: args, ...(opts.meta ? { _meta: opts.meta } : {}) });

  if (kind === 'v1') {
    const transport = served?.transport ?? new StdioClientTransportV1(params);
    const client = new ClientV1(options.clientInfo ?? { name: 'test-host-v1', version: '1.0.0' }, { capabilities });
    if (options.host) client.setRequestHandler(ElicitRequestSchema, async (req, extra) => (await answer(ElicitParamsSchema.parse(req.params), extra.signal)) as never);
    await client.connect(transport);
    return harness(
      client,
      async (name, args, opts = {}) => (await client.callTool(callArgs(name, args, opts), undefined, requestOptions(opts))) as ToolResult,
      transport instanceof StdioClientTransportV1 ? transport : undefined,
    );
  }

  const transport = served?.transport ?? new StdioClientTransport(params);
  const client = new Client(
    options.clientInfo ?? { name: `test-host-${kind}`, version: '2.0.0' },
    {
      capabilities,
      versionNegotiation: { mode: kind === 'v2-2026' ? { pin: '2026-07-28' } : 'legacy' },
    },
  );
  if (options.host) client.setRequestHandler('elicitation/create', async (req, ctx) => (await answer(ElicitParamsSchema.parse(req.params), ctx.mcpReq.signal)) as never);
  await client.connect(transport);
  return harness(
    client,
    async (name, args, opts = {}) => (await client.callTool(callArgs(name, args, opts), requestOptions(opts))) as ToolResult,
    transport instanceof StdioClientTransport ? transport : undefined,
  );
}

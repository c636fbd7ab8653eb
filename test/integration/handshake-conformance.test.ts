// The bin answers the handshake before the SDK loads (server/mcp/fast-handshake.ts, from answers the build recorded
// from the SDK). It must be indistinguishable from the SDK: every handshake the v1 and v2 clients send, the recorded
// real hosts' (test/fixtures/handshakes/), and unusual or broken ones, go to the built server twice, with the fast
// start and without it (ELICITLY_FAST_HANDSHAKE=0), and every answer must be the same bytes. CI runs this project on
// Node 20, 22 and 24 (.ci/run).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as StdioClientTransportV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { APP_MIME_TYPE, UI_EXTENSION } from '../../shared/app-capability.js';
import { SERVER_ENTRY } from '../helpers/mcp-harness.js';
import { freePort } from '../helpers/scripted-extension.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/handshakes/', import.meta.url));
const APPS = { extensions: { [UI_EXTENSION]: { mimeTypes: [APP_MIME_TYPE] } } };
const WAIT_MS = 15_000;

interface Run {
  /** Each answer line by the id it answers (JSON of the id; `null` for a line that was not JSON). */
  answers: Map<string, string>;
  /** The methods the fast start answered, from its debug line (empty when it answered none). */
  fast: string[];
  stderr: string;
}

/** Which lines are requests (and so get exactly one answer), by the id their answer carries. */
function expectedIds(lines: readonly string[]): string[] {
  return lines.flatMap((line) => {
    try {
      const message = JSON.parse(line) as { id?: unknown; method?: unknown };
      return typeof message.method === 'string' && message.id !== undefined ? [JSON.stringify(message.id)] : [];
    } catch {
      return ['null'];
    }
  });
}

/** Sends `lines` in one write to a fresh built server and collects one answer per request, then ends its input. */
function converse(lines: readonly string[], fast: boolean, env: Record<string, string> = {}): Promise<Run> {
  const stateDir = mkdtempSync(join(tmpdir(), 'elicitly-handshake-'));
  const child = spawn(process.execPath, [SERVER_ENTRY], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, ELICITLY_STATE_DIR: stateDir, ELICITLY_PORT: String(freePort()), ELICITLY_LOG_LEVEL: 'debug', ELICITLY_FAST_HANDSHAKE: fast ? '1' : '0', ...env },
  });
  const wanted = expectedIds(lines);
  const answers = new Map<string, string>();
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise<Run>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${answers.size} of ${wanted.length} answers within ${WAIT_MS} ms (fast: ${fast}); stderr: ${stderr.slice(-2000)}`));
    }, WAIT_MS);
    createInterface({ input: child.stdout }).on('line', (line) => {
      const id = JSON.stringify((JSON.parse(line) as { id?: unknown }).id ?? null);
      // Two answers to one id would be a protocol fault of either path: kept apart so the comparison shows it.
      answers.set(answers.has(id) ? `${id} (again)` : id, line);
      if (wanted.every((w) => answers.has(w))) child.stdin.end();
    });
    child.on('exit', () => {
      clearTimeout(timer);
      rmSync(stateDir, { recursive: true, force: true });
      const debug = stderr.split('\n').flatMap((l) => {
        try {
          const entry = JSON.parse(l) as { message?: string; methods?: string[] };
          return entry.message === 'answered before the SDK loaded' ? (entry.methods ?? []) : [];
        } catch {
          return [];
        }
      });
      resolve({ answers, fast: debug, stderr });
    });
    child.stdin.write(lines.map((line) => `${line}\n`).join(''));
  });
}

/** Both paths on the same lines: the same answers, byte for byte; returns what the fast start answered. */
async function conform(lines: readonly string[], env: Record<string, string> = {}): Promise<string[]> {
  const [fast, sdk] = await Promise.all([converse(lines, true, env), converse(lines, false, env)]);
  expect(sdk.fast).toEqual([]);
  expect([...fast.answers.keys()].sort()).toEqual(expectedIds(lines).sort());
  expect(Object.fromEntries(fast.answers)).toEqual(Object.fromEntries(sdk.answers));
  expect(fast.stderr).not.toMatch(/answered a handshake request differently/);
  return fast.fast;
}

/** A fixture's sessions: a file may hold several runs of its host, each from its `initialize` or `server/discover` on. */
function sessions(file: string): string[][] {
  const runs: string[][] = [];
  for (const line of readFileSync(join(FIXTURES, file), 'utf8').split('\n').filter((l) => l.trim() !== '')) {
    const { method } = JSON.parse(line) as { method?: string };
    if (runs.length === 0 || method === 'initialize' || (method === 'server/discover' && runs.at(-1)?.some((l) => (JSON.parse(l) as { id?: unknown }).id !== undefined))) runs.push([]);
    runs.at(-1)?.push(line);
  }
  return runs;
}
const json = (...messages: unknown[]) => messages.map((m) => JSON.stringify(m));
const init = (protocolVersion: string, capabilities: unknown, id: unknown = 0) => ({ jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion, capabilities, clientInfo: { name: 'conformance', version: '1' } } });
const INITIALIZED = { jsonrpc: '2.0', method: 'notifications/initialized' };
const LISTS = ['tools/list', 'prompts/list', 'resources/list', 'resources/templates/list', 'ping'];
const envelope = (capabilities: unknown, version = '2026-07-28') => ({
  'io.modelcontextprotocol/protocolVersion': version,
  'io.modelcontextprotocol/clientInfo': { name: 'conformance', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': capabilities,
});

describe('the recorded real hosts (test/fixtures/handshakes/)', () => {
  const files = readdirSync(FIXTURES).filter((f) => f.endsWith('.jsonl'));
  it('has the hosts it names', () =>
    expect(files).toEqual(expect.arrayContaining(['claude-code.jsonl', 'codex.jsonl', 'gemini-cli.jsonl', 'copilot-cli.jsonl', 'opencode.jsonl', 'mcp-inspector-cli.jsonl'])));

  it.each(files)('%s: the same answers, all of them from the fast start', async (file) => {
    for (const lines of sessions(file)) {
      const requests = lines.map((l) => JSON.parse(l) as { id?: unknown; method: string }).filter((m) => m.id !== undefined);
      expect(await conform(lines)).toEqual(requests.map((m) => m.method));
    }
  });
});

describe('what the SDKs’ clients send', () => {
  /** What both SDKs' clients and stdio transports offer alike, as far as a handshake and the lists go. */
  interface AnyClient {
    connect(transport: AnyTransport): Promise<void>;
    listTools(): Promise<unknown>;
    listPrompts(): Promise<unknown>;
    listResources(): Promise<unknown>;
    getServerCapabilities(): { resources?: unknown } | undefined;
    close(): Promise<void>;
  }
  interface AnyTransport {
    send(message: never, options?: never): Promise<void>;
  }

  /**
   * Runs a real client against the built server (its handshake, then every list it has), and returns the lines it
   * sent, to send to both paths.
   */
  async function sent(client: AnyClient, transport: AnyTransport, stateDir: string): Promise<string[]> {
    const lines: string[] = [];
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
      lines.push(JSON.stringify(message));
      return send(message, options);
    };
    try {
      await client.connect(transport);
      await client.listTools();
      await client.listPrompts();
      if (client.getServerCapabilities()?.resources) await client.listResources();
      await client.close();
    } finally {
      rmSync(stateDir, { recursive: true, force: true });
    }
    return lines;
  }
  const spawned = () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'elicitly-client-'));
    const env = { ...(process.env as Record<string, string>), ELICITLY_STATE_DIR: stateDir, ELICITLY_PORT: String(freePort()), ELICITLY_LOG_LEVEL: 'error' };
    return { stateDir, params: { command: process.execPath, args: [SERVER_ENTRY], env, stderr: 'ignore' as const } };
  };
  const v2 = (mode: 'legacy' | { pin: '2026-07-28' } | undefined, capabilities: Record<string, unknown>) => () => {
    const { stateDir, params } = spawned();
    const client = new Client({ name: 'conformance-v2', version: '2.0.0' }, { capabilities, ...(mode === undefined ? {} : { versionNegotiation: { mode } }) });
    return sent(client, new StdioClientTransport(params), stateDir);
  };
  const v1 = (capabilities: Record<string, unknown>) => () => {
    const { stateDir, params } = spawned();
    return sent(new ClientV1({ name: 'conformance-v1', version: '1.0.0' }, { capabilities }), new StdioClientTransportV1(params), stateDir);
  };
  const form = { elicitation: { form: {} } };
  it.each([
    ['v1 client', v1(form)],
    ['v1 client that renders apps', v1({ ...form, ...APPS })],
    ['v2 client, 2025 era', v2('legacy', form)],
    ['v2 client, 2025 era, renders apps', v2('legacy', { ...form, ...APPS })],
    ['v2 client pinned to 2026-07-28', v2({ pin: '2026-07-28' }, form)],
    ['v2 client pinned to 2026-07-28, renders apps', v2({ pin: '2026-07-28' }, { ...form, ...APPS })],
    ['v2 client negotiating by default', v2(undefined, form)],
  ])('%s: the same answers, its handshake from the fast start', async (_name, client) => {
    const lines = await client();
    expect(lines.length).toBeGreaterThanOrEqual(2);
    const answered = await conform(lines);
    // All in one write here, so all of the handshake is the fast start's: initialize or the first 2026 request, the lists.
    const requests = lines.map((l) => JSON.parse(l) as { id?: unknown; method: string }).filter((m) => m.id !== undefined);
    expect(answered).toEqual(requests.map((m) => m.method));
  });
});

describe('every variant of the handshake itself', () => {
  it.each(['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05', '2024-10-07'])('2025 era, version %s, plain and with apps', async (version) => {
    for (const capabilities of [{}, APPS]) {
      const lines = json(init(version, capabilities), INITIALIZED, ...LISTS.map((method, i) => ({ jsonrpc: '2.0', id: `l${i}`, method })));
      expect(await conform(lines)).toEqual(['initialize', ...LISTS]);
    }
  });

  it('2026-07-28: discover and every list, plain and with apps; a number id and a string id', async () => {
    for (const capabilities of [{}, APPS]) {
      const lines = json(...['server/discover', ...LISTS].map((method, i) => ({ jsonrpc: '2.0', id: i % 2 ? i : `s${i}`, method, params: { _meta: envelope(capabilities) } })));
      expect(await conform(lines)).toEqual(['server/discover', ...LISTS]);
    }
  });

  it('a relay (ELICITLY_HUB_URL and ELICITLY_HUB_KEY set) offers no app, on both paths', async () => {
    const relay = { ELICITLY_HUB_URL: 'ws://127.0.0.1:9', ELICITLY_HUB_KEY: `ek1.9.k_${'0'.repeat(16)}.${'a'.repeat(64)}` };
    const lines = json(init('2025-11-25', APPS), INITIALIZED, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const [fast, sdk] = await Promise.all([converse(lines, true, relay), converse(lines, false, relay)]);
    expect(sdk.stderr).not.toMatch(/cannot start/);
    expect(Object.fromEntries(fast.answers)).toEqual(Object.fromEntries(sdk.answers));
    expect(fast.answers.get('1')).not.toMatch(/elicit_app_decide/);
  });

  it.each([
    ['an unknown protocol version', json(init('2023-01-01', {}), INITIALIZED, { jsonrpc: '2.0', id: 1, method: 'tools/list' }), []],
    ['a modern version in a 2025 initialize', json(init('2026-07-28', {}), INITIALIZED, { jsonrpc: '2.0', id: 1, method: 'tools/list' }), []],
    ['capabilities the SDK refuses', json(init('2025-11-25', { roots: { listChanged: 'yes' } }), { jsonrpc: '2.0', id: 1, method: 'tools/list' }), []],
    ['a clientInfo without a version', json({ ...init('2025-11-25', {}), params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x' } } }), []],
    ['tools/list before initialize', json({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, init('2025-11-25', {})), []],
    ['a line that is not JSON first', ['{"jsonrpc":', ...json(init('2025-11-25', {}))], []],
    ['a tools/call right after initialize', json(init('2025-11-25', {}), INITIALIZED, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'elicit_status', arguments: { requestId: 'nope' } } }, { jsonrpc: '2.0', id: 2, method: 'tools/list' }), ['initialize']],
    ['a cursor on tools/list', json(init('2025-11-25', {}), INITIALIZED, { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { cursor: 'abc' } }), ['initialize']],
    ['a second initialize', json(init('2025-11-25', {}), INITIALIZED, init('2025-06-18', {}, 1)), ['initialize']],
    ['a 2025 initialize after a 2026 discover', json({ jsonrpc: '2.0', id: 'd', method: 'server/discover', params: { _meta: envelope({}) } }, init('2025-11-25', {}, 1)), ['server/discover']],
    ['a 2026 request after a 2025 initialize', json(init('2025-11-25', {}), { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope({}) } }), ['initialize']],
    [
      'a 2026 request with a log level in its envelope (the Inspector CLI in its 2026 mode)',
      json({ jsonrpc: '2.0', id: 'd', method: 'server/discover', params: { _meta: envelope({}) } }, { jsonrpc: '2.0', id: 0, method: 'tools/list', params: { _meta: { ...envelope({}), 'io.modelcontextprotocol/logLevel': 'debug' } } }),
      ['server/discover'],
    ],
    ['a 2026 envelope of an unknown revision', json({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope({}, '2027-01-01') } }), []],
    ['a 2026 envelope missing its clientInfo', json({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} } } }), []],
  ])('%s: the SDK answers what the fast start does not know, the same as without it', async (_name, lines, answered) => {
    expect(await conform(lines)).toEqual(answered);
  });
});

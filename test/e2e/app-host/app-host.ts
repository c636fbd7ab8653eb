// The Node side of the headless-Chromium MCP Apps test host (./host.ts is the page): builds the page's script with
// esbuild, serves it on a made-up http origin through page.route, and forwards the page's MCP calls to a real v2
// client of the built server over stdio, which declared the UI extension. Used by test/e2e/app.test.ts and
// bench/app.mjs.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { build } from 'esbuild';
import type { Browser, Frame, FrameLocator, Page } from 'playwright-core';
import { APP_MIME_TYPE, UI_EXTENSION } from '../../../shared/app-surface.js';
import { SERVER_ENTRY } from '../../helpers/mcp-harness.js';
import type { HostEvent, McpMethod, OpenOptions } from './host.js';

export type { HostEvent, OpenOptions } from './host.js';

/** A made-up origin: Chromium never resolves it, page.route answers it. */
export const HOST_ORIGIN = 'http://elicitly-host.test';
export const APP_CAPABILITIES = { extensions: { [UI_EXTENSION]: { mimeTypes: [APP_MIME_TYPE] } } };

/** A tools/call result as the v2 client returns it, `_meta` included. */
export interface ToolCallResult {
  content: { type: string; text?: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  _meta?: Record<string, unknown>;
}

/** The host page's script: ./host.ts and the SDK's AppBridge bundled into one classic script (built into a temp dir). */
export async function buildHostScript(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'elicitly-app-host-'));
  try {
    const outfile = join(dir, 'host.js');
    await build({
      entryPoints: [fileURLToPath(new URL('./host.ts', import.meta.url))],
      bundle: true,
      format: 'iife',
      platform: 'browser',
      target: 'es2022',
      minify: true,
      outfile,
      logLevel: 'silent',
    });
    return readFileSync(outfile, 'utf8');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface AppClient {
  client: Client;
  stderr: () => string;
  close: () => Promise<void>;
}

/**
 * A real v2 MCP client of the built server over stdio that renders MCP Apps: it declares the UI extension with the
 * app MIME type. `env` names the state dir and hub port (and anything else the server reads).
 */
export async function connectAppClient(env: Record<string, string>): Promise<AppClient> {
  const base: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined) base[key] = value;
  const client = new Client({ name: 'elicitly-test-host', version: '0.0.0' }, {
    capabilities: APP_CAPABILITIES,
    versionNegotiation: { mode: 'legacy' },
  } as ConstructorParameters<typeof Client>[1]);
  const transport = new StdioClientTransport({ command: process.execPath, args: [SERVER_ENTRY], env: { ...base, ELICITLY_LOG_LEVEL: 'warn', ...env }, stderr: 'pipe' });
  let stderr = '';
  await client.connect(transport);
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return { client, stderr: () => stderr, close: () => client.close() };
}

/** The "model" calls a tool: the result exactly as the host receives it. */
export async function callTool(client: Client, name: string, args: Record<string, unknown>): Promise<ToolCallResult> {
  return (await client.callTool({ name, arguments: args })) as ToolCallResult;
}

export interface AppHostPage {
  page: Page;
  /** The view, for locators by accessible name. */
  view: FrameLocator;
  /** What the view asked of the host, in order: sizes, display modes, tool calls (with the visibility verdict), logs. */
  events: HostEvent[];
  /** Uncaught errors and console errors (a CSP violation among them) of the page and the view. */
  errors: string[];
  /** The view's frame, once open() returned. */
  viewFrame: () => Promise<Frame>;
  open: (options: OpenOptions) => Promise<void>;
  sendResult: (result: ToolCallResult) => Promise<number>;
  /** open() then sendResult(): what a host does once the model's call returned. */
  show: (toolName: string, input: Record<string, unknown>, result: ToolCallResult, options?: Omit<OpenOptions, 'toolName' | 'input'>) => Promise<void>;
  /** Resolves with the first event (already recorded or to come) that matches, or rejects after `timeoutMs`. */
  waitForEvent: (match: (e: HostEvent) => boolean, timeoutMs: number) => Promise<HostEvent>;
  close: () => Promise<void>;
}

const toolLists = new WeakMap<Client, ReturnType<Client['listTools']>>();

/**
 * The server's tool list, read once per client, as a host keeps it: the v2 client recompiles its output validators
 * after every tools/list, which a host rendering a view would not pay for again.
 */
function listTools(client: Client): ReturnType<Client['listTools']> {
  let list = toolLists.get(client);
  if (!list) {
    list = client.listTools();
    toolLists.set(client, list);
    list.catch(() => toolLists.delete(client));
  }
  return list;
}

/** A new page of `browser` running the test host, whose MCP calls go to `client`. */
export async function openAppHost(browser: Browser, client: Client, script: string, viewport = { width: 1280, height: 900 }): Promise<AppHostPage> {
  const page = await browser.newPage({ viewport });
  const events: HostEvent[] = [];
  const waiters = new Set<() => void>();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`console (${message.location().url || 'inline'}): ${message.text()}`);
  });
  // Playwright installs a binding in every frame, the sandboxed view included: only the host page itself may use it,
  // or the view could reach the server past the bridge and its visibility check.
  const fromHost = (frame: Frame) => frame === page.mainFrame() && frame.url().startsWith(HOST_ORIGIN);
  // Answers travel as JSON text: Playwright's own serialization of a large object costs tens of milliseconds.
  await page.exposeBinding('elicitlyMcpJson', async ({ frame }, method: McpMethod, params: unknown) => {
    if (!fromHost(frame)) throw new Error('only the host page may reach the server');
    switch (method) {
      case 'tools/list': return JSON.stringify(await listTools(client));
      case 'tools/call': return JSON.stringify(await client.callTool(params as { name: string; arguments: Record<string, unknown> }));
      case 'resources/list': return JSON.stringify(await client.listResources());
      case 'resources/read': return JSON.stringify(await client.readResource(params as { uri: string }));
      default: throw new Error(`the host does not forward ${String(method)}`);
    }
  });
  await page.exposeBinding('elicitlyHostEvent', ({ frame }, event: HostEvent) => {
    if (!fromHost(frame)) return;
    events.push(event);
    for (const wake of waiters) wake();
  });
  await page.route(`${HOST_ORIGIN}/**`, (route) => {
    const path = new URL(route.request().url()).pathname;
    if (path === '/') {
      return route.fulfill({
        contentType: 'text/html',
        body: '<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>Elicitly test host</title></head>'
          + '<body style="margin:8px"><script src="/host.js"></script></body></html>',
      });
    }
    if (path === '/host.js') return route.fulfill({ contentType: 'text/javascript', body: script });
    return route.fulfill({ status: 404, body: '' });
  });
  await page.goto(`${HOST_ORIGIN}/`);

  const open = async (options: OpenOptions) => {
    await page.evaluate((o) => window.elicitlyHost.open(o), options);
  };
  const sendResult = (result: ToolCallResult) => page.evaluate((r) => window.elicitlyHost.sendResult(r as never), result as unknown);
  return {
    page,
    view: page.frameLocator('#app-view'),
    events,
    errors,
    async viewFrame() {
      const frame = await (await page.locator('#app-view').elementHandle({ timeout: 5000 }))?.contentFrame();
      if (!frame) throw new Error('the view frame is not there');
      return frame;
    },
    open,
    sendResult,
    async show(toolName, input, result, options = {}) {
      await open({ ...options, toolName, input });
      await sendResult(result);
    },
    waitForEvent(match, timeoutMs) {
      return new Promise<HostEvent>((resolve, reject) => {
        const check = () => {
          const hit = events.find(match);
          if (!hit) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(hit);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no matching host event within ${timeoutMs} ms; seen: ${JSON.stringify(events)}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    close: () => page.close(),
  };
}

/**
 * A proposal of `fields` string fields fed by `sources` sources (the first always has a value, the others on two rows
 * out of three), with a Current value on every other row: the 100-field proposal of bench/extension.mjs when
 * `sources` is 2.
 */
export function manyFieldProposal(message: string, fields = 100, sources = 2): Record<string, unknown> {
  const columns = Array.from({ length: sources }, (_, s) => ({ key: s === 0 ? 'crm' : s === 1 ? 'web' : `src${s}`, label: s === 0 ? 'CRM' : s === 1 ? 'Website' : `Source ${s}` }));
  const properties: Record<string, unknown> = {};
  const rows: Record<string, unknown> = {};
  for (let i = 0; i < fields; i++) {
    const key = `field${String(i).padStart(3, '0')}`;
    properties[key] = { type: 'string', title: `Field ${i}`, default: `proposed value ${i}` };
    const values: Record<string, string> = {};
    columns.forEach((column, s) => {
      if (s === 0 || i % 3 !== 0) values[column.key] = `${s === 0 ? 'crm' : s === 1 ? 'web' : column.key} value ${i}`;
    });
    rows[key] = { sources: values, current: i % 2 === 0 ? `current value ${i}` : null };
  }
  return {
    message,
    columns: { sources: columns, current: { label: 'Current' } },
    requestedSchema: { type: 'object', properties },
    fields: rows,
    context: { bench: true },
  };
}

declare global {
  interface Window {
    /** Set in the view's frame by measureFirstRender: when the grid had all its body rows. */
    elicitlyGridFilled?: Promise<number>;
  }
}

/**
 * First render of a proposal in the view: from the host handing over the tool result to the moment the grid
 * ("Proposed changes") has `rows` body rows in the DOM. That span includes the view's elicit_app_view call through the
 * host to the server. Resolves with milliseconds; rejects after `timeoutMs`.
 */
export async function measureFirstRender(host: AppHostPage, toolName: string, input: Record<string, unknown>, result: ToolCallResult, rows: number, timeoutMs = 15_000): Promise<number> {
  await host.open({ toolName, input });
  const frame = await host.viewFrame();
  // Watching starts before the result is sent; the times on both sides are epoch milliseconds at high resolution.
  // Source text, not a function: tsx (the bench) would wrap named inner functions in a helper the frame lacks.
  await frame.evaluate(`(() => {
    const wanted = ${JSON.stringify(rows)};
    window.elicitlyGridFilled = new Promise((resolve, reject) => {
      const filled = () => (document.querySelector('table[aria-label="Proposed changes"] tbody')?.querySelectorAll(':scope > tr').length ?? 0) >= wanted;
      const observer = new MutationObserver(() => {
        if (!filled()) return;
        const at = performance.timeOrigin + performance.now();
        observer.disconnect();
        clearTimeout(timer);
        resolve(at);
      });
      const timer = setTimeout(() => {
        observer.disconnect();
        reject(new Error('the grid did not get ' + wanted + ' rows within ${timeoutMs} ms'));
      }, ${JSON.stringify(timeoutMs)});
      observer.observe(document, { childList: true, subtree: true });
    });
    window.elicitlyGridFilled.catch(() => undefined);
  })()`);
  const sentAt = await host.sendResult(result);
  const filledAt = await frame.evaluate(() => window.elicitlyGridFilled!);
  return filledAt - sentAt;
}

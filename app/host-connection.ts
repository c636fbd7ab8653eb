import type * as z from 'zod';
import {
  CallToolResultSchema, DisplayModeResultSchema, HostContextSchema, HostMessageSchema, InitializeResultSchema, ProgressParamsSchema,
  ToolCancelledParamsSchema, ToolInputParamsSchema, type CallToolResult, type DisplayMode, type HostContext, type HostMessage,
} from './host-messages.js';

/** The MCP Apps revision the view speaks (the ext-apps SDK's LATEST_PROTOCOL_VERSION, which its AppBridge accepts). */
const PROTOCOL_VERSION = '2026-01-26';

/** As the SDK: a request the host leaves unanswered for a minute fails; a tool call's progress restarts the minute. */
const REQUEST_TIMEOUT_MS = 60_000;

/** What the view does with the host's notifications. */
export interface HostEvents {
  /** The tool's arguments, as the host passed them. */
  toolInput?(args: Record<string, unknown> | undefined): void;
  toolResult?(result: CallToolResult): void;
  toolCancelled?(reason: string | undefined): void;
  /** The host changed its context; `getHostContext()` has the change merged in. */
  hostContextChanged?(): void;
}

interface Pending {
  settle(message: Extract<HostMessage, { result: unknown } | { error: unknown }>): void;
  timer: ReturnType<typeof setTimeout>;
  expire(): void;
  /** A tool call: the host's progress on it restarts its time. */
  progress: boolean;
}

type Outgoing = { jsonrpc: '2.0'; id?: number | string; method?: string; params?: object; result?: object; error?: { code: number; message: string } };

/**
 * The view's side of the MCP Apps protocol, what the ext-apps SDK's `App` does for it: the `ui/initialize` handshake,
 * the host's notifications (tool input, result, cancellation, context changes) checked before they are used, tool calls
 * and display-mode requests through the host, and the content's size reported as it changes. Messages are JSON-RPC
 * posted to and from the parent window only.
 */
export class HostConnection {
  private nextId = 0;
  private readonly pending = new Map<number, Pending>();
  private context: HostContext | undefined;

  constructor(
    private readonly appInfo: { name: string; version: string },
    private readonly capabilities: { availableDisplayModes?: DisplayMode[] },
    private readonly on: HostEvents,
    private readonly host: Window = window.parent,
  ) {}

  getHostContext(): HostContext | undefined {
    return this.context;
  }

  /** The handshake; afterwards the size is reported. Rejects when the host does not answer it, or not in shape. */
  async connect(): Promise<void> {
    window.addEventListener('message', this.received);
    try {
      const { hostContext } = await this.request('ui/initialize', { appCapabilities: this.capabilities, appInfo: this.appInfo, protocolVersion: PROTOCOL_VERSION }, InitializeResultSchema);
      this.context = hostContext;
      this.send({ jsonrpc: '2.0', method: 'ui/notifications/initialized' });
      this.reportSize();
    } catch (err) {
      window.removeEventListener('message', this.received);
      throw err;
    }
  }

  callServerTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<CallToolResult> {
    return this.request('tools/call', params, CallToolResultSchema, true);
  }

  requestDisplayMode(params: { mode: DisplayMode }): Promise<{ mode: DisplayMode }> {
    return this.request('ui/request-display-mode', params, DisplayModeResultSchema);
  }

  private send(message: Outgoing): void {
    this.host.postMessage(message, '*');
  }

  private request<S extends z.ZodType>(method: string, params: object, schema: S, progress = false): Promise<z.output<S>> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const pending: Pending = {
        progress,
        timer: setTimeout(() => pending.expire(), REQUEST_TIMEOUT_MS),
        expire: () => {
          this.pending.delete(id);
          this.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'Request timed out' } });
          reject(new Error('Request timed out'));
        },
        settle: (message) => {
          clearTimeout(pending.timer);
          this.pending.delete(id);
          if ('error' in message) return reject(new Error(message.error.message));
          const parsed = schema.safeParse(message.result);
          if (parsed.success) resolve(parsed.data);
          else reject(new Error(`Invalid result for ${method}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`));
        },
      };
      this.pending.set(id, pending);
      this.send({ jsonrpc: '2.0', id, method, params: progress ? { ...params, _meta: { progressToken: id } } : params });
    });
  }

  /** Every message from the parent window: anything that is not JSON-RPC in shape, or not from the host, is ignored. */
  private readonly received = (event: MessageEvent): void => {
    if (event.source !== this.host) return;
    const parsed = HostMessageSchema.safeParse(event.data);
    if (!parsed.success) return;
    const message = parsed.data;
    if ('result' in message || 'error' in message) {
      if (typeof message.id === 'number') this.pending.get(message.id)?.settle(message);
    } else if ('id' in message) {
      // The view serves no requests but the host's ping.
      this.send(message.method === 'ping'
        ? { jsonrpc: '2.0', id: message.id, result: {} }
        : { jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'Method not found' } });
    } else {
      this.notified(message.method, message.params);
    }
  };

  private notified(method: string, params: unknown): void {
    if (method === 'ui/notifications/tool-input') {
      const p = ToolInputParamsSchema.safeParse(params);
      if (p.success) this.on.toolInput?.(p.data.arguments);
    } else if (method === 'ui/notifications/tool-result') {
      const p = CallToolResultSchema.safeParse(params);
      if (p.success) this.on.toolResult?.(p.data);
    } else if (method === 'ui/notifications/tool-cancelled') {
      const p = ToolCancelledParamsSchema.safeParse(params);
      if (p.success) this.on.toolCancelled?.(p.data.reason);
    } else if (method === 'ui/notifications/host-context-changed') {
      const p = HostContextSchema.safeParse(params);
      if (!p.success) return;
      this.context = { ...this.context, ...p.data };
      this.on.hostContextChanged?.();
    } else if (method === 'notifications/progress') {
      const p = ProgressParamsSchema.safeParse(params);
      const pending = p.success ? this.pending.get(Number(p.data.progressToken)) : undefined;
      if (!pending?.progress) return;
      clearTimeout(pending.timer);
      pending.timer = setTimeout(() => pending.expire(), REQUEST_TIMEOUT_MS);
    }
  }

  /** The content's height and the frame's width, once a frame after each resize (the host sizes the frame by it). */
  private reportSize(): void {
    let scheduled = false;
    let lastWidth = 0;
    let lastHeight = 0;
    const measure = () => {
      if (scheduled) return;
      scheduled = true;
      requestAnimationFrame(() => {
        scheduled = false;
        const html = document.documentElement;
        const height = html.style.height;
        // The content's own height, not the frame's: measured with the root at max-content for a moment.
        html.style.height = 'max-content';
        const h = Math.ceil(html.getBoundingClientRect().height);
        html.style.height = height;
        const w = Math.ceil(window.innerWidth);
        if (w === lastWidth && h === lastHeight) return;
        lastWidth = w;
        lastHeight = h;
        this.send({ jsonrpc: '2.0', method: 'ui/notifications/size-changed', params: { width: w, height: h } });
      });
    };
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(document.documentElement);
    observer.observe(document.body);
  }
}

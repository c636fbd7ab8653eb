// The test host's page: a chat that renders MCP Apps, reduced to what the spec asks of a host. It runs the official
// host side of the SDK (`AppBridge`, no MCP client of its own) and reaches the server only through the Node side
// (`window.elicitlyMcp`, a Playwright binding that answers the main frame only). It lists the tools, reads the UI
// resource the called tool names, renders it in a sandboxed frame under the CSP built from the resource's metadata,
// hands the view the tool's input and full result once the view is initialized, and lets the view call only the tools
// whose visibility includes "app". Bundled by ./app-host.ts with esbuild into one classic script.
import {
  AppBridge, PostMessageTransport, RESOURCE_MIME_TYPE, getToolUiResourceUri, type McpUiHostContext, type McpUiResourceCsp,
} from '@modelcontextprotocol/ext-apps/app-bridge';
import type { CallToolResult, ListToolsResult, ReadResourceResult } from '@modelcontextprotocol/client';
import { HOST_COLOURS } from './host-colours.js';

/** What the Node side forwards to the server (anything else is refused there). */
export type McpMethod = 'tools/list' | 'tools/call' | 'resources/list' | 'resources/read';

/** What the host saw the view do, in order, as the Node side records it. */
export type HostEvent =
  | { type: 'initialized'; at: number }
  | { type: 'size'; width?: number | undefined; height?: number | undefined }
  | { type: 'display-mode'; requested: string; granted: string }
  | { type: 'tool-call'; name: string; allowed: boolean }
  /** A call the host forwarded has returned: `ms` from the view's request to the server's answer, at the host. */
  | { type: 'tool-done'; name: string; ms: number; isError: boolean }
  | { type: 'log'; level: string; data: unknown }
  | { type: 'other'; what: string; params: unknown };

export interface OpenOptions {
  /** The tool the "model" called: its `_meta.ui.resourceUri` names the view. */
  toolName: string;
  input: Record<string, unknown>;
  theme?: 'light' | 'dark';
  /** The style variables the host sends (default HOST_COLOURS[theme]). */
  variables?: Record<string, string>;
  /** Whether a request for full screen is granted (default) or answered with the inline mode it stays in. */
  fullscreen?: 'grant' | 'refuse';
  /** The inline frame's width (default INLINE_WIDTH). */
  inlineWidth?: number;
  /**
   * Put the resource's HTML inside a document of the host's own, as some hosts do: its <head> then lands in the
   * host's <body>, where the parser drops the view's <html>/<head> tags and keeps their children.
   */
  wrap?: boolean;
}

export interface HostApi {
  /** Renders the view of `toolName`, waits for its `initialized`, sends it the tool input. */
  open(options: OpenOptions): Promise<void>;
  /**
   * Sends the tool's full result (its `_meta` included). Returns when it was handed over, as milliseconds since the
   * epoch at high resolution (`performance.timeOrigin + performance.now()`), comparable across frames.
   */
  sendResult(result: CallToolResult): Promise<number>;
}

declare global {
  interface Window {
    /** The Node side's binding: the server's answer as JSON text. */
    elicitlyMcpJson(method: McpMethod, params: unknown): Promise<string>;
    elicitlyMcp(method: McpMethod, params: unknown): Promise<unknown>;
    elicitlyHostEvent(event: HostEvent): Promise<void>;
    elicitlyHost: HostApi;
  }
}

/** The inline frame's width by default: a chat column. */
export const INLINE_WIDTH = 760;

/**
 * The CSP a host injects for a view (spec "Content Security Policy"): the restrictive default, widened only by the
 * domains the resource declares.
 */
export function cspFor(csp: McpUiResourceCsp | undefined): string {
  const list = (domains: string[] | undefined) => (domains ?? []).join(' ');
  const resources = list(csp?.resourceDomains);
  const connect = list(csp?.connectDomains);
  return [
    "default-src 'none'",
    `script-src 'self' 'unsafe-inline' ${resources}`.trim(),
    `style-src 'self' 'unsafe-inline' ${resources}`.trim(),
    `img-src 'self' data: ${resources}`.trim(),
    `font-src 'self' ${resources}`.trim(),
    `media-src 'self' data: ${resources}`.trim(),
    connect ? `connect-src 'self' ${connect}` : "connect-src 'none'",
    csp?.frameDomains?.length ? `frame-src ${list(csp.frameDomains)}` : "frame-src 'none'",
    "object-src 'none'",
    csp?.baseUriDomains?.length ? `base-uri ${list(csp.baseUriDomains)}` : "base-uri 'none'",
  ].join('; ');
}

const event = (e: HostEvent) => void window.elicitlyHostEvent(e);
window.elicitlyMcp = async (method, params) => JSON.parse(await window.elicitlyMcpJson(method, params)) as unknown;

let bridge: AppBridge | null = null;

async function open({ toolName, input, theme = 'light', variables = HOST_COLOURS[theme], fullscreen = 'grant', inlineWidth = INLINE_WIDTH, wrap = false }: OpenOptions): Promise<void> {
  if (bridge) throw new Error('this host page shows one view; open a new page for another');
  const { tools } = (await window.elicitlyMcp('tools/list', {})) as ListToolsResult;
  const tool = tools.find((t) => t.name === toolName);
  if (!tool) throw new Error(`the server has no tool ${toolName}`);
  const uri = getToolUiResourceUri(tool);
  if (!uri) throw new Error(`${toolName} names no UI resource`);
  // Spec: a tool without visibility is visible to both; an app may call only tools whose visibility includes "app".
  const appTools = new Set(tools.filter((t) => {
    const visibility = (t._meta?.ui as { visibility?: string[] } | undefined)?.visibility;
    return visibility === undefined || visibility.includes('app');
  }).map((t) => t.name));

  const read = (await window.elicitlyMcp('resources/read', { uri })) as ReadResourceResult;
  const content = read.contents.find((c) => c.uri === uri);
  if (!content || !('text' in content)) throw new Error(`resources/read ${uri} returned no text`);
  if (content.mimeType !== RESOURCE_MIME_TYPE) throw new Error(`${uri} is ${content.mimeType}, not ${RESOURCE_MIME_TYPE}`);
  const csp = (content._meta?.ui as { csp?: McpUiResourceCsp } | undefined)?.csp;

  const iframe = document.createElement('iframe');
  iframe.id = 'app-view';
  iframe.title = 'Elicitly review';
  // Opaque origin: no same-origin access to this page, no storage, no forms, no popups, no top navigation.
  iframe.setAttribute('sandbox', 'allow-scripts');
  iframe.style.cssText = `display:block;width:${inlineWidth}px;height:120px;border:1px solid #888`;
  document.body.appendChild(iframe);

  const hostContext: McpUiHostContext = {
    theme,
    platform: 'web',
    locale: 'en-US',
    displayMode: 'inline',
    availableDisplayModes: ['inline', 'fullscreen'],
    containerDimensions: { width: inlineWidth, maxHeight: 6000 },
    styles: { variables: variables as NonNullable<McpUiHostContext['styles']>['variables'] },
  };
  let displayMode: 'inline' | 'fullscreen' = 'inline';
  let lastHeight = 120;
  const b = new AppBridge(null, { name: 'elicitly-test-host', version: '0.0.0' }, { serverTools: {}, serverResources: {}, logging: {} }, { hostContext });
  bridge = b;

  b.oncalltool = async (params) => {
    const allowed = appTools.has(params.name);
    event({ type: 'tool-call', name: params.name, allowed });
    if (!allowed) throw new Error(`tool ${params.name} is not callable by the app (its visibility does not include "app")`);
    const started = performance.now();
    const answer = (await window.elicitlyMcp('tools/call', { name: params.name, arguments: params.arguments ?? {} })) as CallToolResult;
    event({ type: 'tool-done', name: params.name, ms: performance.now() - started, isError: answer.isError === true });
    return answer;
  };
  b.onreadresource = async (params) => (await window.elicitlyMcp('resources/read', { uri: params.uri })) as ReadResourceResult;
  b.onlistresources = async () => (await window.elicitlyMcp('resources/list', {})) as never;
  b.onsizechange = ({ width, height }) => {
    event({ type: 'size', width, height });
    if (height === undefined) return;
    lastHeight = height;
    if (displayMode === 'inline') iframe.style.height = `${height}px`;
  };
  b.onrequestdisplaymode = async ({ mode }) => {
    const granted = mode === 'fullscreen' && fullscreen === 'grant' ? 'fullscreen' : 'inline';
    displayMode = granted;
    if (granted === 'fullscreen') iframe.style.cssText = 'display:block;position:fixed;inset:0;width:100vw;height:100vh;border:0';
    else iframe.style.cssText = `display:block;width:${inlineWidth}px;height:${lastHeight}px;border:1px solid #888`;
    const containerDimensions = granted === 'fullscreen' ? { width: window.innerWidth, height: window.innerHeight } : { width: inlineWidth, maxHeight: 6000 };
    b.sendHostContextChange({ displayMode: granted, containerDimensions });
    event({ type: 'display-mode', requested: mode, granted });
    return { mode: granted };
  };
  b.onloggingmessage = ({ level, data }) => event({ type: 'log', level, data });
  b.onmessage = async (params) => {
    event({ type: 'other', what: 'ui/message', params });
    return { isError: true };
  };
  b.onopenlink = async (params) => {
    event({ type: 'other', what: 'ui/open-link', params });
    return { isError: true };
  };
  b.onupdatemodelcontext = async (params) => {
    event({ type: 'other', what: 'ui/update-model-context', params });
    return {};
  };
  b.onrequestteardown = (params) => event({ type: 'other', what: 'ui/notifications/request-teardown', params });

  // Spec: nothing goes to the view before its `initialized`; the handshake starts when the view's script runs.
  const initialized = new Promise<void>((resolve) => {
    b.oninitialized = () => {
      event({ type: 'initialized', at: performance.timeOrigin + performance.now() });
      resolve();
    };
  });
  // Connected before the view loads (the frame's WindowProxy survives the srcdoc navigation), so no message is lost.
  await b.connect(new PostMessageTransport(iframe.contentWindow!, iframe.contentWindow!));
  const policy = `<meta http-equiv="Content-Security-Policy" content="${cspFor(csp)}">`;
  if (wrap) iframe.srcdoc = `<!doctype html><html lang="en"><head>${policy}<meta charset="utf-8"><title>Host frame</title></head><body><div class="host-frame">${content.text}</div></body></html>`;
  else iframe.srcdoc = /<head[^>]*>/i.test(content.text) ? content.text.replace(/<head[^>]*>/i, (head) => `${head}${policy}`) : `${policy}${content.text}`;
  await initialized;
  await b.sendToolInput({ arguments: input });
}

async function sendResult(result: CallToolResult): Promise<number> {
  if (!bridge) throw new Error('open() first');
  const at = performance.timeOrigin + performance.now();
  await bridge.sendToolResult(result);
  return at;
}

window.elicitlyHost = { open, sendResult };

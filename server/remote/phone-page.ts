import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { brotliCompressSync, constants as zlibConstants, gzipSync } from 'node:zlib';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { log } from '../log.js';
import type { RemoteConfig } from '../remote-config.js';
import { PHONE_PATH, allowedHosts, allowedOrigins, type Listener } from '../remote-config.js';

/**
 * The reviewer page the hub serves to a phone (`GET /phone/`), its manifest and icons, on the hub's port and on the
 * optional HTTPS listener. Everything else on those ports stays WebSocket only (426). The page is served only while
 * `remote.json` says enabled, only to a Host the person allowed (DNS rebinding) and never to another site's Origin;
 * nothing in a response is taken from the URL, so no path ever reaches the file system.
 */

export type PhoneAsset = 'page' | 'worker' | 'manifest' | 'icon-192' | 'icon-512';

export type PhoneRoute =
  | { kind: 'asset'; asset: PhoneAsset }
  | { kind: 'redirect'; location: string }
  | { kind: 'refuse'; status: 403 | 404 | 405 | 426; reason: string };

export interface PhoneRequest {
  method: string;
  /** The request target as sent (path and query). */
  url: string;
  host: string | undefined;
  origin: string | undefined;
}

const ASSETS: Readonly<Record<string, PhoneAsset>> = {
  [PHONE_PATH]: 'page',
  [`${PHONE_PATH}worker.js`]: 'worker',
  [`${PHONE_PATH}manifest.webmanifest`]: 'manifest',
  [`${PHONE_PATH}icon-192.png`]: 'icon-192',
  [`${PHONE_PATH}icon-512.png`]: 'icon-512',
};

/** Where one request goes, from its method, target and headers and the settings alone. */
export function routePhone(request: PhoneRequest, remote: RemoteConfig, port: number, listener: Listener = 'loopback'): PhoneRoute {
  // The raw path, not a normalised URL: only the exact targets below exist, `/phone/./` is not one of them.
  const path = request.url.split('?')[0] ?? '';
  const bare = PHONE_PATH.slice(0, -1);
  if (path !== bare && !path.startsWith(PHONE_PATH)) return { kind: 'refuse', status: 426, reason: 'WebSocket only' };
  if (!remote.enabled) return { kind: 'refuse', status: 404, reason: 'the reviewer page is off (elicitly-companion remote enable)' };
  if (!allowedHosts(remote, port, listener).includes((request.host ?? '').toLowerCase())) return { kind: 'refuse', status: 403, reason: 'this Host is not allowed' };
  if (request.origin !== undefined && !allowedOrigins(remote, port, listener).includes(request.origin)) return { kind: 'refuse', status: 403, reason: 'this Origin is not allowed' };
  if (request.method !== 'GET' && request.method !== 'HEAD') return { kind: 'refuse', status: 405, reason: 'GET or HEAD only' };
  if (path === bare) return { kind: 'redirect', location: PHONE_PATH };
  const asset = ASSETS[path];
  return asset === undefined ? { kind: 'refuse', status: 404, reason: 'not found' } : { kind: 'asset', asset };
}

const PORT_META = /<meta\s+name="elicitly-hub-port"\s+content="0"\s*\/?>/g;
const SCRIPT = /<script\b([^>]*)>([\s\S]*?)<\/script\s*>/gi;
const STYLE = /<style\b[^>]*>([\s\S]*?)<\/style\s*>/gi;

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

/**
 * The built page made ready to serve: its port filled in, and a CSP that allows exactly its one inline script and its
 * inline style (by hash, computed here from the file served, so a page rebuilt is never blocked by a stale header).
 */
export function preparePage(html: string, port: number): { ok: true; html: string; csp: string } | { ok: false; error: string } {
  const scripts = [...html.matchAll(SCRIPT)];
  const [script] = scripts;
  if (scripts.length !== 1 || !script) return { ok: false, error: `expected one inline <script>, found ${scripts.length}` };
  if (/\bsrc\s*=/i.test(script[1] ?? '')) return { ok: false, error: 'the <script> must be inline, not loaded from a src' };
  // Looked for outside the script: its code may well spell "<style".
  const styles = [...html.replace(SCRIPT, '').matchAll(STYLE)];
  if (styles.length > 1) return { ok: false, error: `expected at most one inline <style>, found ${styles.length}` };
  const metas = html.match(PORT_META)?.length ?? 0;
  if (metas !== 1) return { ok: false, error: `expected one <meta name="elicitly-hub-port" content="0">, found ${metas}` };
  const csp = [
    "default-src 'none'",
    `script-src ${sha256(script[2] ?? '')}`,
    `style-src ${styles[0] ? sha256(styles[0][1] ?? '') : "'none'"}`,
    "connect-src 'self'",
    // Its service worker (/phone/worker.js), which shows pushed notifications: nothing else may run as a worker.
    "worker-src 'self'",
    "img-src 'self' data:",
    "manifest-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
  return { ok: true, html: html.replace(PORT_META, `<meta name="elicitly-hub-port" content="${port}">`), csp };
}

const MANIFEST = JSON.stringify({
  name: 'Elicitly',
  short_name: 'Elicitly',
  start_url: PHONE_PATH,
  scope: PHONE_PATH,
  display: 'standalone',
  icons: [
    { src: `${PHONE_PATH}icon-192.png`, sizes: '192x192', type: 'image/png' },
    { src: `${PHONE_PATH}icon-512.png`, sizes: '512x512', type: 'image/png' },
  ],
});

/**
 * On every answer, refusals too: nothing here is for another site, a frame or a sniffer, and no answer is stored by a
 * cache unless it is one of the page's own files (below, revalidated by their content hash).
 */
const COMMON_HEADERS = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
  'x-frame-options': 'DENY',
  'cross-origin-resource-policy': 'same-origin',
} as const;
const NOTHING_ELSE = "default-src 'none'; frame-ancestors 'none'";

const FILES: Readonly<Record<Exclude<PhoneAsset, 'manifest'>, string>> = { page: 'phone.html', worker: 'worker.js', 'icon-192': 'icon-192.png', 'icon-512': 'icon-512.png' };

/** The service worker's own policy: it loads nothing and evaluates nothing, and talks to the hub's socket alone. */
const WORKER_CSP = "default-src 'none'; connect-src 'self'";

interface Body {
  type: string;
  body: Buffer;
  csp: string;
  /** The same bytes compressed, made once with the file: what a browser that accepts them gets. */
  br?: Buffer;
  gzip?: Buffer;
  /** A strong validator: the SHA-256 of the bytes, so a browser keeps the page and asks only whether it changed. */
  etag: string;
}

/** What a file is answered with: its bytes as read, and, for text, both compressions, made once. */
function asBody(type: string, body: Buffer, csp: string): Body {
  const etag = `"${createHash('sha256').update(body).digest('base64url')}"`;
  if (type.startsWith('image/')) return { type, body, csp, etag };
  return { type, body, csp, etag, br: brotliCompressSync(body, { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 9 } }), gzip: gzipSync(body, { level: 9 }) };
}

/** The encoding to answer with, by the request's Accept-Encoding (a `q=0` refuses one): brotli, then gzip, else none. */
function encodingFor(accept: string | undefined): 'br' | 'gzip' | null {
  const accepted = new Set<string>();
  for (const part of (accept ?? '').split(',')) {
    const [name = '', ...params] = part.split(';').map((p) => p.trim().toLowerCase());
    const q = params.find((p) => p.startsWith('q='));
    if (name !== '' && (q === undefined || Number(q.slice(2)) > 0)) accepted.add(name);
  }
  return accepted.has('br') ? 'br' : accepted.has('gzip') ? 'gzip' : null;
}

export interface PhonePageOptions {
  /** The hub's port: the page's proofs are bound to it. */
  port: number;
  /** Where the built page and icons are (`dist/server/phone/`); undefined: there is none, every asset is 404. */
  dir: string | undefined;
  /** Read per request: `remote enable`/`disable` take effect at once. */
  remote: () => RemoteConfig;
  /** The listener this handler serves: the network one answers only the configured origins' hosts. */
  listener: Listener;
}

/**
 * The hub's HTTP request handler. Each file is read once, on first use, and kept; one that is missing or broken is
 * said once in the log and answered 404 (500 for a page that cannot be served safely), never a crash.
 */
export function phoneRequestHandler(options: PhonePageOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const loaded = new Map<PhoneAsset, Promise<Body | { status: 404 | 500 }>>();

  const load = async (asset: PhoneAsset): Promise<Body | { status: 404 | 500 }> => {
    if (asset === 'manifest') return asBody('application/manifest+json', Buffer.from(MANIFEST), NOTHING_ELSE);
    const name = FILES[asset];
    if (options.dir === undefined) {
      log('error', 'the reviewer page was asked for, but this build has no phone directory', { file: name });
      return { status: 404 };
    }
    const file = join(options.dir, name);
    let bytes: Buffer;
    try {
      bytes = await readFile(file);
    } catch (error) {
      log('error', 'cannot read a file of the reviewer page; it is answered 404 until the hub restarts', { file, error: String(error) });
      return { status: 404 };
    }
    if (asset === 'worker') return asBody('text/javascript; charset=utf-8', bytes, WORKER_CSP);
    if (asset !== 'page') return asBody('image/png', bytes, NOTHING_ELSE);
    const page = preparePage(bytes.toString('utf8'), options.port);
    if (!page.ok) {
      log('error', 'the reviewer page cannot be served with its CSP; it is answered 500 until the hub restarts', { file, error: page.error });
      return { status: 500 };
    }
    return asBody('text/html; charset=utf-8', Buffer.from(page.html), page.csp);
  };

  const answer = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const route = routePhone({ method: req.method ?? '', url: req.url ?? '', host: req.headers.host, origin: typeof req.headers.origin === 'string' ? req.headers.origin : undefined }, options.remote(), options.port, options.listener);
    if (route.kind === 'refuse') {
      plain(res, route.status, route.status === 426 ? 'elicitly hub: WebSocket only\n' : `${route.reason}\n`);
      return;
    }
    if (route.kind === 'redirect') {
      res.writeHead(301, { ...COMMON_HEADERS, 'content-security-policy': NOTHING_ELSE, location: route.location, 'content-length': '0' }).end();
      return;
    }
    let pending = loaded.get(route.asset);
    if (!pending) {
      pending = load(route.asset);
      loaded.set(route.asset, pending);
    }
    const body = await pending;
    if ('status' in body) {
      plain(res, body.status, body.status === 404 ? 'not found\n' : 'the reviewer page is broken; see the hub log\n');
      return;
    }
    // The page's files may be kept by the browser, revalidated every time (`no-cache`, by their content hash): the
    // live data never comes from here but from the socket, so a kept page is never a stale review.
    const cached = { ...COMMON_HEADERS, 'cache-control': 'no-cache', etag: body.etag, vary: 'accept-encoding', 'content-security-policy': body.csp };
    if (req.headers['if-none-match'] === body.etag) {
      res.writeHead(304, cached).end();
      return;
    }
    const encoding = encodingFor(req.headers['accept-encoding']);
    const bytes = encoding === null ? body.body : (body[encoding] ?? body.body);
    const encoded = encoding !== null && body[encoding] !== undefined ? { 'content-encoding': encoding } : {};
    res.writeHead(200, { ...cached, ...encoded, 'content-type': body.type, 'content-length': String(bytes.length) });
    res.end(req.method === 'HEAD' ? undefined : bytes);
  };

  return (req, res) => {
    answer(req, res).catch((error: unknown) => {
      // A state file that cannot be read or trusted costs this request a 503, never the hub its process.
      log('error', 'a request to the hub failed; answered 503', { error: String(error) });
      if (!res.headersSent) plain(res, 503, 'the hub cannot answer this now; see its log\n');
      else res.destroy();
    });
  };
}

function plain(res: ServerResponse, status: number, text: string): void {
  const body = Buffer.from(text);
  res.writeHead(status, { ...COMMON_HEADERS, 'content-security-policy': NOTHING_ELSE, 'content-type': 'text/plain; charset=utf-8', 'content-length': String(body.length) });
  res.end(body);
}

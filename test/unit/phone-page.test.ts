import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { checkUpgrade } from '../../server/hub/upgrade-guard.js';
import type { Listener, RemoteConfig } from '../../server/remote-config.js';
import { REMOTE_OFF } from '../../server/remote-config.js';
import { preparePage, routePhone } from '../../server/remote/phone-page.js';
import { EXTENSION_ORIGIN } from '../../shared/extension-id.js';
import { PAIRING_SUBPROTOCOL, SUBPROTOCOL } from '../../shared/wire-protocol.js';

const PORT = 17391;
const ON: RemoteConfig = { ...REMOTE_OFF, enabled: true, origins: ['https://desk.tail1234.ts.net'] };
const LOOPBACK = `http://127.0.0.1:${PORT}`;

describe('routePhone', () => {
  const get = (url: string, headers: { host?: string; origin?: string } = {}, method = 'GET') => ({ method, url, host: headers.host ?? `127.0.0.1:${PORT}`, origin: headers.origin });

  it.each([
    ['anything but the page stays WebSocket only', get('/'), ON, { kind: 'refuse', status: 426 }],
    ['…even while off', get('/favicon.ico'), REMOTE_OFF, { kind: 'refuse', status: 426 }],
    ['/phonebook is not the page', get('/phonebook'), ON, { kind: 'refuse', status: 426 }],
    ['off: the page is not there', get('/phone/'), REMOTE_OFF, { kind: 'refuse', status: 404 }],
    ['the page', get('/phone/'), ON, { kind: 'asset', asset: 'page' }],
    ['a query changes nothing', get('/phone/?utm=1'), ON, { kind: 'asset', asset: 'page' }],
    ['the manifest', get('/phone/manifest.webmanifest'), ON, { kind: 'asset', asset: 'manifest' }],
    ['an icon', get('/phone/icon-512.png'), ON, { kind: 'asset', asset: 'icon-512' }],
    ['the service worker', get('/phone/worker.js'), ON, { kind: 'asset', asset: 'worker' }],
    ['/phone redirects', get('/phone'), ON, { kind: 'redirect', location: '/phone/' }],
    ['no path is normalised', get('/phone/./'), ON, { kind: 'refuse', status: 404 }],
    ['an unknown file', get('/phone/phone.html'), ON, { kind: 'refuse', status: 404 }],
    ['a configured host', get('/phone/', { host: 'desk.tail1234.ts.net' }), ON, { kind: 'asset', asset: 'page' }],
    ['another host (DNS rebinding)', get('/phone/', { host: 'evil.example' }), ON, { kind: 'refuse', status: 403 }],
    ['loopback on another port', get('/phone/', { host: '127.0.0.1:80' }), ON, { kind: 'refuse', status: 403 }],
    ['no Host', get('/phone/', { host: '' }), ON, { kind: 'refuse', status: 403 }],
    ['a configured origin', get('/phone/', { origin: 'https://desk.tail1234.ts.net' }), ON, { kind: 'asset', asset: 'page' }],
    ['the loopback origin', get('/phone/', { origin: LOOPBACK }), ON, { kind: 'asset', asset: 'page' }],
    ['another origin', get('/phone/', { origin: 'https://evil.example' }), ON, { kind: 'refuse', status: 403 }],
    ['HEAD', get('/phone/', {}, 'HEAD'), ON, { kind: 'asset', asset: 'page' }],
    ['POST', get('/phone/', {}, 'POST'), ON, { kind: 'refuse', status: 405 }],
  ] as const)('%s', (_what, request, remote, expected) => {
    expect(routePhone(request, remote, PORT)).toMatchObject(expected);
  });

  // The HTTPS listener of ELICITLY_REMOTE_LISTEN is for phones on the network: only the configured origins' hosts.
  it.each([
    ['the network listener: a configured host', get('/phone/', { host: 'desk.tail1234.ts.net' }), ON, { kind: 'asset', asset: 'page' }],
    ['the network listener: a configured origin', get('/phone/', { host: 'desk.tail1234.ts.net', origin: 'https://desk.tail1234.ts.net' }), ON, { kind: 'asset', asset: 'page' }],
    ['the network listener: no loopback Host', get('/phone/'), ON, { kind: 'refuse', status: 403 }],
    ['the network listener: no loopback Origin', get('/phone/', { host: 'desk.tail1234.ts.net', origin: LOOPBACK }), ON, { kind: 'refuse', status: 403 }],
    ['the network listener: off, the page is not there', get('/phone/', { host: 'desk.tail1234.ts.net' }), { ...ON, enabled: false }, { kind: 'refuse', status: 404 }],
    ['the network listener: anything else is WebSocket only', get('/', { host: 'desk.tail1234.ts.net' }), ON, { kind: 'refuse', status: 426 }],
  ] as const)('%s', (_what, request, remote, expected) => {
    expect(routePhone(request, remote, PORT, 'network')).toMatchObject(expected);
  });
});

describe('preparePage', () => {
  const sha = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;
  const page = (body: string) => `<html><head><meta name="elicitly-hub-port" content="0">${body}</head></html>`;

  it('fills in the port and hashes the one script and the style (a "<style" in the script is not a style)', () => {
    const script = 'let s = "<style>x</style>"; document.title = s;';
    const prepared = preparePage(page(`<style>a{b:c}</style><script type="module" crossorigin>${script}</script>`), PORT);
    expect(prepared.ok).toBe(true);
    if (!prepared.ok) return;
    expect(prepared.html).toContain(`<meta name="elicitly-hub-port" content="${PORT}">`);
    expect(prepared.csp).toContain(`script-src ${sha(script)};`);
    expect(prepared.csp).toContain(`style-src ${sha('a{b:c}')};`);
    expect(prepared.csp).toContain("frame-ancestors 'none'");
    // Its own service worker may run, nothing else as a worker.
    expect(prepared.csp).toContain("worker-src 'self';");
  });

  it.each([
    ['no script', page('<style>a{}</style>'), 'one inline <script>'],
    ['two scripts', page('<script>1</script><script>2</script>'), 'found 2'],
    ['a script from a src', page('<script src="x.js"></script>'), 'inline'],
    ['two styles', page('<style>a{}</style><style>b{}</style><script>1</script>'), 'at most one inline <style>'],
    ['no port meta', '<html><script>1</script></html>', 'elicitly-hub-port'],
  ])('refuses a page with %s', (_what, html, error) => {
    const prepared = preparePage(html, PORT);
    expect(prepared.ok).toBe(false);
    if (!prepared.ok) expect(prepared.error).toContain(error);
  });

  it('a page without a style gets style-src none', () => {
    const prepared = preparePage(page('<script>1</script>'), PORT);
    expect(prepared.ok && prepared.csp).toContain("style-src 'none'");
  });
});

describe('checkUpgrade: devices', () => {
  const upgrade = (headers: Record<string, string>) => ({ headers }) as IncomingMessage;
  const config = (remote: RemoteConfig, backoffUntil = 0, listener: Listener = 'loopback', unproven = 0) => ({
    port: PORT,
    listener,
    remote: () => remote,
    pairedOrigins: () => [],
    pairingBackoffUntil: () => backoffUntil,
    unproven: () => unproven,
    maxUnproven: 16,
    now: () => 1000,
  });
  const headers = (origin: string | undefined, host = `127.0.0.1:${PORT}`, protocols = SUBPROTOCOL) => ({
    host,
    'sec-websocket-protocol': protocols,
    ...(origin === undefined ? {} : { origin }),
  });

  it.each([
    ['the loopback origin, on', headers(LOOPBACK), ON, { ok: true, role: 'device', pairing: false }],
    ['localhost, on', headers(`http://localhost:${PORT}`), ON, { ok: true, role: 'device' }],
    ['a configured origin through its host', headers('https://desk.tail1234.ts.net', 'desk.tail1234.ts.net'), ON, { ok: true, role: 'device' }],
    ['to pair', headers(LOOPBACK, undefined, `${SUBPROTOCOL}, ${PAIRING_SUBPROTOCOL}`), ON, { ok: true, role: 'device', pairing: true, pairingOnly: false }],
    ['the loopback origin, off', headers(LOOPBACK), REMOTE_OFF, { ok: false, status: 403 }],
    ['a configured host while off', headers('https://desk.tail1234.ts.net', 'desk.tail1234.ts.net'), { ...ON, enabled: false }, { ok: false, status: 403 }],
    ['another origin', headers('https://evil.example'), ON, { ok: false, status: 403 }],
    ['another host', headers(LOOPBACK, 'evil.example'), ON, { ok: false, status: 403 }],
    ['a relay through a configured host', headers(undefined, 'desk.tail1234.ts.net'), ON, { ok: true, role: 'relay' }],
    ['the extension, as before', headers(EXTENSION_ORIGIN), ON, { ok: true, role: 'extension' }],
  ] as const)('%s', (_what, h, remote, expected) => {
    expect(checkUpgrade(upgrade(h), config(remote))).toMatchObject(expected);
  });

  it.each([
    ['a configured origin through its host: a device', headers('https://desk.tail1234.ts.net', 'desk.tail1234.ts.net'), ON, { ok: true, role: 'device', pairing: false }],
    ['a configured origin, to pair', headers('https://desk.tail1234.ts.net', 'desk.tail1234.ts.net', `${SUBPROTOCOL}, ${PAIRING_SUBPROTOCOL}`), ON, { ok: true, role: 'device', pairing: true }],
    ['the loopback Host', headers(LOOPBACK), ON, { ok: false, status: 403 }],
    ['the loopback origin through a configured host', headers(LOOPBACK, 'desk.tail1234.ts.net'), ON, { ok: false, status: 403 }],
    ['a relay (no Origin)', headers(undefined, 'desk.tail1234.ts.net'), ON, { ok: false, status: 403 }],
    ['the extension', headers(EXTENSION_ORIGIN, 'desk.tail1234.ts.net'), ON, { ok: false, status: 403 }],
    ['a configured origin while off', headers('https://desk.tail1234.ts.net', 'desk.tail1234.ts.net'), { ...ON, enabled: false }, { ok: false, status: 403 }],
  ] as const)('the network listener admits only devices from a configured origin: %s', (_what, h, remote, expected) => {
    expect(checkUpgrade(upgrade(h), config(remote, 0, 'network'))).toMatchObject(expected);
  });

  it('each listener counts its own room; what the network listener never admits is refused before its room is counted', () => {
    const configured = headers('https://desk.tail1234.ts.net', 'desk.tail1234.ts.net');
    expect(checkUpgrade(upgrade(configured), config(ON, 0, 'network', 16))).toMatchObject({ ok: false, status: 503 });
    expect(checkUpgrade(upgrade(headers(undefined, 'desk.tail1234.ts.net')), config(ON, 0, 'network', 16))).toMatchObject({ ok: false, status: 403 });
    expect(checkUpgrade(upgrade(configured), config(ON, 0, 'network', 15))).toMatchObject({ ok: true, role: 'device' });
  });

  it('a device origin that failed to pair waits (429); without asking to pair it is not held back', () => {
    expect(checkUpgrade(upgrade(headers(LOOPBACK, undefined, `${SUBPROTOCOL}, ${PAIRING_SUBPROTOCOL}`)), config(ON, 5000))).toMatchObject({ ok: false, status: 429 });
    expect(checkUpgrade(upgrade(headers(LOOPBACK)), config(ON, 5000))).toMatchObject({ ok: true, role: 'device' });
  });
});

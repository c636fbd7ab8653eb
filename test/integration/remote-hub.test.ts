import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StateDir } from '../../server/state-dir.js';
import { newNonce, peerProof } from '../../shared/hub-auth.js';
import { CLOSE_AUTH_FAILED, CLOSE_UNKNOWN_KEY, DEVICE_RECENT, PROTOCOL_VERSION } from '../../shared/wire-protocol.js';
import type { Harness } from '../helpers/mcp-harness.js';
import { connect } from '../helpers/mcp-harness.js';
import type { DeviceKey } from '../helpers/scripted-device.js';
import { ScriptedDevice, openDevice } from '../helpers/scripted-device.js';
import { ScriptedExtension, freePort, pairedKey } from '../helpers/scripted-extension.js';

/**
 * The hub's side of the phone reviewer, against the built server: a device (the page's socket, scripted) pairs with
 * the one-time code, sees and decides what an agent files, loses its socket when it is removed; the page and its
 * headers; every refusal at the door; an exported relay key; the HTTPS listener with the test certificate.
 */

const CERT = fileURLToPath(new URL('../fixtures/localhost-cert.pem', import.meta.url));
const KEY = fileURLToPath(new URL('../fixtures/localhost-key.pem', import.meta.url));
const ca = readFileSync(CERT);

const dir = mkdtempSync(join(tmpdir(), 'elicitly-remote-hub-'));
const phoneDir = mkdtempSync(join(tmpdir(), 'elicitly-phone-fixture-'));
const port = freePort();
let httpsPort = freePort();
while (httpsPort === port) httpsPort = freePort();
const LOOPBACK = `http://127.0.0.1:${port}`;
const LOCALHOST = `http://localhost:${port}`;
const TLS_ORIGIN = `https://localhost:${httpsPort}`;
const WS = `ws://127.0.0.1:${port}/phone/socket`;
const state = new StateDir(dir);

// A stand-in for part B's built page: one inline script (whose code spells "<style>", which is not a style) and style.
const SCRIPT = 'document.title = "phone <style> in a string";';
const STYLE = 'body{color:#123}';
const PAGE = `<!doctype html><html><head><meta charset="utf-8"><meta name="elicitly-hub-port" content="0"><style>${STYLE}</style><script type="module">${SCRIPT}</script></head><body></body></html>`;
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
writeFileSync(join(phoneDir, 'phone.html'), PAGE);
writeFileSync(join(phoneDir, 'icon-192.png'), PNG);
writeFileSync(join(phoneDir, 'icon-512.png'), Buffer.concat([PNG, Buffer.from([0])]));

const env = {
  ELICITLY_STATE_DIR: dir,
  ELICITLY_PORT: String(port),
  ELICITLY_MIN_TIMEOUT_SECONDS: '1',
  ELICITLY_PHONE_DIR: phoneDir,
  ELICITLY_REMOTE_LISTEN: `127.0.0.1:${httpsPort}`,
  ELICITLY_REMOTE_CERT: CERT,
  ELICITLY_REMOTE_KEY: KEY,
};

let agent: Harness;
let ext: ScriptedExtension;
let deviceKey: DeviceKey;
const opened: { close: () => void }[] = [];

const json = (result: { content?: unknown[] }) => JSON.parse((result.content?.[0] as { text: string }).text) as Record<string, unknown>;

function enable(enabled: boolean): void {
  state.updateRemote((current) => ({ ...current, enabled, origins: [TLS_ORIGIN] }));
}

async function device(origin = LOOPBACK, url = WS): Promise<ScriptedDevice> {
  return openDevice(await ScriptedDevice.connect(url, { origin }, opened));
}

async function fileApproval(message: string): Promise<string> {
  const created = await agent.callTool('elicit_approval', { message, context: { step: message } });
  expect(created.isError).toBeFalsy();
  expect(created.structuredContent).toMatchObject({ status: 'pending', reviewer: { connected: true } });
  return (created.structuredContent as { elicitationId: string }).elicitationId;
}

interface Response {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** One HTTP(S) request to the hub, with the headers a test forges; bounded. */
function fetchHub(path: string, options: { method?: string; headers?: Record<string, string>; tls?: boolean } = {}): Promise<Response> {
  return new Promise((resolve, reject) => {
    const common = { host: '127.0.0.1', path, method: options.method ?? 'GET', headers: options.headers ?? {}, timeout: 5000 };
    const done = (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    };
    const req = options.tls
      ? httpsRequest({ ...common, port: httpsPort, ca, servername: 'localhost', headers: { host: `localhost:${httpsPort}`, ...options.headers } }, done)
      : httpRequest({ ...common, port }, done);
    req.on('timeout', () => req.destroy(new Error(`${path} timed out`)));
    req.on('error', reject);
    req.end();
  });
}

async function closedWithin(peer: { closed: Promise<{ code: number; reason: string }> }, ms: number): Promise<{ code: number; reason: string; ms: number }> {
  const start = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the socket was still open after ${ms} ms`)), ms);
  });
  try {
    const closed = await Promise.race([peer.closed, timeout]);
    return { ...closed, ms: Date.now() - start };
  } finally {
    clearTimeout(timer);
  }
}

beforeAll(async () => {
  enable(true);
  agent = await connect('v2-2025', { env });
  // The first approval call makes this process the hub.
  expect(json(await agent.callTool('elicit_status', { elicitationId: 'el_none' }))).toMatchObject({ error: 'not_found' });
  ext = await ScriptedExtension.connect(port, { key: pairedKey(dir) });
  opened.push(ext);
});

afterAll(async () => {
  for (const peer of opened) peer.close();
  await agent?.close();
  rmSync(dir, { recursive: true, force: true });
  rmSync(phoneDir, { recursive: true, force: true });
});

describe('a device pairs, sees and decides', () => {
  it('pairs with the one-time code: the paired frame opens with the code, the welcome has pending, recent and no rules', async () => {
    const { code } = state.createPairing();
    const phone = openDevice(await ScriptedDevice.connect(WS, { origin: LOOPBACK, pairing: true }, opened));
    const { key, welcome } = await phone.pair(code, port, 'Test phone');
    deviceKey = key;
    expect(state.pairedDevices()).toEqual([expect.objectContaining({ keyId: key.keyId, key: key.key, name: 'Test phone' })]);
    // A code opens exactly one pairing.
    expect(state.pairing()).toBeUndefined();
    expect(welcome).toMatchObject({ protocol: PROTOCOL_VERSION, pending: [], rules: [], recent: [] });
  });

  it('an agent files, the device decides, elicit_result says decidedVia "phone"; the next welcome carries it as recent', async () => {
    const phone = await device();
    expect(await phone.handshake(deviceKey, port)).toMatchObject({ type: 'welcome', rules: [] });
    const id = await fileApproval('Deploy to staging?');
    expect((await phone.next<'request.created'>((m) => m.type === 'request.created')).request).toMatchObject({ elicitationId: id, status: 'pending' });
    phone.send({ type: 'decide', elicitationId: id, idempotencyKey: 'phone-1', decision: 'approved', values: {} });
    expect(await phone.next((m) => m.type === 'decision.result')).toMatchObject({ ok: true, status: 'approved', elicitationId: id });
    expect(await ext.next((m) => m.type === 'request.removed' && m.elicitationId === id)).toMatchObject({ status: 'approved', decidedVia: 'phone' });
    expect((await agent.callTool('elicit_result', { elicitationId: id })).structuredContent).toMatchObject({ status: 'consumed', decision: 'approved', decidedVia: 'phone' });

    const again = await device();
    const welcome = await again.handshake(deviceKey, port);
    expect(welcome?.recent?.[0]).toMatchObject({ elicitationId: id, status: 'consumed' });
    expect(welcome?.recent?.length).toBeLessThanOrEqual(DEVICE_RECENT);
  });

  it('the first decision wins between a device and the extension; the loser gets already_decided', async () => {
    const phone = await device();
    await phone.handshake(deviceKey, port);
    const id = await fileApproval('Rotate the keys?');
    await phone.next((m) => m.type === 'request.created' && m.request.elicitationId === id);
    await ext.next((m) => m.type === 'request.created' && m.request.elicitationId === id);
    phone.send({ type: 'decide', elicitationId: id, idempotencyKey: 'race-phone', decision: 'approved', values: {} });
    ext.send({ type: 'decide', elicitationId: id, idempotencyKey: 'race-ext', decision: 'rejected', comment: 'no' });
    const [fromPhone, fromExt] = await Promise.all([
      phone.next<'decision.result'>((m) => m.type === 'decision.result' && m.elicitationId === id),
      ext.next<'decision.result'>((m) => m.type === 'decision.result' && m.elicitationId === id),
    ]);
    expect([fromPhone.ok, fromExt.ok].filter(Boolean)).toHaveLength(1);
    const loser = fromPhone.ok ? fromExt : fromPhone;
    expect(loser.reason).toBe('already_decided');
    const result = (await agent.callTool('elicit_result', { elicitationId: id })).structuredContent;
    expect(result).toMatchObject({ decidedVia: fromPhone.ok ? 'phone' : 'extension' });
  });

  it('a device may not save a rule, decide with one, or make a call', async () => {
    const phone = await device();
    await phone.handshake(deviceKey, port);
    phone.send({ type: 'rule.save', changeId: 'c1', rule: { effect: 'allow', match: { tool: 'Bash' }, expiresAt: null } });
    expect(await phone.next((m) => m.type === 'error')).toMatchObject({ code: 'forbidden' });
    phone.send({ type: 'call', callId: 'x', method: 'info', params: {} });
    expect(await phone.next((m) => m.type === 'error')).toMatchObject({ code: 'forbidden' });
  });

  it('removing the device closes its socket with 4003 at once, and its key opens nothing more', async () => {
    const { code } = state.createPairing();
    const pairing = openDevice(await ScriptedDevice.connect(WS, { origin: LOOPBACK, pairing: true }, opened));
    const { key } = await pairing.pair(code, port);
    expect(state.pairedDevices().find((d) => d.keyId === key.keyId)?.name).toBe('Phone');
    const phone = await device();
    await phone.handshake(key, port);
    expect(state.removePairedDevice(key.keyId)).toBe(true);
    const [first, second] = await Promise.all([closedWithin(phone, 5000), closedWithin(pairing, 5000)]);
    expect(first.code).toBe(CLOSE_UNKNOWN_KEY);
    expect(second.code).toBe(CLOSE_UNKNOWN_KEY);
    console.log(`removed device cut off in ${Math.max(first.ms, second.ms)} ms`);
    const after = await device();
    after.send({ type: 'hello', protocol: PROTOCOL_VERSION, role: 'device', client: { name: 't', version: '1' }, nonce: newNonce(), keyId: key.keyId });
    expect((await closedWithin(after, 5000)).code).toBe(CLOSE_UNKNOWN_KEY);
  });
});

describe('refusals at the door and in the handshake', () => {
  it.each([
    ['another site', 'https://evil.example'],
    ['loopback on another port', `http://127.0.0.1:${port + 1}`],
    ['the literal null origin', 'null'],
  ])('an Origin of %s is refused with 403', async (_what, origin) => {
    expect(await ScriptedDevice.connect(WS, { origin }, opened)).toEqual({ status: 403 });
  });

  it('a Host that is not allowed is refused with 403 (DNS rebinding), even from an allowed origin', async () => {
    expect(await ScriptedDevice.connect(WS, { origin: LOOPBACK, client: { headers: { host: `evil.example:${port}` } } }, opened)).toEqual({ status: 403 });
  });

  it('a device with the role of an extension is refused: the connection decides the role', async () => {
    const phone = await device();
    phone.send({ type: 'hello', protocol: PROTOCOL_VERSION, role: 'extension', client: { name: 't', version: '1' }, nonce: newNonce(), keyId: deviceKey.keyId });
    expect(await phone.next((m) => m.type === 'error')).toMatchObject({ code: 'forbidden' });
  });

  it('a proof made for another origin fails (4001)', async () => {
    const phone = await device(LOOPBACK);
    expect(await phone.handshake(deviceKey, port, LOCALHOST)).toBeNull();
    expect((await closedWithin(phone, 5000)).code).toBe(CLOSE_AUTH_FAILED);
  });

  it('a wrong pairing code closes with 4001, and that origin then waits (429)', async () => {
    state.createPairing();
    const guess = openDevice(await ScriptedDevice.connect(WS, { origin: LOCALHOST, pairing: true }, opened));
    const nonce = newNonce();
    guess.send({ type: 'hello', protocol: PROTOCOL_VERSION, role: 'device', client: { name: 't', version: '1' }, nonce, pairing: true });
    const challenge = await guess.next<'challenge'>((m) => m.type === 'challenge');
    guess.send({ type: 'auth', proof: await peerProof('0123456789ab', { port, role: 'device', origin: LOCALHOST }, challenge.nonce, nonce) });
    expect((await closedWithin(guess, 5000)).code).toBe(CLOSE_AUTH_FAILED);
    expect(await ScriptedDevice.connect(WS, { origin: LOCALHOST, pairing: true }, opened)).toEqual({ status: 429 });
    // Only pairing waits: a paired device from that origin still gets in.
    const phone = await device(LOCALHOST);
    expect(await phone.handshake(deviceKey, port)).toMatchObject({ type: 'welcome' });
    state.clearPairing();
  });

  it('with the page off, a device origin is refused (403) and the page is 404; on again, both are back', async () => {
    enable(false);
    try {
      expect(await ScriptedDevice.connect(WS, { origin: LOOPBACK }, opened)).toEqual({ status: 403 });
      expect((await fetchHub('/phone/')).status).toBe(404);
      // The extension is not the page's business.
      const other = await ScriptedExtension.connect(port, { key: pairedKey(dir) });
      other.close();
    } finally {
      enable(true);
    }
    expect((await fetchHub('/phone/')).status).toBe(200);
    await (await device()).handshake(deviceKey, port);
  });

  it('a relay proving an exported key works, an unknown one is refused, a revoked one is cut off (4003)', async () => {
    const exported = state.addRelayKey('laptop');
    const relay = await ScriptedExtension.connect(port, { role: 'relay', key: { keyId: exported.keyId, key: exported.key } });
    opened.push(relay);
    relay.send({ type: 'call', callId: 'c1', method: 'info', params: {} });
    expect(await relay.next((m) => m.type === 'call.result')).toMatchObject({ ok: true, value: { extensionsConnected: expect.any(Number) } });

    const unknown = await ScriptedExtension.connect(port, { role: 'relay', hello: false });
    opened.push(unknown);
    unknown.send({ type: 'hello', protocol: PROTOCOL_VERSION, role: 'relay', client: { name: 't', version: '1' }, nonce: newNonce(), keyId: 'k_0000000000000000' });
    expect((await unknown.closed).code).toBe(CLOSE_UNKNOWN_KEY);

    expect(state.removeRelayKey(exported.keyId)).toBe(true);
    const cut = await closedWithin(relay, 5000);
    expect(cut.code).toBe(CLOSE_UNKNOWN_KEY);
    console.log(`revoked relay cut off in ${cut.ms} ms`);
  });
});

describe('the page', () => {
  const sha = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

  it('GET /phone/: the port filled in, a CSP with the hashes of its inline script and style, and the safe headers', async () => {
    const res = await fetchHub('/phone/');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    const body = res.body.toString('utf8');
    expect(body).toContain(`<meta name="elicitly-hub-port" content="${port}">`);
    expect(body).not.toContain('content="0"');
    const csp = res.headers['content-security-policy'];
    expect(csp).toBe(
      `default-src 'none'; script-src ${sha(SCRIPT)}; style-src ${sha(STYLE)}; connect-src 'self'; img-src 'self' data:; manifest-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
    );
    expect(res.headers).toMatchObject({ 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer', 'cache-control': 'no-store', 'x-frame-options': 'DENY' });
    const head = await fetchHub('/phone/', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    expect(head.headers['content-security-policy']).toBe(csp);
  });

  it('the manifest, the icons, /phone → /phone/', async () => {
    const manifest = await fetchHub('/phone/manifest.webmanifest', { headers: { origin: LOOPBACK } });
    expect(manifest.status).toBe(200);
    expect(manifest.headers['content-type']).toBe('application/manifest+json');
    expect(JSON.parse(manifest.body.toString())).toMatchObject({ name: 'Elicitly', start_url: '/phone/', display: 'standalone', icons: [{ src: '/phone/icon-192.png' }, { src: '/phone/icon-512.png' }] });
    const icon = await fetchHub('/phone/icon-192.png');
    expect(icon.status).toBe(200);
    expect(icon.headers['content-type']).toBe('image/png');
    expect(icon.body.equals(PNG)).toBe(true);
    expect((await fetchHub('/phone/icon-512.png')).body.length).toBe(PNG.length + 1);
    const redirect = await fetchHub('/phone');
    expect(redirect.status).toBe(301);
    expect(redirect.headers.location).toBe('/phone/');
  });

  it.each([
    ['/', {}, 426],
    ['/phone/socket', {}, 404],
    ['/phone/../secret', {}, 404],
    ['/phone/', { method: 'POST' }, 405],
    ['/phone/', { headers: { host: `evil.example:${port}` } }, 403],
    ['/phone/', { headers: { host: 'localhost' } }, 403],
    ['/phone/', { headers: { origin: 'https://evil.example' } }, 403],
    ['/phone/', { headers: { origin: LOCALHOST } }, 200],
  ] as const)('%s %j → %i', async (path, options, status) => {
    const res = await fetchHub(path, options);
    expect(res.status).toBe(status);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });
});

describe('the HTTPS listener (ELICITLY_REMOTE_LISTEN)', () => {
  it('serves the page over TLS with the hub port filled in, and refuses a Host that is not configured', async () => {
    const res = await fetchHub('/phone/', { tls: true });
    expect(res.status).toBe(200);
    expect(res.body.toString()).toContain(`<meta name="elicitly-hub-port" content="${port}">`);
    expect((await fetchHub('/', { tls: true })).status).toBe(426);
    expect((await fetchHub('/phone/', { tls: true, headers: { host: `127.0.0.1:${httpsPort}` } })).status).toBe(403);
  });

  it('a device pairs and decides over wss from the configured origin, its proofs bound to that origin', async () => {
    const url = `wss://localhost:${httpsPort}/phone/socket`;
    const { code } = state.createPairing();
    const phone = openDevice(await ScriptedDevice.connect(url, { origin: TLS_ORIGIN, pairing: true, client: { ca } }, opened));
    const { key, welcome } = await phone.pair(code, port, 'TLS phone');
    expect(welcome.recent).toEqual(expect.any(Array));
    const id = await fileApproval('Over TLS?');
    await phone.next((m) => m.type === 'request.created' && m.request.elicitationId === id);
    phone.send({ type: 'decide', elicitationId: id, idempotencyKey: 'tls-1', decision: 'rejected', comment: 'not now' });
    expect(await phone.next((m) => m.type === 'decision.result')).toMatchObject({ ok: true, status: 'rejected' });
    expect((await agent.callTool('elicit_result', { elicitationId: id })).structuredContent).toMatchObject({ decision: 'rejected', decidedVia: 'phone', comment: 'not now' });
    // A key paired on the TLS origin does not open a socket on the loopback one: the proof is bound to the origin.
    const elsewhere = await device(LOOPBACK);
    expect(await elsewhere.handshake(key, port, TLS_ORIGIN)).toBeNull();
    expect((await closedWithin(elsewhere, 5000)).code).toBe(CLOSE_AUTH_FAILED);
  });
});

describe('a listener that cannot bind', () => {
  it('is logged and the hub runs without it', async () => {
    const blocker = createServer();
    const taken = await new Promise<number>((resolve) => blocker.listen(0, '127.0.0.1', () => resolve((blocker.address() as { port: number }).port)));
    const otherDir = mkdtempSync(join(tmpdir(), 'elicitly-remote-bind-'));
    const otherPort = freePort();
    const other = await connect('v2-2025', { env: { ...env, ELICITLY_STATE_DIR: otherDir, ELICITLY_PORT: String(otherPort), ELICITLY_REMOTE_LISTEN: `127.0.0.1:${taken}` } });
    try {
      expect(json(await other.callTool('elicit_status', { elicitationId: 'el_none' }))).toMatchObject({ error: 'not_found' });
      expect(other.stderr()).toContain('ELICITLY_REMOTE_LISTEN: cannot listen');
    } finally {
      await other.close();
      blocker.close();
      rmSync(otherDir, { recursive: true, force: true });
    }
  });
});

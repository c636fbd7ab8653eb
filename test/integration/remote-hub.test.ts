import { createHash } from 'node:crypto';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEVICES } from '../../server/directory.js';
import { StateDir } from '../../server/state-dir.js';
import { EXTENSION_ORIGIN } from '../../shared/extension-id.js';
import { newNonce, peerProof } from '../../shared/hub-auth.js';
import { checkApprovalInput } from '../../shared/approval-input.js';
import { DEVICE_RECENT, type Params, type Result } from '../../shared/peer-calls.js';
import type { ReviewRequest } from '../../shared/review-request.js';
import { CLOSE_AUTH_FAILED, CLOSE_CODE_REPLACED, CLOSE_REMOTE_OFF, CLOSE_UNKNOWN_KEY, PROTOCOL_VERSION, SUBPROTOCOL } from '../../shared/wire-protocol.js';
import WebSocket, { type ClientOptions } from 'ws';
import type { Harness } from '../helpers/mcp-harness.js';
import { connect } from '../helpers/mcp-harness.js';
import { bashPermission } from '../fixtures/permission.js';
import { answerTo, helloParams, resultIds, resultOf } from '../helpers/peer-frames.js';
import type { ScriptedPeer } from '../helpers/scripted-peer.js';
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

/** A decision from a peer: the domain answer (the call's result), or the test fails on an error. */
async function decide(peer: ScriptedPeer, params: Params<'decide'>): Promise<Result<'decide'>> {
  return resultOf('decide', await peer.next(answerTo(peer.request('decide', params))));
}

/** The HTTP status of an upgrade without an Origin (as a relay dials), 101 when it opened; bounded. */
function upgradeStatus(url: string, client: ClientOptions): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, [SUBPROTOCOL], client);
    opened.push({ close: () => socket.terminate() });
    const timer = setTimeout(() => reject(new Error(`opening ${url} timed out`)), 5000);
    socket.on('error', () => undefined);
    socket.once('open', () => (clearTimeout(timer), resolve(101)));
    socket.once('unexpected-response', (_req, res) => (clearTimeout(timer), res.resume(), resolve(res.statusCode ?? 0)));
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
  it('pairs with the one-time code: the key in the auth’s answer opens with the code, is kept with its origin, the welcome has pending, recent and no rules', async () => {
    const { code } = state.createPairing('device');
    const phone = openDevice(await ScriptedDevice.connect(WS, { origin: LOOPBACK, pairing: true }, opened));
    const { key, welcome } = await phone.pair(code, port, 'Test phone');
    deviceKey = key;
    // Kept with the origin it was paired on: the only one its key opens a socket from.
    expect(state.pairedDevices()).toEqual([expect.objectContaining({ keyId: key.keyId, key: key.key, name: 'Test phone', origin: LOOPBACK })]);
    // A code opens exactly one pairing.
    expect(state.pairing('device')).toBeUndefined();
    expect(welcome).toMatchObject({ protocol: PROTOCOL_VERSION, pending: [], rules: [], recent: [] });
  });

  it('issue 35 (4): the extension\'s `pair` after `remote enable` leaves the phone\'s code alone: the phone still pairs with it', async () => {
    const { code } = state.createPairing('device');
    const extensionCode = state.createPairing('extension').code;
    expect(extensionCode).not.toBe(code);
    const phone = openDevice(await ScriptedDevice.connect(WS, { origin: LOOPBACK, pairing: true }, opened));
    const { key } = await phone.pair(code, port, 'Second phone');
    expect(state.pairing('extension')?.code).toBe(extensionCode);
    expect(state.removePairedDevice(key.keyId)).toBe(true);
    state.clearPairing('extension');
  });

  it('issue 35 (4): a page holding a code a newer `remote pair` replaced is told so (4006) before any proof, and the code it holds counts as no guess', async () => {
    const older = state.createPairing('device');
    const newer = state.createPairing('device');
    const phone = openDevice(await ScriptedDevice.connect(WS, { origin: LOOPBACK, pairing: true }, opened));
    phone.request('hello', helloParams('device', newNonce(), { pairing: true, pairingSerial: older.serial }));
    const closed = await closedWithin(phone, 5000);
    expect(closed.code).toBe(CLOSE_CODE_REPLACED);
    expect(closed.reason).toContain('remote pair');
    expect(state.pairing('device')).toMatchObject({ code: newer.code, failures: 0 });
    // The newest code, with its serial, pairs as ever.
    const fresh = openDevice(await ScriptedDevice.connect(WS, { origin: LOOPBACK, pairing: true }, opened));
    const { key } = await fresh.pair(newer.code, port, 'Newest phone');
    expect(state.removePairedDevice(key.keyId)).toBe(true);
  });

  it('an agent files, the device decides, elicit_result says decidedVia "phone"; the next welcome carries it as recent', async () => {
    const phone = await device();
    expect(await phone.handshake(deviceKey, port)).toMatchObject({ protocol: PROTOCOL_VERSION, rules: [] });
    const id = await fileApproval('Deploy to staging?');
    expect((await phone.notice('request.created')).request).toMatchObject({ elicitationId: id, status: 'pending' });
    expect(await decide(phone, { elicitationId: id, idempotencyKey: 'phone-1', decision: 'approved', values: {} })).toMatchObject({ ok: true, status: 'approved' });
    expect(await ext.notice('request.removed', (p) => p.elicitationId === id)).toMatchObject({ status: 'approved', decidedVia: 'phone' });
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
    await phone.notice('request.created', (p) => p.request.elicitationId === id);
    await ext.notice('request.created', (p) => p.request.elicitationId === id);
    const [fromPhone, fromExt] = await Promise.all([
      decide(phone, { elicitationId: id, idempotencyKey: 'race-phone', decision: 'approved', values: {} }),
      decide(ext, { elicitationId: id, idempotencyKey: 'race-ext', decision: 'rejected', comment: 'no' }),
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
    const rule = { effect: 'allow', match: { tool: 'Bash' }, expiresAt: null } as const;
    const save = await phone.call('rule.save', { rule });
    expect(save.error).toMatchObject({ code: 'forbidden' });
    const remove = await phone.call('rule.delete', { id: 'rule_0123456789abcdef' });
    expect(remove.error).toMatchObject({ code: 'forbidden' });
    for (const method of ['info', 'status', 'view'] as const) {
      const answer = method === 'info' ? await phone.call('info', {}) : await phone.call(method, { id: 'el_x' });
      expect(answer.error, method).toMatchObject({ code: 'forbidden' });
    }
    // A decision carrying a rule is refused whole: the rule is named, and the request stays pending.
    const id = await fileApproval('With a rule?');
    await phone.notice('request.created', (p) => p.request.elicitationId === id);
    const withRule = await decide(phone, { elicitationId: id, idempotencyKey: 'phone-rule', decision: 'approved', values: {}, rule });
    expect(withRule).toMatchObject({ ok: false, reason: 'invalid' });
    expect(withRule.issues?.[0]?.path).toBe('rule');
    expect((await agent.callTool('elicit_status', { elicitationId: id })).structuredContent).toEqual({ status: 'pending' });
    expect(await decide(ext, { elicitationId: id, idempotencyKey: 'ext-after-rule', decision: 'rejected' })).toMatchObject({ ok: true });
  });

  it('removing the device closes its socket with 4003 at once, and its key opens nothing more', async () => {
    const { code } = state.createPairing('device');
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
    after.request('hello', helloParams('device', newNonce(), { keyId: key.keyId }));
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
    const hello = await phone.call('hello', helloParams('extension', newNonce(), { keyId: deviceKey.keyId }));
    expect(hello.error).toMatchObject({ code: 'forbidden' });
  });

  it('a proof made for another origin fails (4001)', async () => {
    const phone = await device(LOOPBACK);
    expect(await phone.handshake(deviceKey, port, LOCALHOST)).toBeNull();
    expect((await closedWithin(phone, 5000)).code).toBe(CLOSE_AUTH_FAILED);
  });

  it('a wrong pairing code closes with 4001, and that origin then waits (429)', async () => {
    state.createPairing('device');
    const guess = openDevice(await ScriptedDevice.connect(WS, { origin: LOCALHOST, pairing: true }, opened));
    const nonce = newNonce();
    const challenge = resultOf('hello', await guess.next(answerTo(guess.request('hello', helloParams('device', nonce, { pairing: true })))));
    const auth = guess.request('auth', { proof: await peerProof('0123456789ab', { port, role: 'device', origin: LOCALHOST }, challenge.nonce, nonce) });
    expect((await closedWithin(guess, 5000)).code).toBe(CLOSE_AUTH_FAILED);
    expect(guess.received.filter(answerTo(auth))).toEqual([]);
    expect(await ScriptedDevice.connect(WS, { origin: LOCALHOST, pairing: true }, opened)).toEqual({ status: 429 });
    // Only pairing waits: a device paired on that origin still gets in (a key opens sockets only from the origin it was
    // paired on, so this is one paired there, not the loopback one of the tests above).
    const local = state.addPairedDevice('localhost phone', LOCALHOST);
    const phone = await device(LOCALHOST);
    expect(await phone.handshake({ keyId: local.keyId, key: local.key }, port)).toMatchObject({ protocol: PROTOCOL_VERSION });
    expect(state.removePairedDevice(local.keyId)).toBe(true);
    state.clearPairing('device');
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

  it('finding 3: turning the page off closes an open device socket at once (4005), and its key is kept', async () => {
    const phone = await device();
    await phone.handshake(deviceKey, port);
    const id = await fileApproval('Still there?');
    await phone.notice('request.created', (p) => p.request.elicitationId === id);
    try {
      enable(false);
      const closed = await closedWithin(phone, 5000);
      expect(closed.code).toBe(CLOSE_REMOTE_OFF);
      console.log(`device cut off ${closed.ms} ms after the page was turned off`);
    } finally {
      enable(true);
    }
    // Its decide, had it raced the close, took nothing: the request waits for the person.
    expect((await agent.callTool('elicit_status', { elicitationId: id })).structuredContent).toEqual({ status: 'pending' });
    expect(state.pairedDevices().map((d) => d.keyId)).toContain(deviceKey.keyId);
    // On again: the same key opens a socket, and the request is there to decide.
    const again = await device();
    expect((await again.handshake(deviceKey, port))?.pending.map((r) => r.elicitationId)).toContain(id);
    expect(await decide(again, { elicitationId: id, idempotencyKey: 'after-off', decision: 'rejected' })).toMatchObject({ ok: true, status: 'rejected' });
  });

  it('a relay proving an exported key works, an unknown one is refused, a revoked one is cut off (4003)', async () => {
    const exported = state.addRelayKey('laptop');
    const relay = await ScriptedExtension.connect(port, { role: 'relay', key: { keyId: exported.keyId, key: exported.key } });
    opened.push(relay);
    expect((await relay.call('info', {})).result).toMatchObject({ extensionsConnected: expect.any(Number) });

    const unknown = await ScriptedExtension.connect(port, { role: 'relay', hello: false });
    opened.push(unknown);
    unknown.request('hello', helloParams('relay', newNonce(), { keyId: 'k_0000000000000000' }));
    expect((await unknown.closed).code).toBe(CLOSE_UNKNOWN_KEY);
    expect(resultIds(unknown.received)).toEqual([]);

    expect(state.removeRelayKey(exported.keyId)).toBe(true);
    const cut = await closedWithin(relay, 5000);
    expect(cut.code).toBe(CLOSE_UNKNOWN_KEY);
    console.log(`revoked relay cut off in ${cut.ms} ms`);
  });
});

/** An approval as an agent files it, for a relay's own `create`. */
function approvalRequest(message: string): ReviewRequest {
  const checked = checkApprovalInput({ message, context: { message } });
  if (!checked.ok) throw new Error('fixture invalid');
  return checked.request;
}

const createParams = (id: string, request: ReviewRequest): Params<'create'> => ({ id, request, renderedTemplate: null, timeoutMs: 60_000, requester: { client: 'remote-agent', pid: 1 } });

describe('finding 1: an exported relay key acts on its own requests only', () => {
  it('it reads, waits on and cancels its own requests, finds no other agent’s, never views, decides or lists or changes rules, and files a permission request only with the grant', async () => {
    const exported = state.addRelayKey('least privilege');
    const remote = await ScriptedExtension.connect(port, { role: 'relay', key: { keyId: exported.keyId, key: exported.key } });
    opened.push(remote);
    // Another agent's request (this computer's), and one of its own.
    const theirs = await fileApproval('Another agent’s secret');
    const own = 'el_remote_own_1';
    expect((await remote.call('create', createParams(own, approvalRequest('Mine')))).result).toMatchObject({ elicitationId: own, status: 'pending' });
    await ext.notice('request.created', (p) => p.request.elicitationId === own);

    // Its own: there to read, wait on; its answer is not in yet.
    expect((await remote.call('status', { id: own })).result).toEqual({ status: 'pending' });
    expect((await remote.call('await', { id: own, waitMs: 50 })).result).toEqual({ status: 'pending' });
    expect((await remote.call('result', { id: own })).error).toMatchObject({ code: 'pending' });
    // Another agent's: as if it did not exist, whatever the call.
    for (const method of ['status', 'result', 'cancel'] as const) expect((await remote.call(method, { id: theirs })).error, method).toMatchObject({ code: 'not_found' });
    expect((await remote.call('await', { id: theirs, waitMs: 50 })).error).toMatchObject({ code: 'not_found' });
    // Nor can it take that id for a request of its own.
    expect((await remote.call('create', createParams(theirs, approvalRequest('Taken')))).error).toMatchObject({ code: 'invalid' });
    // Its queue is its own: one pending, whatever else waits on this hub.
    expect((await remote.call('info', {})).result).toMatchObject({ pending: 1 });

    // What only a reviewer, the chat's review or this computer may do: refused, for its own request as for theirs.
    for (const id of [own, theirs]) {
      expect((await remote.call('view', { id })).error, `view ${id}`).toMatchObject({ code: 'forbidden' });
      expect((await remote.call('decide', { elicitationId: id, idempotencyKey: `remote-${id}`, decision: 'approved' })).error, `decide ${id}`).toMatchObject({ code: 'forbidden' });
    }
    expect((await remote.call('rules', {})).error).toMatchObject({ code: 'forbidden' });
    expect((await remote.call('rule.delete', { id: 'rule_0123456789abcdef' })).error).toMatchObject({ code: 'forbidden' });
    expect((await remote.call('rule.save', { rule: { effect: 'allow', match: { tool: 'Bash' }, expiresAt: null } })).error).toMatchObject({ code: 'forbidden' });
    expect((await agent.callTool('elicit_status', { elicitationId: theirs })).structuredContent).toEqual({ status: 'pending' });

    // A host's permission prompt: not without the grant (nothing filed), and with it, yes.
    const refused = await remote.call('create', createParams('el_remote_perm_1', bashPermission('make deploy')));
    expect(refused.error).toMatchObject({ code: 'forbidden' });
    expect(refused.error?.message).toContain('--allow permission');
    expect(json(await agent.callTool('elicit_status', { elicitationId: 'el_remote_perm_1' }))).toMatchObject({ error: 'not_found' });
    const granted = state.addRelayKey('remote hooks', ['permission']);
    const hooks = await ScriptedExtension.connect(port, { role: 'relay', key: { keyId: granted.keyId, key: granted.key } });
    opened.push(hooks);
    expect((await hooks.call('create', createParams('el_remote_perm_2', bashPermission('make deploy')))).result).toMatchObject({ status: 'pending' });
    // Granted a permission request, not another key's requests.
    expect((await hooks.call('status', { id: own })).error).toMatchObject({ code: 'not_found' });

    // Control: a relay with the install key sees every request.
    const local = await ScriptedExtension.connect(port, { role: 'relay', key: { key: state.relayKey() } });
    opened.push(local);
    for (const id of [own, theirs, 'el_remote_perm_2']) expect((await local.call('status', { id })).result, id).toEqual({ status: 'pending' });

    // Its own, it may withdraw; the others are left to the person.
    expect((await remote.call('cancel', { id: own })).result).toEqual({ status: 'canceled' });
    expect((await hooks.call('cancel', { id: 'el_remote_perm_2' })).result).toEqual({ status: 'canceled' });
    expect(await decide(ext, { elicitationId: theirs, idempotencyKey: 'ext-theirs', decision: 'rejected' })).toMatchObject({ ok: true });
    expect(state.removeRelayKey(exported.keyId)).toBe(true);
    expect(state.removeRelayKey(granted.keyId)).toBe(true);
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
      `default-src 'none'; script-src ${sha(SCRIPT)}; style-src ${sha(STYLE)}; connect-src 'self'; worker-src 'self'; img-src 'self' data:; manifest-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
    );
    // Kept by the browser but revalidated by its content hash: a kept page is never a stale review (its data is the socket's).
    expect(res.headers).toMatchObject({ 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer', 'cache-control': 'no-cache', 'x-frame-options': 'DENY', vary: 'accept-encoding' });
    expect(res.headers['content-encoding']).toBeUndefined();
    const head = await fetchHub('/phone/', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    expect(head.headers['content-security-policy']).toBe(csp);
  });

  it('issue 35: compressed by Accept-Encoding (brotli, else gzip), the same bytes once decoded; unchanged, a 304 by its hash', async () => {
    const plainPage = await fetchHub('/phone/');
    const br = await fetchHub('/phone/', { headers: { 'accept-encoding': 'gzip, deflate, br' } });
    expect(br.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(br.body).equals(plainPage.body)).toBe(true);
    expect(br.body.length).toBeLessThan(plainPage.body.length);
    const gz = await fetchHub('/phone/', { headers: { 'accept-encoding': 'gzip, br;q=0' } });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.body).equals(plainPage.body)).toBe(true);
    expect((await fetchHub('/phone/', { headers: { 'accept-encoding': 'identity' } })).body.equals(plainPage.body)).toBe(true);
    // The icons are PNG already: sent as they are.
    expect((await fetchHub('/phone/icon-192.png', { headers: { 'accept-encoding': 'br' } })).headers['content-encoding']).toBeUndefined();

    const etag = plainPage.headers.etag;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
    const again = await fetchHub('/phone/', { headers: { 'if-none-match': String(etag) } });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
    expect((await fetchHub('/phone/', { headers: { 'if-none-match': '"another"' } })).status).toBe(200);
    // A refusal is never kept.
    expect((await fetchHub('/phone/', { headers: { host: `evil.example:${port}` } })).headers['cache-control']).toBe('no-store');
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
    // A loopback origin is the loopback listener's, not the network's.
    expect((await fetchHub('/phone/', { tls: true, headers: { origin: LOOPBACK } })).status).toBe(403);
    expect((await fetchHub('/phone/', { tls: true, headers: { origin: TLS_ORIGIN } })).status).toBe(200);
  });

  it('a device pairs and decides over wss from the configured origin, its proofs bound to that origin', async () => {
    const url = `wss://localhost:${httpsPort}/phone/socket`;
    const { code } = state.createPairing('device');
    const phone = openDevice(await ScriptedDevice.connect(url, { origin: TLS_ORIGIN, pairing: true, client: { ca } }, opened));
    const { key, welcome } = await phone.pair(code, port, 'TLS phone');
    expect(welcome.recent).toEqual(expect.any(Array));
    expect(state.pairedDevices().find((d) => d.keyId === key.keyId)?.origin).toBe(TLS_ORIGIN);
    const id = await fileApproval('Over TLS?');
    await phone.notice('request.created', (p) => p.request.elicitationId === id);
    expect(await decide(phone, { elicitationId: id, idempotencyKey: 'tls-1', decision: 'rejected', comment: 'not now' })).toMatchObject({ ok: true, status: 'rejected' });
    expect((await agent.callTool('elicit_result', { elicitationId: id })).structuredContent).toMatchObject({ decision: 'rejected', decidedVia: 'phone', comment: 'not now' });
  });

  it('finding 4: a key paired on the TLS origin opens no socket from the loopback one, even with its proof bound there (4003 at its hello)', async () => {
    const url = `wss://localhost:${httpsPort}/phone/socket`;
    const { code } = state.createPairing('device');
    const paired = openDevice(await ScriptedDevice.connect(url, { origin: TLS_ORIGIN, pairing: true, client: { ca } }, opened));
    const { key } = await paired.pair(code, port, 'TLS only');
    // The page on another allowed origin holding the key (carried there, or read there): its hello is refused before
    // any challenge, so no proof, bound to whichever origin, gets it further.
    const elsewhere = await device(LOOPBACK);
    elsewhere.request('hello', helloParams('device', newNonce(), { keyId: key.keyId }));
    expect((await closedWithin(elsewhere, 5000)).code).toBe(CLOSE_UNKNOWN_KEY);
    expect(resultIds(elsewhere.received)).toEqual([]);
    // Control: from its own origin the same key still opens a socket.
    const home = openDevice(await ScriptedDevice.connect(url, { origin: TLS_ORIGIN, client: { ca } }, opened));
    expect(await home.handshake(key, port)).toMatchObject({ protocol: PROTOCOL_VERSION });
    expect(state.removePairedDevice(key.keyId)).toBe(true);
  });

  it('a device paired before origins were recorded (its entry has none) opens nothing: it pairs again', async () => {
    const legacy = { keyId: 'k_00000000000000aa', name: 'Old phone', key: 'ab'.repeat(32), pairedAt: Date.now() };
    const file = join(dir, DEVICES.name);
    const current = JSON.parse(readFileSync(file, 'utf8')) as { version: 1; devices: unknown[] };
    writeFileSync(file, JSON.stringify({ ...current, devices: [...current.devices, legacy] }), { mode: 0o600 });
    const entry = state.pairedDevices().find((d) => d.keyId === legacy.keyId);
    expect(entry).toMatchObject({ name: 'Old phone' });
    expect(entry).not.toHaveProperty('origin');
    const old = await device(LOOPBACK);
    old.request('hello', helloParams('device', newNonce(), { keyId: legacy.keyId }));
    expect((await closedWithin(old, 5000)).code).toBe(CLOSE_UNKNOWN_KEY);
    expect(resultIds(old.received)).toEqual([]);
    expect(state.removePairedDevice(legacy.keyId)).toBe(true);
  });

  it('finding 2: the network listener admits only devices from a configured origin with a configured Host: no relay, no extension, no loopback origin or Host (403)', async () => {
    const url = `wss://localhost:${httpsPort}/phone/socket`;
    const tls = { ca };
    // No Origin: a relay (here with the install key's subprotocol, as a relay dials). The extension's origin. A loopback
    // origin, allowed on the loopback listener only.
    expect(await upgradeStatus(url, tls)).toBe(403);
    expect(await ScriptedDevice.connect(url, { origin: EXTENSION_ORIGIN, client: tls }, opened)).toEqual({ status: 403 });
    expect(await ScriptedDevice.connect(url, { origin: LOOPBACK, client: tls }, opened)).toEqual({ status: 403 });
    // The configured origin with a loopback Host (the network listener answers only the configured hosts).
    expect(await ScriptedDevice.connect(url, { origin: TLS_ORIGIN, client: { ...tls, headers: { host: `127.0.0.1:${httpsPort}` } } }, opened)).toEqual({ status: 403 });
    // Control: the configured origin and Host are let in.
    const phone = openDevice(await ScriptedDevice.connect(url, { origin: TLS_ORIGIN, client: tls }, opened));
    phone.close();
  });

  it('finding 2: silent sockets filling the network listener’s room (503 there) leave the loopback room free for the desk', async () => {
    const url = `wss://localhost:${httpsPort}/phone/socket`;
    const held: ScriptedDevice[] = [];
    let refused: number | undefined;
    for (let i = 0; i < 40 && refused === undefined; i++) {
      const peer = await ScriptedDevice.connect(url, { origin: TLS_ORIGIN, client: { ca } }, opened);
      if (peer instanceof ScriptedDevice) held.push(peer);
      else refused = peer.status;
    }
    expect(refused).toBe(503);
    expect(held.length).toBeLessThanOrEqual(16);
    // Meanwhile, on loopback: a relay, an extension and a device all get in and through their handshake.
    const relay = await ScriptedExtension.connect(port, { role: 'relay', key: { key: state.relayKey() } });
    const other = await ScriptedExtension.connect(port, { key: pairedKey(dir) });
    expect(await (await device()).handshake(deviceKey, port)).toMatchObject({ protocol: PROTOCOL_VERSION });
    relay.close();
    other.close();
    held.forEach((peer) => peer.socket.terminate());
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

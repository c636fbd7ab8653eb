import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { EXTENSION_ORIGIN } from '../../shared/extension-id.js';
import type { HubFrame } from '../../shared/wire-protocol.js';
import { CLOSE_PROTOCOL_MISMATCH, PROTOCOL_VERSION, SUBPROTOCOL, isAnswer } from '../../shared/wire-protocol.js';
import { PEER_METHODS, parseResult } from '../../shared/peer-calls.js';
import type { Harness } from '../helpers/mcp-harness.js';
import { connect } from '../helpers/mcp-harness.js';
import { StateDir } from '../../server/state-dir.js';
import { newNonce } from '../../shared/hub-auth.js';
import { ScriptedExtension, freePort, pairedKey, type ScriptedOptions } from '../helpers/scripted-extension.js';
import { ScriptedPeer } from '../helpers/scripted-peer.js';
import { prng } from '../helpers/prng.js';
import { answerTo, errorOf, errorWith, helloParams, resultIds, resultOf } from '../helpers/peer-frames.js';

const dir = mkdtempSync(join(tmpdir(), 'elicitly-hub-security-'));
const port = freePort();
const url = `ws://127.0.0.1:${port}`;
const env = { ELICITLY_STATE_DIR: dir, ELICITLY_PORT: String(port), ELICITLY_MIN_TIMEOUT_SECONDS: '1' };
const HANDSHAKE_TIMEOUT_MS = 5000;

let agent: Harness;
const opened: { close: () => void }[] = [];

const json = (result: { content?: unknown[] }) => JSON.parse((result.content?.[0] as { text: string }).text) as Record<string, unknown>;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  agent = await connect('v2-2025', { env });
  // The first approval-family call makes this process the hub.
  const warm = await agent.callTool('elicit_status', { elicitationId: 'el_none' });
  expect(json(warm)).toMatchObject({ error: 'not_found' });
});

afterAll(async () => {
  for (const peer of opened) peer.close();
  await agent?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function extension(options: ScriptedOptions = {}): Promise<ScriptedExtension> {
  const ext = await ScriptedExtension.connect(port, { key: pairedKey(dir), ...options });
  opened.push(ext);
  return ext;
}

type Handshake = { opened: true; protocol: string } | { opened: false; status: number };

/** Attempts a WebSocket upgrade with the `ws` client; with no `origin`, no Origin header is sent at all. */
function handshake(protocols: string[], origin?: string): Promise<Handshake> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const socket = new WebSocket(url, protocols, origin === undefined ? {} : { origin });
    const settle = (outcome: Handshake | Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    };
    const timer = setTimeout(() => {
      socket.terminate();
      settle(new Error(`handshake with ${JSON.stringify(protocols)} timed out`));
    }, HANDSHAKE_TIMEOUT_MS);
    socket.on('error', (error) => settle(error));
    socket.once('open', () => {
      const protocol = socket.protocol;
      socket.close();
      settle({ opened: true, protocol });
    });
    socket.once('unexpected-response', (_req, res) => {
      res.resume();
      const status = res.statusCode ?? 0;
      socket.terminate();
      settle({ opened: false, status });
    });
  });
}

type RawOutcome = { upgraded: boolean; status: number };

/** A hand-made upgrade request, for headers the `ws` client will not let a test forge (Host). */
function rawUpgrade(headers: Record<string, string>): Promise<RawOutcome> {
  return new Promise((resolve, reject) => {
    const req = request({
      host: '127.0.0.1',
      port,
      path: '/',
      timeout: HANDSHAKE_TIMEOUT_MS,
      headers: {
        Connection: 'Upgrade',
        Upgrade: 'websocket',
        'Sec-WebSocket-Version': '13',
        'Sec-WebSocket-Key': randomBytes(16).toString('base64'),
        ...headers,
      },
    });
    req.once('response', (res) => {
      res.resume();
      resolve({ upgraded: false, status: res.statusCode ?? 0 });
    });
    req.once('upgrade', (res, socket) => {
      socket.destroy();
      resolve({ upgraded: true, status: res.statusCode ?? 0 });
    });
    req.once('timeout', () => req.destroy(new Error('raw upgrade timed out')));
    req.once('error', reject);
    req.end();
  });
}

/** A bare peer socket (e.g. a relay, which sends no Origin) that keeps what the hub sends, handed out by match (bounded). */
async function openPeer(protocols: string[], origin?: string): Promise<ScriptedPeer> {
  const socket = new WebSocket(url, protocols, origin === undefined ? {} : { origin });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('open timed out')), HANDSHAKE_TIMEOUT_MS);
    socket.once('open', () => {
      clearTimeout(timer);
      resolve();
    });
    socket.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.once('unexpected-response', (_req, res) => {
      clearTimeout(timer);
      res.resume();
      socket.terminate();
      reject(new Error(`HTTP ${res.statusCode}`));
    });
  });
  opened.push({ close: () => socket.terminate() });
  return new ScriptedPeer(socket);
}

function waitForClose(socket: WebSocket, timeoutMs = 5000): Promise<number> {
  return new Promise((resolve, reject) => {
    if (socket.readyState === socket.CLOSED) return reject(new Error('socket already closed; code unknown'));
    const timer = setTimeout(() => reject(new Error(`socket not closed within ${timeoutMs} ms`)), timeoutMs);
    socket.once('close', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

const helloAs = (role: 'extension' | 'relay', protocol = PROTOCOL_VERSION) => helloParams(role, newNonce(), { protocol, client: { name: 'hub-security', version: '1' } });
/** A decide's answer (its result, the domain answer) by the id of its call. */
const decided = async (peer: ScriptedPeer, id: string) => resultOf('decide', await peer.next(answerTo(id)));
const isNotice = (frame: HubFrame) => !isAnswer(frame);

describe('the upgrade guard refuses before any socket exists', () => {
  it('sanity: the pinned extension origin with the subprotocol is accepted', async () => {
    expect(await handshake([SUBPROTOCOL], EXTENSION_ORIGIN)).toEqual({ opened: true, protocol: SUBPROTOCOL });
  });

  it.each(['http://localhost:3000', 'https://evil.example'])('a web page origin (%s) gets 403', async (origin) => {
    expect(await handshake([SUBPROTOCOL], origin)).toEqual({ opened: false, status: 403 });
  });

  it('another extension’s origin gets 403', async () => {
    expect(await handshake([SUBPROTOCOL], 'chrome-extension://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa')).toEqual({ opened: false, status: 403 });
  });

  it('Origin: null (a sandboxed page, a file) gets 403', async () => {
    expect(await handshake([SUBPROTOCOL], 'null')).toEqual({ opened: false, status: 403 });
  });

  it('a DNS-rebinding Host header gets 403, even with the pinned origin', async () => {
    const headers = { Origin: EXTENSION_ORIGIN, 'Sec-WebSocket-Protocol': SUBPROTOCOL };
    // Control: the same hand-made request with a loopback Host is upgraded, so the 403 below is the Host check.
    expect(await rawUpgrade({ ...headers, Host: `127.0.0.1:${port}` })).toEqual({ upgraded: true, status: 101 });
    expect(await rawUpgrade({ ...headers, Host: `evil.example:${port}` })).toEqual({ upgraded: false, status: 403 });
    expect(await rawUpgrade({ ...headers, Host: `localhost:${port + 1}` })).toEqual({ upgraded: false, status: 403 });
  });

  it('no credential travels in the upgrade any more: an old-style auth.<secret> subprotocol is just ignored', async () => {
    const secret = new StateDir(dir).relayKey();
    const relay = await openPeer([SUBPROTOCOL, `auth.${secret}`]);
    // Still unproven: its first call is refused as one made before the handshake.
    const id = relay.request('decide', { elicitationId: 'el_x', idempotencyKey: 'k', decision: 'approved' });
    expect(errorOf(await relay.next(answerTo(id)))).toMatchObject({ code: 'forbidden' });
    relay.socket.close();
  });

  it('a missing elicitly.v1 subprotocol gets 403, even with the pinned origin', async () => {
    expect(await handshake([], EXTENSION_ORIGIN)).toEqual({ opened: false, status: 403 });
    expect(await handshake(['elicitly.v2'], EXTENSION_ORIGIN)).toEqual({ opened: false, status: 403 });
  });
});

describe('accepted sockets: framing and message validation', () => {
  it('an oversized frame closes that socket with 1009 and the hub keeps serving others', async () => {
    const big = await extension();
    big.socket.on('error', () => undefined);
    const closed = waitForClose(big.socket);
    big.send('x'.repeat(Math.floor(1.1 * 1024 * 1024)));
    expect(await closed).toBe(1009);

    const next = await extension({ hello: false });
    expect(await next.handshake()).toMatchObject({ protocol: PROTOCOL_VERSION });
    next.close();
  });

  it('malformed JSON, a frame that is no call nor notice and a binary frame are answered with invalid (id null); an unknown method with unknown_method; the connection stays usable', async () => {
    const ext = await extension();
    ext.send('{"method": "heartbeat", ');
    expect(errorOf(await ext.next(answerTo(null)))).toMatchObject({ code: 'invalid' });
    ext.send({ type: 'definitely-not-a-message', t: 1 });
    expect(errorOf(await ext.next(answerTo(null)))).toMatchObject({ code: 'invalid' });
    ext.socket.send(Buffer.from([1, 2, 3]), { binary: true });
    expect(errorOf(await ext.next(answerTo(null)))).toMatchObject({ code: 'invalid' });
    // A well-framed call of a method the map does not have is answered with its own id.
    ext.send({ id: 'u1', method: 'definitely-not-a-method', params: {} });
    expect(errorOf(await ext.next(answerTo('u1')))).toMatchObject({ code: 'unknown_method' });

    const id = ext.request('decide', { elicitationId: 'el_nobody', idempotencyKey: 'k-usable', decision: 'rejected' });
    expect(await decided(ext, id)).toEqual({ ok: false, reason: 'not_found' });
    expect(ext.socket.readyState).toBe(ext.socket.OPEN);
    ext.close();
  });

  it('a decide that fails its schema is answered with its call’s id, so the extension can stop re-sending it', async () => {
    const ext = await extension();
    ext.send({ id: 'd-bad', method: 'decide', params: { elicitationId: 'el_x', idempotencyKey: 'k-bad', decision: 'maybe' } });
    const error = errorOf(await ext.next(answerTo('d-bad')));
    expect(error).toMatchObject({ code: 'invalid' });
    // The path is the params' own, as the engine's refusals name them.
    expect(error.issues?.[0]?.path).toBe('decision');
    ext.close();
  });

  it('calls before the handshake are refused (forbidden), a notice before it is ignored, and nothing else is sent', async () => {
    const ext = await extension({ hello: false });
    ext.send({ method: 'heartbeat', params: { t: 1 } });
    const id = ext.request('decide', { elicitationId: 'el_x', idempotencyKey: 'k', decision: 'approved' });
    expect(errorOf(await ext.next(answerTo(id)))).toMatchObject({ code: 'forbidden' });
    const rule = ext.request('rule.delete', { id: 'rule_0123456789abcdef' });
    expect(errorOf(await ext.next(answerTo(rule)))).toMatchObject({ code: 'forbidden' });
    // The notice was not answered (notices never are), and nothing reached a socket that has not proved a key.
    expect(ext.received).toEqual([]);
    ext.close();
  });

  it('auth before hello, and a second hello, are refused as invalid; a refused hello of the wrong role leaves the handshake to do', async () => {
    const ext = await extension({ hello: false });
    const early = await ext.call('auth', { proof: 'ab'.repeat(32) });
    expect(early.error).toMatchObject({ code: 'invalid' });
    expect((await ext.call('hello', helloAs('relay'))).error).toMatchObject({ code: 'forbidden' });
    // The socket is still open and still unproven: the real handshake goes through.
    const welcome = await ext.handshake();
    expect(welcome).toMatchObject({ protocol: PROTOCOL_VERSION });
    const again = await ext.call('hello', helloAs('extension'));
    // Proven now: a hello is no longer a call for this socket.
    expect(again.error).toMatchObject({ code: 'forbidden' });
    ext.close();

    // A second hello on a socket already challenged.
    const key = pairedKey(dir);
    const challenged = await extension({ hello: false });
    expect((await challenged.call('hello', { ...helloAs('extension'), keyId: key.keyId ?? '' })).result).toMatchObject({ nonce: expect.any(String) });
    expect((await challenged.call('hello', { ...helloAs('extension'), keyId: key.keyId ?? '' })).error).toMatchObject({ code: 'invalid' });
    challenged.close();
  });

  it('a hello with another protocol closes the socket with 4002 naming the hub’s; the wrong role is forbidden', async () => {
    const ext = await extension({ hello: false });
    const wrongRole = ext.request('hello', helloAs('relay'));
    expect(errorOf(await ext.next(answerTo(wrongRole)))).toMatchObject({ code: 'forbidden' });
    const id = ext.request('decide', { elicitationId: 'el_x', idempotencyKey: 'k', decision: 'approved' });
    expect(errorOf(await ext.next(answerTo(id)))).toMatchObject({ code: 'forbidden' });
    ext.send({ id: 'future', method: 'hello', params: { ...helloAs('extension', 99), features: ['from-the-future'] } });
    expect(await ext.closed).toEqual({ code: CLOSE_PROTOCOL_MISMATCH, reason: `hub speaks protocol ${PROTOCOL_VERSION}` });
    // No call was ever answered with a result: no challenge, no welcome.
    expect(resultIds(ext.received)).toEqual([]);
  });
});

describe('a peer of protocol 8 still learns of the mismatch', () => {
  it.each(['extension', 'relay'] as const)('its own hello ({ type: "hello", protocol: 8 }) from a %s is closed with 4002 naming the hub’s protocol, nothing answered', async (role) => {
    const peer = role === 'relay' ? await openPeer([SUBPROTOCOL]) : await extension({ hello: false });
    peer.send({ type: 'hello', protocol: 8, role, client: { name: 'protocol-8', version: '1' }, nonce: newNonce() });
    expect(await peer.closed).toEqual({ code: CLOSE_PROTOCOL_MISMATCH, reason: `hub speaks protocol ${PROTOCOL_VERSION}` });
    expect(peer.received).toEqual([]);
  });
});

const FUZZ_SEED = 0x5eed_2025;
const FUZZ_FRAMES = 1000;
const FUZZ_MAX_BYTES = 64 * 1024;
/** Every method of the map, the notices both ways, and names of protocol 8's frames (which are just unknown now). */
const METHODS = [...PEER_METHODS, 'heartbeat', 'abort', 'request.created', 'request.removed', 'rules.changed', 'call', 'call.abort', 'welcome', 'decision.result', 'call.result', 'appDecide', 'ruleRemove'];
const FIELD_NAMES = ['protocol', 'role', 'client', 't', 'nonce', 'proof', 'keyId', 'pairing', 'elicitationId', 'idempotencyKey', 'decision', 'values', 'included', 'comment', 'callId', 'method', 'params', 'result', 'error', 'rule', 'id', 'waitMs', 'match', 'effect', '__proto__', 'constructor', 'type'];

function fuzzer(seed: number) {
  const rand = prng(seed);
  const int = (n: number) => Math.floor(rand() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)] as T;
  const hugeNumbers = [1e308, -1e308, Number.MAX_SAFE_INTEGER + 2, -0, 5e-324, 2 ** 64, 1.7976931348623157e308, -(2 ** 63)];

  const randomString = (max: number): string => {
    let s = '';
    const length = int(max);
    for (let i = 0; i < length; i++) s += String.fromCharCode(rand() < 0.8 ? 32 + int(95) : int(0x10000));
    return s;
  };
  const randomNumber = (): number => (rand() < 0.3 ? pick(hugeNumbers) : (rand() - 0.5) * 10 ** int(20));

  const value = (depth: number): unknown => {
    const roll = int(depth > 4 ? 5 : 8);
    if (roll === 0) return null;
    if (roll === 1) return rand() < 0.5;
    if (roll === 2) return randomNumber();
    if (roll === 3 || roll === 4) return randomString(40);
    if (roll === 5) return Array.from({ length: int(6) }, () => value(depth + 1));
    // Null prototype: a "__proto__" key becomes an ordinary own property that JSON.stringify sends.
    const object = Object.create(null) as Record<string, unknown>;
    for (let i = int(6); i > 0; i--) object[rand() < 0.5 ? pick(FIELD_NAMES) : randomString(10)] = value(depth + 1);
    return object;
  };

  /** A call or notice of a known name with random fields: mostly refused by the envelope or the method's schema. */
  const typedMessage = (): Record<string, unknown> => {
    const message = Object.create(null) as Record<string, unknown>;
    const params = Object.create(null) as Record<string, unknown>;
    for (let i = int(7); i > 0; i--) (rand() < 0.3 ? message : params)[pick(FIELD_NAMES)] = value(2);
    // Sometimes plausible values, to get past the first checks into the handlers.
    if (rand() < 0.3) Object.assign(params, { elicitationId: `el_${randomString(8)}`, idempotencyKey: randomString(12), decision: pick(['approved', 'rejected']) });
    message.method = pick(METHODS);
    message.params = params;
    if (rand() < 0.7) message.id = randomString(12) || 'x';
    // Only this protocol: a hello naming another closes the socket by design (tested on its own above).
    if (message.method === 'hello') params.protocol = PROTOCOL_VERSION;
    return message;
  };

  /** Well-formed messages with random contents: they pass validation and reach the hub's handlers. */
  const wellFormed = (): Record<string, unknown> => {
    const id = `el_${randomString(20) || 'x'}`;
    const callId = `c_${int(1e9)}`;
    switch (int(5)) {
      case 0:
        return { method: 'heartbeat', params: { t: randomNumber() } };
      case 1:
        return { method: 'abort', params: { id: callId } };
      case 2:
        return {
          id: callId,
          method: 'decide',
          params: {
            elicitationId: id,
            idempotencyKey: randomString(30) || 'k',
            decision: pick(['approved', 'rejected']),
            ...(rand() < 0.5 ? { values: Object.assign(Object.create(null) as Record<string, unknown>, { [pick(FIELD_NAMES)]: value(1) }) } : {}),
            ...(rand() < 0.3 ? { included: Array.from({ length: int(5) }, () => randomString(10)) } : {}),
            ...(rand() < 0.3 ? { comment: randomString(200) } : {}),
          },
        };
      case 3:
        // An agent's and the app's methods: not for an extension, whatever their params.
        return { id: callId, method: pick(['create', 'status', 'await', 'result', 'cancel', 'info', 'paired', 'view', 'rules']), params: { id, waitMs: randomNumber() } };
      default:
        // Only this protocol: another one closes the socket by design (tested on its own above).
        return { id: callId, method: 'hello', params: { protocol: PROTOCOL_VERSION, role: pick(['extension', 'relay']), client: { name: randomString(20), version: randomString(10) }, nonce: newNonce() } };
    }
  };

  const deep = (): string => {
    const depth = 1000 + int(20_000);
    if (rand() < 0.5) return '['.repeat(depth) + ']'.repeat(depth);
    const nested = '{"a":'.repeat(Math.floor(depth / 4)) + '1' + '}'.repeat(Math.floor(depth / 4));
    return `{"id":"deep","method":"${pick(METHODS)}","params":{"values":${nested}}}`;
  };

  const hugeNumberText = (): string => {
    const digits = '9'.repeat(1 + int(30_000));
    return pick([
      `{"method":"heartbeat","params":{"t":${digits}}}`,
      `{"method":"heartbeat","params":{"t":1e${digits.slice(0, 6)}}}`,
      `{"id":"h","method":"hello","params":{"protocol":${digits},"role":"extension","client":{"name":"f","version":"1"}}}`,
      `{"method":"heartbeat","params":{"t":-${digits}.${digits}}}`,
      digits,
    ]);
  };

  /** One frame: a string sent as a text frame, or (rarely) a Buffer sent as binary. */
  return (): string | Buffer => {
    const kind = int(10);
    let frame: string | Buffer;
    if (kind < 2) frame = Buffer.from(Array.from({ length: int(4000) }, () => int(256))).toString('utf8');
    else if (kind < 4) frame = JSON.stringify(value(0));
    else if (kind < 5) frame = JSON.stringify(typedMessage());
    else if (kind < 7) frame = JSON.stringify(wellFormed());
    else if (kind < 8) frame = deep();
    else if (kind < 9) frame = hugeNumberText();
    else frame = Buffer.from(Array.from({ length: int(2000) }, () => int(256)));
    const bytes = typeof frame === 'string' ? Buffer.byteLength(frame) : frame.length;
    return bytes < FUZZ_MAX_BYTES ? frame : '{"method":"heartbeat"}';
  };
}

describe('fuzzing one extension does not hurt the hub or other extensions', () => {
  it(`survives ${FUZZ_FRAMES} random frames (seed ${FUZZ_SEED.toString(16)}) while a good extension completes an approval`, async () => {
    const good = await extension();
    // Through the handshake, so well-formed frames reach the handlers (decide, the other calls, notices) rather than stopping at forbidden.
    const fuzz = await extension();
    let fuzzClosed: number | undefined;
    void fuzz.closed.then(({ code }) => (fuzzClosed = code));
    const next = fuzzer(FUZZ_SEED);

    // The fuzz's pace is part of the scenario: against the hub's rate limit (500 at once, 200 a second), batches of 100
    // every 200 ms get most frames to the handlers and the last ones refused as rate_limited.
    const BATCH = 100;
    const BATCH_EVERY_MS = 200;
    let twoBatchesSent: () => void = () => undefined;
    const underWay = new Promise<void>((resolve) => (twoBatchesSent = resolve));
    const sendAll = async () => {
      for (let sent = 0; sent < FUZZ_FRAMES; sent += BATCH) {
        for (let i = 0; i < BATCH && sent + i < FUZZ_FRAMES; i++) {
          const frame = next();
          if (fuzz.socket.readyState !== fuzz.socket.OPEN) throw new Error(`fuzz socket closed (code ${fuzzClosed}) after ${sent + i} frames`);
          fuzz.socket.send(frame, { binary: typeof frame !== 'string' });
        }
        if (sent === BATCH) twoBatchesSent();
        await sleep(BATCH_EVERY_MS);
      }
    };
    const fuzzing = sendAll();

    // Meanwhile: a new request reaches the well-behaved extension, which decides it.
    await Promise.race([underWay, fuzzing]);
    const created = await agent.callTool('elicit_approval', { message: 'after fuzz', context: { a: 1 } });
    expect(created.isError).toBeFalsy();
    const id = (created.structuredContent as { elicitationId: string }).elicitationId;
    const pushed = await good.notice('request.created', (p) => p.request.elicitationId === id);
    expect(pushed.request).toMatchObject({ elicitationId: id, status: 'pending', message: 'after fuzz' });
    expect(await decided(good, good.request('decide', { elicitationId: 'el_nobody', idempotencyKey: 'k-good', decision: 'rejected' }))).toMatchObject({ ok: false, reason: 'not_found' });

    await fuzzing;
    // The hub has drained the backlog once it answers a last decision sent after every fuzz frame (the socket is one
    // ordered stream); the fuzzing socket is still up (no frame was over the limit or invalid UTF-8).
    const drained = fuzz.request('decide', { elicitationId: 'el_drained', idempotencyKey: 'k-drained', decision: 'rejected' }, 'k-drained');
    expect(await decided(fuzz, drained)).toMatchObject({ ok: false, reason: 'not_found' });
    expect(fuzzClosed).toBeUndefined();
    expect(fuzz.received.length).toBeGreaterThan(0);
    const errors = fuzz.received.flatMap((m) => (isAnswer(m) && 'error' in m ? [m.error] : []));
    const unexpected = errors.filter((e) => !['invalid', 'rate_limited', 'forbidden', 'unknown_method'].includes(e.code));
    expect(unexpected).toEqual([]);
    // The fuzz got past validation: random decisions were answered (not_found), calls were refused (forbidden).
    expect(fuzz.received.some((m) => isAnswer(m) && 'result' in m && parseResult('decide', m.result).data?.reason === 'not_found')).toBe(true);
    expect(fuzz.received.some(errorWith('forbidden'))).toBe(true);
    // Notices the extension hears are the hub's own (events, heartbeats), never an answer to anything it sent.
    expect(fuzz.received.filter(isNotice).every((m) => 'method' in m && ['request.created', 'request.removed', 'rules.changed', 'heartbeat'].includes(m.method))).toBe(true);

    // Afterwards: the good extension decides, and the agent gets the approved envelope.
    expect(await decided(good, good.request('decide', { elicitationId: id, idempotencyKey: 'after-fuzz', decision: 'approved' }))).toMatchObject({ ok: true, status: 'approved' });
    expect((await agent.callTool('elicit_result', { elicitationId: id })).structuredContent).toEqual({
      status: 'consumed',
      receipt: expect.objectContaining({ decidedVia: 'extension', ledgerIndex: expect.any(Number) }),
      decision: 'approved',
      action: 'submit',
      decidedVia: 'extension',
      context: { a: 1 },
      values: {},
    });
    expect((await agent.callTool('elicit_status', { elicitationId: id })).structuredContent).toEqual({ status: 'consumed' });

    // A fresh extension is still welcomed by the same hub.
    const later = await extension({ hello: false });
    expect(await later.handshake()).toMatchObject({ protocol: PROTOCOL_VERSION });
    fuzz.socket.close();
    later.close();
    good.close();
  });
});

// Mutual authentication and pairing against the real server process: who may connect, what a peer without the key
// learns (nothing), and every limit on guessing.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type WebSocket from 'ws';
import { StateDir } from '../../server/state-dir.js';
import { EXTENSION_ORIGIN } from '../../shared/extension-id.js';
import { newNonce, peerProof } from '../../shared/hub-auth.js';
import type { HelloParams } from '../../shared/peer-calls.js';
import {
  CLOSE_AUTH_FAILED,
  CLOSE_NO_PAIRING,
  CLOSE_UNKNOWN_KEY,
  PAIRING_SUBPROTOCOL,
  PROTOCOL_VERSION,
  SUBPROTOCOL,
} from '../../shared/wire-protocol.js';
import type { Harness } from '../helpers/mcp-harness.js';
import { SERVER_ENTRY, connect } from '../helpers/mcp-harness.js';
import { answerTo, callFrame, errorOf, helloParams, hubFrames, resultIds, resultOf } from '../helpers/peer-frames.js';
import type { RawPeer } from '../helpers/raw-peer.js';
import { opened, rawPeer as rawPeerAt } from '../helpers/raw-peer.js';
import { pairExtension } from '../helpers/pairing.js';
import { ScriptedExtension, freePort, pairedKey } from '../helpers/scripted-extension.js';

const dir = mkdtempSync(join(tmpdir(), 'elicitly-hub-auth-'));
const port = freePort();
const env = { ELICITLY_STATE_DIR: dir, ELICITLY_PORT: String(port), ELICITLY_MIN_TIMEOUT_SECONDS: '1' };
let agent: Harness;
const sockets: WebSocket[] = [];

beforeAll(async () => {
  agent = await connect('v2-2025', { env });
  await agent.callTool('elicit_status', { elicitationId: 'el_warmup' });
});
afterAll(async () => {
  for (const socket of sockets) socket.terminate();
  await agent?.close();
  rmSync(dir, { recursive: true, force: true });
});

const rawPeer = (options: { origin?: string; protocols?: string[] }) => rawPeerAt(port, { ...options, track: sockets });

const hello = (extra: Partial<HelloParams> = {}, nonce = newNonce()) => callFrame('hello', 'hello', helloParams('extension', nonce, { client: { name: 'hub-auth-test', version: '1' }, ...extra }));
const auth = (proof: string) => callFrame('auth', 'auth', { proof });
/** The hub's answer to the hello (its challenge), or how it closed the socket instead. */
async function challengeOrClose(peer: RawPeer): Promise<{ nonce: string; proof: string } | { closedWith: number }> {
  const first = await Promise.race([peer.next(answerTo('hello')), peer.closed.then((c) => ({ closedWith: c.code }))]);
  return 'closedWith' in first ? first : resultOf('hello', first);
}

function pairCommand(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync(process.execPath, [SERVER_ENTRY, 'pair', ...args], { env: { ...process.env, ELICITLY_STATE_DIR: dir }, encoding: 'utf8', timeout: 10_000 });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

function newCode(): string {
  const run = pairCommand();
  expect(run.status).toBe(0);
  const code = run.stdout.trim().split('\n').at(-1) ?? '';
  expect(code).toMatch(/^[0-9a-f]{12}$/);
  return code;
}

/** The extension's side of pairing, step by step; returns the key it received, or how the hub closed it. */
const pairWith = (origin: string, code: string) => pairExtension(port, origin, code, sockets);

/** A pairing attempt with a wrong code: the hub's challenge arrives, our proof is wrong. */
async function guess(origin: string, wrong: string): Promise<number | { status: number }> {
  const peer = await rawPeer({ origin, protocols: [SUBPROTOCOL, PAIRING_SUBPROTOCOL] });
  if (!('socket' in peer)) return peer;
  const nonce = newNonce();
  peer.send(hello({ pairing: true }, nonce));
  const first = await challengeOrClose(peer);
  if ('closedWith' in first) return first.closedWith;
  peer.send(auth(await peerProof(wrong, { port, role: 'extension' }, first.nonce, nonce)));
  return (await peer.closed).code;
}

const moz = (n: number) => `moz-extension://${n.toString(16).padStart(8, '0')}-1111-2222-3333-444455556666`;

describe('a peer that cannot prove a key learns nothing and decides nothing', () => {
  it('a non-browser process sending the pinned Origin, without the extension’s key', async () => {
    const created = await agent.callTool('elicit_approval', { message: 'the secret plan', context: { plan: 'secret' } });
    const id = (created.structuredContent as { elicitationId: string }).elicitationId;
    const real = pairedKey(dir);

    const attempts: { extra: Partial<HelloParams>; closedWith: number }[] = [
      { extra: {}, closedWith: CLOSE_UNKNOWN_KEY },
      { extra: { keyId: 'k_0123456789abcdef' }, closedWith: CLOSE_UNKNOWN_KEY },
      { extra: { keyId: real.keyId }, closedWith: CLOSE_AUTH_FAILED },
    ];
    for (const { extra, closedWith } of attempts) {
      const peer = opened(await rawPeer({ origin: EXTENSION_ORIGIN }));
      const decide = callFrame('forged-1', 'decide', { elicitationId: id, idempotencyKey: 'forged', decision: 'approved' });
      peer.send(decide);
      // A call before the handshake is refused as the unproven socket's, whatever it asks.
      expect(errorOf(await peer.next(answerTo('forged-1')))).toMatchObject({ code: 'forbidden' });
      const nonce = newNonce();
      peer.send(hello(extra, nonce));
      const challenge = extra.keyId === real.keyId ? resultOf('hello', await peer.next(answerTo('hello'))) : undefined;
      if (challenge) peer.send(auth(await peerProof('ab'.repeat(32), { port, role: 'extension' }, challenge.nonce, nonce)));
      peer.send({ ...decide, id: 'forged-2' });
      expect((await peer.closed).code).toBe(closedWith);
      const text = peer.frames.join('\n');
      expect(text).not.toContain('secret');
      expect(text).not.toContain(id);
      // Nothing but refusals and the hub's challenge: no welcome, no request, no decision.
      expect(resultIds(hubFrames(peer.frames)).filter((answered) => answered !== 'hello')).toEqual([]);
      expect(hubFrames(peer.frames).filter((f) => 'method' in f)).toEqual([]);
    }
    expect((await agent.callTool('elicit_status', { elicitationId: id })).structuredContent).toEqual({ status: 'pending' });

    // Control: with the real key the same request is there to see, so the refusals above were about the key.
    const ext = await ScriptedExtension.connect(port, { key: real, hello: false });
    expect((await ext.handshake()).pending.map((r) => r.elicitationId)).toContain(id);
    ext.close();
  });

  it('a local process without the install key cannot pose as a relay', async () => {
    const peer = opened(await rawPeer({}));
    const nonce = newNonce();
    peer.send(hello({ role: 'relay' }, nonce));
    const challenge = resultOf('hello', await peer.next(answerTo('hello')));
    peer.send(auth(await peerProof('cd'.repeat(32), { port, role: 'relay' }, challenge.nonce, nonce)));
    peer.send({ id: 'c1', method: 'create', params: {} });
    expect((await peer.closed).code).toBe(CLOSE_AUTH_FAILED);
    // Neither the auth nor the create was answered: the only result is the challenge.
    expect(resultIds(hubFrames(peer.frames))).toEqual(['hello']);

    // Control: the install key does get a relay in.
    const relay = await ScriptedExtension.connect(port, { role: 'relay', key: { key: new StateDir(dir).relayKey() }, hello: false });
    expect(await relay.handshake()).toMatchObject({ protocol: PROTOCOL_VERSION, pending: [] });
    relay.close();
  });
});

describe('pairing: one step for the person, nothing for a guesser', () => {
  it('a code from `pair` gives an extension its own key; the code is spent; --list and --remove', async () => {
    const origin = moz(1);
    const code = newCode();
    const paired = await pairWith(origin, code);
    if (!('key' in paired)) throw new Error(`pairing was closed with ${paired.closed}`);
    expect(paired.key).toMatch(/^[0-9a-f]{64}$/);

    // Known now: it connects with its key, without the pairing subprotocol.
    const ext = await ScriptedExtension.connect(port, { origin, key: paired });
    ext.close();
    // Spent: the same code pairs nobody else.
    expect(await pairWith(moz(2), code)).toEqual({ closed: CLOSE_NO_PAIRING });

    const list = pairCommand('--list');
    expect(list.status).toBe(0);
    expect(list.stdout).toContain(`${origin}\t${paired.keyId}\t`);
    expect(pairCommand('--remove', origin)).toMatchObject({ status: 0 });
    expect(pairCommand('--list').stdout).not.toContain(origin);
    // Forgotten at once: its origin is no longer let in.
    expect(await rawPeer({ origin })).toEqual({ status: 403 });
    expect(pairCommand('--remove', origin)).toMatchObject({ status: 1, stderr: expect.stringContaining('is not paired') });
  });

  it('a wrong code closes with 4001, that origin must wait, and ten wrong guesses burn the code', async () => {
    const code = newCode();
    const wrong = (code.startsWith('0') ? '1' : '0') + code.slice(1);
    expect(await guess(moz(10), wrong)).toBe(CLOSE_AUTH_FAILED);
    // The same origin again at once: refused before a socket exists.
    expect(await guess(moz(10), wrong)).toEqual({ status: 429 });
    for (let n = 11; n < 20; n++) expect(await guess(moz(n), wrong)).toBe(CLOSE_AUTH_FAILED);
    // Ten failures: the right code no longer exists.
    expect(await pairWith(moz(30), code)).toEqual({ closed: CLOSE_NO_PAIRING });
  });

  it('finding 10: sockets challenged while the code was alive get no guess once ten wrong ones have burnt it', async () => {
    const code = newCode();
    const wrong = (code.startsWith('0') ? '1' : '0') + code.slice(1);
    // Twelve sockets from twelve origins, all challenged first: each would otherwise carry one guess past the burn.
    const challenged: { peer: RawPeer; nonce: string; hubNonce: string }[] = [];
    for (let n = 0; n < 12; n++) {
      const peer = opened(await rawPeer({ origin: moz(200 + n), protocols: [SUBPROTOCOL, PAIRING_SUBPROTOCOL] }));
      const nonce = newNonce();
      peer.send(hello({ pairing: true }, nonce));
      const challenge = resultOf('hello', await peer.next(answerTo('hello')));
      challenged.push({ peer, nonce, hubNonce: challenge.nonce });
    }
    for (const { peer, nonce, hubNonce } of challenged.slice(0, 10)) {
      peer.send(auth(await peerProof(wrong, { port, role: 'extension' }, hubNonce, nonce)));
      expect((await peer.closed).code).toBe(CLOSE_AUTH_FAILED);
    }
    // The right code, on a socket challenged before the burn: the code is gone, so it pairs nothing.
    const late = challenged[10];
    if (!late) throw new Error('twelve sockets were challenged');
    late.peer.send(auth(await peerProof(code, { port, role: 'extension' }, late.hubNonce, late.nonce)));
    const outcome = await Promise.race([late.peer.closed.then((c) => c.code), late.peer.next(answerTo('auth')).then(() => 'auth answered', () => 'neither answered nor closed')]);
    expect(outcome).toBe(CLOSE_NO_PAIRING);
    // The auth got no answer at all, so no key (sealed or not) was handed over.
    expect(resultIds(hubFrames(late.peer.frames))).toEqual(['hello']);
    expect(pairCommand('--list').stdout).not.toContain(moz(210));
    challenged.forEach(({ peer }) => peer.socket.close());
  });

  it('finding 11: the pinned and paired origins wait out the pairing backoff like any other', async () => {
    const code = newCode();
    const wrong = (code.startsWith('0') ? '1' : '0') + code.slice(1);
    const paired = moz(300);
    new StateDir(dir).addPairedExtension(paired);
    for (const origin of [EXTENSION_ORIGIN, paired]) {
      expect(await guess(origin, wrong)).toBe(CLOSE_AUTH_FAILED);
      // A trusted Origin header is only a claim: the same origin at once is refused before a socket exists.
      expect(await guess(origin, wrong)).toEqual({ status: 429 });
    }
    // Nor can it dodge the backoff by leaving out the pairing subprotocol: a pairing hello needs it.
    const sneaky = opened(await rawPeer({ origin: EXTENSION_ORIGIN }));
    sneaky.send(hello({ pairing: true }));
    expect((await sneaky.closed).code).toBe(CLOSE_AUTH_FAILED);
    expect(resultIds(hubFrames(sneaky.frames))).not.toContain('hello');
    expect(pairCommand('--remove', paired)).toMatchObject({ status: 0 });
  });

  it.each([
    ['chrome-extension://abc'],
    [`chrome-extension://${'z'.repeat(32)}`],
    ['chrome-extension://'],
    ['moz-extension://'],
    ['moz-extension://not-a-uuid'],
    ['https://evil.example'],
    ['null'],
  ])('only a well-formed extension origin may come to pair: %s gets 403', async (origin) => {
    expect(await rawPeer({ origin, protocols: [SUBPROTOCOL, PAIRING_SUBPROTOCOL] })).toEqual({ status: 403 });
  });

  it('finding 8: an approval made while no extension is paired tells the agent what to ask of the person, never the code', async () => {
    const fresh = mkdtempSync(join(tmpdir(), 'elicitly-unpaired-'));
    const lonely = await connect('v2-2025', { env: { ELICITLY_STATE_DIR: fresh, ELICITLY_PORT: String(freePort()) } });
    try {
      const first = (await lonely.callTool('elicit_approval', { message: 'anyone?', context: { a: 1 } })).structuredContent as { next?: string };
      expect(first.next).toContain('npx elicitly-companion pair');
      expect(first.next).toContain('"Pairing code"');
      expect(first.next).toContain('"Pair"');
      // A sandboxed agent that cannot read the state dir must not learn a code from us: it could pair a fake extension
      // and approve its own requests. No code is active until the person runs `pair`, and none is in the text.
      expect(first.next).not.toMatch(/\b[0-9a-f]{12}\b/);
      expect(new StateDir(fresh).pairing('extension')).toBeUndefined();
      // When the person has run `pair`, the agent still gets the instructions and not the code.
      const { code } = new StateDir(fresh).createPairing('extension');
      const second = (await lonely.callTool('elicit_approval', { message: 'still?', context: { a: 2 } })).structuredContent as { next?: string };
      expect(second.next).toContain('npx elicitly-companion pair');
      expect(second.next).not.toContain(code);
      expect(JSON.stringify(second)).not.toContain(code);
      new StateDir(fresh).addPairedExtension(EXTENSION_ORIGIN);
      expect((await lonely.callTool('elicit_approval', { message: 'now', context: { a: 3 } })).structuredContent).not.toHaveProperty('next');
    } finally {
      await lonely.close();
      rmSync(fresh, { recursive: true, force: true });
    }
  });
});

describe('caps', () => {
  it('a flood of refused upgrades is logged at most once per 10 s, with the count of the rest', async () => {
    const before = agent.stderr().split('refused a hub connection').length;
    for (let i = 0; i < 40; i++) expect(await rawPeer({ origin: 'https://evil.example' })).toEqual({ status: 403 });
    const lines = agent.stderr().split('\n').filter((l) => l.includes('refused a hub connection'));
    expect(agent.stderr().split('refused a hub connection').length - before).toBeLessThanOrEqual(1);
    expect(lines.length).toBeGreaterThan(0);
  });

  it('sockets past the cap are refused with 503 before they exist', async () => {
    const held: WebSocket[] = [];
    let refused: number | undefined;
    for (let i = 0; i < 70 && refused === undefined; i++) {
      const peer = await rawPeer({});
      if ('socket' in peer) held.push(peer.socket);
      else refused = peer.status;
    }
    expect(refused).toBe(503);
    expect(held.length).toBeLessThanOrEqual(64);
    for (const socket of held) socket.close();
  });
});

// Several hubs on one database (issue 39, part 2), as a team runs them: three `elicitly-companion hub --database URL`
// processes of the built server, each with its own state dir and port, one throw-away PostgreSQL cluster, agents
// relaying to one hub each over stdio, and a scripted extension on every hub. A request filed on one hub reaches the
// reviewers of all three; two of them deciding it at once on two hubs make one decision; a hub killed during a burst
// of decisions loses none and doubles none, and another takes its timers within 2 s; a frozen database makes the hubs
// answer `unavailable` and loses nothing they acknowledged; a quorum's approvals made at once on two hubs all count.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newElicitationId } from '../../server/durable-request.js';
import { StateDir } from '../../server/state-dir.js';
import { EXTENSION_ORIGIN } from '../../shared/extension-id.js';
import { RelayTokenSchema } from '../../server/remote/relay-token.js';
import { CLOSE_NO_PAIRING, CLOSE_UNKNOWN_KEY } from '../../shared/wire-protocol.js';
import { connect, SERVER_ENTRY, type Harness } from '../helpers/mcp-harness.js';
import { pairExtension } from '../helpers/pairing.js';
import { pairedKeyIn, postgresBin, startPgCluster, withDirectoryIn, type PgCluster } from '../helpers/pg-cluster.js';
import { runCommand } from '../helpers/run-command.js';
import { freePort, ScriptedExtension } from '../helpers/scripted-extension.js';

const required = process.env.ELICITLY_REQUIRE_POSTGRES === '1';

interface Hub {
  name: string;
  dir: string;
  port: number;
  process: ChildProcess;
  stderr: () => string;
  /** When its stderr first said it runs the timers, or null. */
  ledAt: () => number | null;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` every 20 ms until it is truthy or `ms` pass (bounded). */
async function eventually<T>(check: () => T | Promise<T>, ms: number): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value || Date.now() >= until) return value;
    await sleep(20);
  }
}

describe.skipIf(postgresBin() === null && !required)('three hubs on one database', () => {
  let cluster: PgCluster;
  const hubs: Hub[] = [];
  const agents: Harness[] = [];
  const peers: ScriptedExtension[] = [];
  const dirs: string[] = [];

  const startHub = async (name: string, prepare: (state: StateDir) => void = () => undefined): Promise<Hub> => {
    const dir = mkdtempSync(join(tmpdir(), `elicitly-multi-${name}-`));
    const port = freePort();
    dirs.push(dir);
    prepare(new StateDir(dir));
    const child = spawn(process.execPath, [SERVER_ENTRY, 'hub', '--database', cluster.url], {
      env: { ...process.env, ELICITLY_STATE_DIR: dir, ELICITLY_PORT: String(port), ELICITLY_LOG_LEVEL: 'info' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    let ledAt: number | null = null;
    child.stderr?.on('data', (chunk: Buffer) => {
      err += chunk.toString();
      if (ledAt === null && err.includes('this hub runs the timers')) ledAt = Date.now();
    });
    const hub: Hub = { name, dir, port, process: child, stderr: () => err, ledAt: () => ledAt };
    hubs.push(hub);
    const up = await eventually(async () => {
      try {
        const probe = await ScriptedExtension.connect(port, { role: 'relay', key: { key: new StateDir(dir).relayKey() } });
        probe.socket.close();
        return true;
      } catch {
        return false;
      }
    }, 20_000);
    if (!up) throw new Error(`hub ${name} did not come up:\n${err}`);
    return hub;
  };

  /** A browser paired in the team's directory (the database's: every hub takes its key), connected to `hub`. */
  const extensionOn = async (hub: Hub, reviewer?: string) => {
    const ext = await ScriptedExtension.connect(hub.port, { key: await pairedKeyIn(cluster.url, EXTENSION_ORIGIN, reviewer) });
    peers.push(ext);
    return ext;
  };

  const agentOn = async (hub: Hub) => {
    const agent = await connect('v2-2025', { env: { ELICITLY_STATE_DIR: hub.dir, ELICITLY_PORT: String(hub.port), ELICITLY_DATABASE_URL: cluster.url, ELICITLY_MIN_TIMEOUT_SECONDS: '1' } });
    agents.push(agent);
    return agent;
  };

  const rows = async () => {
    const db = postgres(cluster.url, { max: 1, onnotice: () => undefined });
    try {
      const found = await db<{ id: string; body: string }[]>`select id, body from elicitly_requests`;
      return new Map(found.map((r) => [r.id, JSON.parse(r.body) as { status: string; outcome?: { decision: string; idempotencyKey: string; decidedVia: string } }]));
    } finally {
      await db.end();
    }
  };

  beforeAll(() => {
    cluster = startPgCluster();
  }, 60_000);
  afterAll(async () => {
    for (const p of peers) p.socket.terminate();
    for (const a of agents) await a.close().catch(() => undefined);
    for (const h of hubs) h.process.kill('SIGKILL');
    cluster?.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('a request filed on one hub reaches every hub\'s reviewers; two reviewers deciding it at once on two hubs make one decision', async () => {
    const [a, b, c] = [await startHub('a'), await startHub('b'), await startHub('c')];
    const [extA, extB] = [await extensionOn(a), await extensionOn(b)];
    const agent = await agentOn(c);
    const created = await agent.callTool('elicit_approval', { message: 'Deploy build 41 to production?', context: { build: 41 } });
    const id = String(created.structuredContent?.elicitationId);
    // Filed on hub c, heard on a and b through the database's notifications.
    await Promise.all([extA.notice('request.created', (p) => p.request.elicitationId === id, 10_000), extB.notice('request.created', (p) => p.request.elicitationId === id, 10_000)]);

    const removedA = extA.notice('request.removed', (p) => p.elicitationId === id, 10_000);
    const removedB = extB.notice('request.removed', (p) => p.elicitationId === id, 10_000);
    const [onA, onB] = await Promise.all([
      extA.call('decide', { elicitationId: id, idempotencyKey: 'ana-a', decision: 'approved' }, 10_000),
      extB.call('decide', { elicitationId: id, idempotencyKey: 'ben-b', decision: 'rejected', comment: 'not today' }, 10_000),
    ]);
    const answers = [onA.result, onB.result];
    expect(answers.filter((r) => r?.ok === true)).toHaveLength(1);
    expect(answers.filter((r) => r?.ok === false)).toEqual([expect.objectContaining({ ok: false, reason: 'already_decided' })]);
    const winner = onA.result?.ok === true ? 'approved' : 'rejected';
    // Both reviewers' inboxes end with the one decision, and the database and the agent hold it.
    expect(await removedA).toMatchObject({ status: winner });
    expect(await removedB).toMatchObject({ status: winner });
    expect((await rows()).get(id)).toMatchObject({ status: winner, outcome: { decision: winner, idempotencyKey: winner === 'approved' ? 'ana-a' : 'ben-b' } });
    const result = await agent.callTool('elicit_result', { elicitationId: id });
    expect(result.structuredContent).toMatchObject({ decision: winner });
  }, 120_000);

  it('a hub killed (SIGKILL) during a burst of decisions: every acknowledged decision is in the database, none decided twice, and another hub takes the timers within 2 s', async () => {
    const [a, b, c] = hubs;
    if (!a || !b || !c) throw new Error('three hubs');
    const leader = hubs.find((h) => h.ledAt() !== null);
    expect(leader?.name, 'the first hub started runs the timers').toBe('a');
    const agent = await agentOn(b);
    const [extA, extC] = [await extensionOn(a), await extensionOn(c)];
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) {
      const created = await agent.callTool('elicit_approval', { message: `Burst request ${i}`, context: { i } });
      ids.push(String(created.structuredContent?.elicitationId));
    }
    // A request due to expire just after hub a dies: only a hub that runs the timers records it and tells the peers.
    const due = await agent.callTool('elicit_approval', { message: 'Expires while the leader is gone', context: {}, timeoutSeconds: 2 });
    const dueId = String(due.structuredContent?.elicitationId);
    await eventually(() => extC.notices('request.created').filter((p) => [...ids, dueId].includes(p.request.elicitationId)).length === ids.length + 1, 10_000);
    const expiredOnC = extC.notice('request.removed', (p) => p.elicitationId === dueId && p.status === 'expired', 15_000);

    // Reviewers on a and c decide every request, with opposite decisions, a from the first and c from the last, so they
    // race where they meet; a dies once it has acknowledged a few.
    const acked = new Map<string, string[]>();
    const decideAll = (ext: ScriptedExtension, who: string, decision: 'approved' | 'rejected', order: string[]) =>
      Promise.all(order.map(async (id, i) => {
        await sleep(i * 15);
        const answer = await ext.call('decide', { elicitationId: id, idempotencyKey: `${who}-${id}`, decision }, 5000).catch(() => null);
        if (answer?.result?.ok === true) acked.set(id, [...(acked.get(id) ?? []), `${who}-${id}`]);
      }));
    const burst = Promise.all([decideAll(extA, 'a', 'approved', ids), decideAll(extC, 'c', 'rejected', [...ids].reverse())]);
    const fromA = () => [...acked.values()].flat().filter((k) => k.startsWith('a-')).length;
    expect(await eventually(() => fromA() >= 3, 10_000), 'a acknowledged decisions before it died').toBe(true);
    const killedAt = Date.now();
    a.process.kill('SIGKILL');
    await burst;

    const stored = await rows();
    for (const id of ids) {
      const keys = acked.get(id) ?? [];
      // None decided twice: at most one reviewer was told ok; the one told ok is the decision stored.
      expect(keys.length, `${id} acknowledged ${keys.join(', ')}`).toBeLessThanOrEqual(1);
      if (keys[0]) expect(stored.get(id)?.outcome?.idempotencyKey, `${id} lost its acknowledged decision`).toBe(keys[0]);
    }
    // c decided everything a did not: every request ended decided.
    expect(ids.filter((id) => stored.get(id)?.outcome === undefined)).toEqual([]);

    // Another hub runs the timers within 2 s of the kill, and the request due meanwhile is recorded as expired.
    const taken = await eventually(() => (b.ledAt() ?? c.ledAt()) !== null, 5000);
    expect(taken).toBe(true);
    expect((b.ledAt() ?? c.ledAt() ?? Infinity) - killedAt).toBeLessThanOrEqual(2000);
    expect(await expiredOnC).toMatchObject({ status: 'expired' });
    expect((await rows()).get(dueId)).toMatchObject({ status: 'expired' });

    // The team's ledger, read by `audit` from any machine with the database: it verifies, and says each decision once,
    // as the database stores it, though a hub died mid-burst (a change and its entries commit together).
    const terminal = mkdtempSync(join(tmpdir(), 'elicitly-audit-'));
    const audit = (...args: string[]) => runCommand(process.execPath, [SERVER_ENTRY, 'audit', ...args], { env: { ELICITLY_STATE_DIR: terminal, ELICITLY_DATABASE_URL: cluster.url }, timeout: 30_000 });
    const verified = await audit('verify');
    expect(verified.stdout, verified.stderr).toMatch(/^ledger ok: \d+ entries, /);
    expect(verified.code).toBe(0);
    const exported = await audit('export', '--format', 'jsonl');
    expect(exported.code, exported.stderr).toBe(0);
    const events = exported.stdout.trim().split('\n').map((line) => (JSON.parse(line) as { event: { type: string; id?: string; decision?: string } }).event);
    const final = await rows();
    for (const id of ids) {
      const decided = events.filter((e) => e.type === 'request.decided' && e.id === id);
      expect(decided.map((e) => e.decision), id).toEqual([final.get(id)?.outcome?.decision]);
    }
    expect(events.filter((e) => e.type === 'request.expired' && e.id === dueId)).toHaveLength(1);
    rmSync(terminal, { recursive: true, force: true });
  }, 120_000);

  it('the database frozen (SIGSTOP): the hubs answer unavailable and acknowledge nothing; once it resumes they serve every request they acknowledged', async () => {
    const live = hubs.filter((h) => h.process.exitCode === null && h.process.signalCode === null);
    const hub = live[0];
    if (!hub) throw new Error('a live hub');
    const agent = await agentOn(hub);
    const before = await agent.callTool('elicit_approval', { message: 'Filed before the freeze', context: {} });
    const beforeId = String(before.structuredContent?.elicitationId);
    expect(before.structuredContent).toMatchObject({ status: 'pending' });
    cluster.pause();
    let during: Awaited<ReturnType<Harness['callTool']>>;
    try {
      during = await agent.callTool('elicit_approval', { message: 'Filed while frozen', context: {} }, { timeoutMs: 60_000 });
    } finally {
      cluster.resume();
    }
    expect(during.isError).toBe(true);
    expect(during.structuredContent).toMatchObject({ error: 'unavailable' });
    // Once the hubs have reopened the database, what was acknowledged before the freeze is served by each.
    for (const h of live) {
      const onHub = await agentOn(h);
      const status = await eventually(async () => {
        const answer = await onHub.callTool('elicit_status', { elicitationId: beforeId }, { timeoutMs: 30_000 });
        return answer.isError ? null : answer.structuredContent;
      }, 30_000);
      expect(status).toEqual({ status: 'pending' });
    }
    expect((await rows()).get(beforeId)).toMatchObject({ status: 'pending' });
  }, 180_000);

  it('a quorum of two approved at the same moment on two hubs counts both approvals: neither is lost to the other', async () => {
    const routing = { version: 1, routes: [{ name: 'production', match: { kinds: ['approval'] }, groups: ['ops'], quorum: 2 }] };
    // The reviewers and the routing policy are the database's, set from a terminal elsewhere (`routing set`). Hub d
    // has a laxer policy of its own in its state dir: with a database it is not read, so no agent finds a hub that
    // routes otherwise. Ana's browser connects to d, Ben's to e.
    await withDirectoryIn(cluster.url, async (directory) => {
      await directory.putReviewer('Ana Pérez', ['ops']);
      await directory.putReviewer('Ben Okafor', ['ops']);
    });
    const terminal = mkdtempSync(join(tmpdir(), 'elicitly-multi-routing-'));
    dirs.push(terminal);
    writeFileSync(join(terminal, 'policy.json'), JSON.stringify(routing));
    const set = await runCommand(process.execPath, [SERVER_ENTRY, 'routing', 'set', join(terminal, 'policy.json')], { env: { ELICITLY_STATE_DIR: terminal, ELICITLY_DATABASE_URL: cluster.url }, timeout: 30_000 });
    expect(set.code, set.stderr).toBe(0);
    const lax = { version: 1, routes: [{ name: 'anything', match: {}, groups: ['ops'], quorum: 1 }] };
    const d = await startHub('d', (state) => writeFileSync(join(state.path, 'routing.json'), JSON.stringify(lax), { mode: 0o600 }));
    const e = await startHub('e');
    const [ana, ben] = [await extensionOn(d, 'Ana Pérez'), await extensionOn(e, 'Ben Okafor')];
    const agent = await agentOn(d);
    for (let round = 0; round < 5; round++) {
      const created = await agent.callTool('elicit_approval', { message: `Deploy build ${round} to production?`, context: { round } });
      const id = String(created.structuredContent?.elicitationId);
      await Promise.all([ana.notice('request.created', (p) => p.request.elicitationId === id, 10_000), ben.notice('request.created', (p) => p.request.elicitationId === id, 10_000)]);
      const answers = await Promise.all([
        ana.call('decide', { elicitationId: id, idempotencyKey: `ana-${round}`, decision: 'approved' }, 10_000),
        ben.call('decide', { elicitationId: id, idempotencyKey: `ben-${round}`, decision: 'approved' }, 10_000),
      ]);
      expect(answers.map((a) => a.result?.ok)).toEqual([true, true]);
      expect(answers.map((a) => a.result?.status).sort()).toEqual(['approved', 'pending']);
      const result = await agent.callTool('elicit_result', { elicitationId: id });
      expect(result.structuredContent).toMatchObject({ decision: 'approved' });
      expect([...((result.structuredContent as { approvedBy?: string[] }).approvedBy ?? [])].sort()).toEqual(['Ana Pérez', 'Ben Okafor']);
    }
  }, 120_000);

  it('the directory is the database\'s: a code made by `pair` pairs one browser whichever hub it reaches, its key opens every hub, and a key revoked anywhere is cut off on every hub', async () => {
    const [b, c] = [hubs.find((h) => h.name === 'b'), hubs.find((h) => h.name === 'c')];
    if (!b || !c) throw new Error('hubs b and c');
    // The commands run on a machine of their own: a fresh state dir, only the database's URL in common with the hubs.
    const terminal = mkdtempSync(join(tmpdir(), 'elicitly-multi-terminal-'));
    dirs.push(terminal);
    const command = (...args: string[]) => runCommand(process.execPath, [SERVER_ENTRY, ...args], { env: { ELICITLY_STATE_DIR: terminal, ELICITLY_DATABASE_URL: cluster.url, ELICITLY_PORT: String(freePort()) }, timeout: 30_000 });

    // Two browsers bring one code to two hubs at the same moment: exactly one of them is paired.
    const origin = 'chrome-extension://ponmlkjihgfedcbaponmlkjihgfedcba';
    for (let round = 0; round < 3; round++) {
      // The team's reviewers (the quorum case added them to the database): every code is someone's.
      const made = await command('pair', '--reviewer', 'Ana Pérez');
      expect(made.code, made.stderr).toBe(0);
      const code = made.stdout.trim().split('\n').at(-1) ?? '';
      const tries = await Promise.all([pairExtension(b.port, origin, code), pairExtension(c.port, origin, code)]);
      expect(tries.filter((t) => 'key' in t), JSON.stringify(tries)).toHaveLength(1);
      expect(tries.filter((t) => 'closed' in t)).toEqual([{ closed: CLOSE_NO_PAIRING }]);
    }
    // Every key one of them was given opens the other hub too, and `pair --list` run anywhere lists them.
    const listed = await command('pair', '--list');
    const keyIds = [...listed.stdout.matchAll(/^extension\t(\S+)\t(k_[0-9a-f]{16})\t/gm)].filter((m) => m[1] === origin).map((m) => m[2]);
    expect(keyIds).toHaveLength(3);

    // A relay key exported from the terminal opens b and c; revoked there, both hubs cut their sockets at once.
    const exported = await command('key', 'export', '--name', 'ci runner');
    expect(exported.code, exported.stderr).toBe(0);
    const token = RelayTokenSchema.parse(exported.stdout.trim().split('\n').at(-1));
    const [onB, onC] = await Promise.all([b, c].map((hub) => ScriptedExtension.connect(hub.port, { role: 'relay', key: { keyId: token.keyId, key: token.key } })));
    if (!onB || !onC) throw new Error('two relays');
    peers.push(onB, onC);
    const revoked = await command('key', 'revoke', token.keyId);
    expect(revoked.code, revoked.stderr).toBe(0);
    const revokedAt = Date.now();
    const closes = await Promise.all([onB.closed, onC.closed]);
    expect(closes.map((closed) => closed.code)).toEqual([CLOSE_UNKNOWN_KEY, CLOSE_UNKNOWN_KEY]);
    expect(Date.now() - revokedAt, 'cut off within a second of the revocation').toBeLessThan(1000);
    await expect(ScriptedExtension.connect(b.port, { role: 'relay', key: { keyId: token.keyId, key: token.key } })).rejects.toThrow();

    // Every hub read these changes of the directory; the team's ledger says each once.
    const keyEvents = async () => {
      const audit = await command('audit', 'export', '--format', 'jsonl');
      return audit.stdout.trim().split('\n').map((line) => (JSON.parse(line) as { event: { type: string; keyId?: string } }).event).filter((e) => e.type === 'key.added' || e.type === 'key.removed');
    };
    expect(await eventually(async () => (await keyEvents()).some((e) => e.type === 'key.removed' && e.keyId === token.keyId), 5000)).toBe(true);
    const said = await keyEvents();
    for (const keyId of [...keyIds, token.keyId]) expect(said.filter((e) => e.type === 'key.added' && e.keyId === keyId), keyId).toHaveLength(1);
    expect(said.filter((e) => e.type === 'key.removed' && e.keyId === token.keyId)).toHaveLength(1);
  }, 120_000);

  it('the rules are the database\'s: a rule saved on one hub answers a request filed on another, and every hub\'s reviewers get the list', async () => {
    const [b, c] = [hubs.find((h) => h.name === 'b'), hubs.find((h) => h.name === 'c')];
    if (!b || !c) throw new Error('hubs b and c');
    const [extB, extC] = [await extensionOn(b), await extensionOn(c)];
    const saved = await extB.call('rule.save', { rule: { effect: 'deny', match: { tool: 'Bash', commandPrefix: 'rm -rf' }, expiresAt: null } }, 10_000);
    expect(saved.result).toMatchObject({ ok: true });
    const ruleId = saved.result && 'id' in saved.result ? saved.result.id : undefined;
    expect((await extC.notice('rules.changed', (p) => p.rules.some((r) => r.id === ruleId), 10_000)).rules).toEqual([expect.objectContaining({ id: ruleId, effect: 'deny' })]);

    // A hook's prompt filed on c: c's engine has b's rule, so the rule answers it at once.
    const relay = await ScriptedExtension.connect(c.port, { role: 'relay', key: { key: new StateDir(c.dir).relayKey() } });
    peers.push(relay);
    const created = await relay.call('create', {
      id: newElicitationId(),
      request: { kind: 'permission', message: 'Claude Code wants to run a command', host: 'claude-code', event: 'PermissionRequest', tool: 'Bash', input: { command: 'rm -rf build' }, command: 'rm -rf build', cwd: '/tmp', sessionId: 's', editable: true, suggestions: [], timeoutSeconds: 600 },
      renderedTemplate: null,
      timeoutMs: 600_000,
      requester: { client: 'Claude Code', pid: 1 },
      surfaces: ['extension'],
    }, 10_000);
    expect(created.result).toMatchObject({ status: 'rejected', decidedVia: 'rule', ruleId });
  }, 60_000);
});

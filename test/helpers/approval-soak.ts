// A bounded soak of the approval core with real parts: several server processes driven by real MCP clients, a
// scripted extension that reconnects and re-sends its outbox like the real one, and the hub SIGKILLed every few
// seconds. It returns what it measured and every invariant it found broken; the test and the benchmark print both.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import type { ApprovalRecord } from '../../server/approvals/approval-record.js';
import { ApprovalRecordSchema } from '../../server/approvals/approval-record.js';
import { JournalStore } from '../../server/store/journal-store.js';
import { PgRecordStore } from '../../server/store/pg-record-store.js';
import type { RecordStore } from '../../server/store/record-store.js';
import { EXTENSION_ORIGIN } from '../../shared/extension-id.js';
import { constantTimeEqual, hubProof, newNonce, peerProof } from '../../shared/hub-auth.js';
import { effectiveStatus } from '../../shared/lifecycle.js';
import { parseResult } from '../../shared/peer-calls.js';
import { HubFrameSchema, PROTOCOL_VERSION, SUBPROTOCOL, isAnswer, parseHubNotice } from '../../shared/wire-protocol.js';
import type { Harness, ToolResult } from './mcp-harness.js';
import { connect } from './mcp-harness.js';
import { pairedKeyIn } from './pg-cluster.js';
import { freePort, pairedKey, type PairedKey } from './scripted-extension.js';
import { prng } from './prng.js';

export interface SoakOptions {
  durationMs: number;
  agents: number;
  killEveryMs: number;
  seed: number;
  /** The requests in this PostgreSQL database instead of the journal (ELICITLY_DATABASE_URL). */
  databaseUrl?: string;
}

export interface SoakReport {
  durationMs: number;
  kills: number;
  respawns: number;
  creates: { acknowledged: number; refused: number; lostWithProcess: number };
  decisions: { sent: number; acknowledged: number; refused: number; secondSurface: number };
  cancels: { acknowledged: number };
  awaits: number;
  results: number;
  finalRequests: number;
  violations: {
    missingAfterRestart: string[];
    decidedTwice: string[];
    lostDecisions: string[];
    lostCancels: string[];
    replayMismatches: string[];
    resultDisagrees: string[];
    protocolErrors: string[];
  };
}

type Decision = 'approved' | 'rejected';
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The extension's delivery rules: one decision per request, kept in an outbox until the hub answers it. */
class SoakExtension {
  hubPid: number | null = null;
  readonly pending = new Set<string>();
  readonly outbox = new Map<string, { id: string; decision: Decision }>();
  /** Every key the hub answered ok, per request. */
  readonly okKeys = new Map<string, Map<string, Decision>>();
  sent = 0;
  refused = 0;
  secondSurface = 0;
  /** Anything the hub sent that broke the protocol: each is a violation. */
  readonly protocolErrors: string[] = [];
  private socket: WebSocket | null = null;
  private running = true;
  private readonly decidedHere = new Set<string>();
  private readonly sentKeys = new Map<string, Decision>();
  /** The request each key decides. */
  private readonly decidedFor = new Map<string, string>();

  constructor(
    private readonly port: number,
    private readonly key: PairedKey,
  ) {
    void this.loop();
  }

  private async loop(): Promise<void> {
    while (this.running) {
      const socket = new WebSocket(`ws://127.0.0.1:${this.port}`, [SUBPROTOCOL], { origin: EXTENSION_ORIGIN, handshakeTimeout: 2000 });
      socket.on('error', () => undefined);
      const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      const nonce = newNonce();
      socket.once('open', () => socket.send(JSON.stringify({ id: 'hello', method: 'hello', params: { protocol: PROTOCOL_VERSION, role: 'extension', client: { name: 'soak', version: '1' }, nonce, keyId: this.key.keyId } })));
      // In order, like the real extension: the proof is checked before the welcome is looked at.
      let queue = Promise.resolve();
      socket.on('message', (data) => {
        queue = queue.then(() => this.receive(socket, data.toString(), nonce)).catch((error: unknown) => void this.protocolErrors.push(String(error)));
      });
      this.socket = socket;
      await closed;
      this.socket = null;
      this.hubPid = null;
      if (this.running) await sleep(50);
    }
  }

  private async receive(socket: WebSocket, text: string, nonce: string): Promise<void> {
    const parsed = HubFrameSchema.safeParse(JSON.parse(text));
    if (!parsed.success) throw new Error(`the hub sent an invalid frame: ${text.slice(0, 200)}`);
    const frame = parsed.data;
    if (!isAnswer(frame)) {
      const notice = parseHubNotice(frame);
      if (!notice.ok) throw new Error(`the hub sent an invalid notice: ${notice.error}`);
      if (notice.message.method === 'request.created') this.pending.add(notice.message.params.request.elicitationId);
      else if (notice.message.method === 'request.removed') this.pending.delete(notice.message.params.elicitationId);
      return;
    }
    if (frame.id === 'hello') {
      const challenge = parseResult('hello', 'result' in frame ? frame.result : undefined);
      if (!challenge.success) throw new Error(`the hub refused the hello: ${text.slice(0, 200)}`);
      const { nonce: hubNonce, proof } = challenge.data;
      if (!constantTimeEqual(proof, await hubProof(this.key.key, { port: this.port, role: 'extension' }, nonce, hubNonce))) throw new Error('the hub did not prove the key');
      socket.send(JSON.stringify({ id: 'auth', method: 'auth', params: { proof: await peerProof(this.key.key, { port: this.port, role: 'extension' }, hubNonce, nonce) } }));
      return;
    }
    if (frame.id === 'auth') {
      const auth = parseResult('auth', 'result' in frame ? frame.result : undefined);
      if (!auth.success) throw new Error(`the hub refused the auth: ${text.slice(0, 200)}`);
      this.hubPid = auth.data.welcome.hubPid;
      for (const view of auth.data.welcome.pending) this.pending.add(view.elicitationId);
      for (const [key, entry] of this.outbox) this.sendDecide(socket, key, entry.id, entry.decision);
      return;
    }
    // An answer to a decide: its id is the idempotency key it was sent with.
    const key = frame.id ?? '';
    const decision = this.sentKeys.get(key);
    if (decision === undefined) throw new Error(`the hub answered a call never made: ${text.slice(0, 200)}`);
    const answer = 'result' in frame ? parseResult('decide', frame.result) : null;
    if (answer && !answer.success) throw new Error(`the hub answered a decide with an invalid value: ${text.slice(0, 200)}`);
    const value = answer?.data;
    if (value?.ok) {
      const id = this.outbox.get(key)?.id ?? this.decidedFor.get(key) ?? '';
      const keys = this.okKeys.get(id) ?? new Map<string, Decision>();
      keys.set(key, decision);
      this.okKeys.set(id, keys);
      this.outbox.delete(key);
    } else if (value) {
      this.refused += 1;
      this.outbox.delete(key);
    }
  }

  /** A decide call whose id is its idempotency key, so its answer names the decision it answers. */
  private sendDecide(socket: WebSocket, key: string, id: string, decision: Decision): void {
    socket.send(JSON.stringify({ id: key, method: 'decide', params: { elicitationId: id, idempotencyKey: key, decision } }));
  }

  decide(rand: () => number): void {
    const choices = [...this.pending].filter((id) => !this.decidedHere.has(id));
    const id = choices[Math.floor(rand() * choices.length)];
    if (id === undefined) return;
    this.decidedHere.add(id);
    const decision: Decision = rand() < 0.5 ? 'approved' : 'rejected';
    this.enqueue(`k-${id}`, id, decision);
    // Now and then a second surface (another browser) decides the same request the other way.
    if (rand() < 0.15) {
      this.secondSurface += 1;
      this.enqueue(`k2-${id}`, id, decision === 'approved' ? 'rejected' : 'approved');
    }
  }

  private enqueue(key: string, id: string, decision: Decision): void {
    this.outbox.set(key, { id, decision });
    this.sentKeys.set(key, decision);
    this.decidedFor.set(key, id);
    this.sent += 1;
    if (this.socket?.readyState === WebSocket.OPEN) this.sendDecide(this.socket, key, id, decision);
  }

  /** The one decision the hub accepted for each request, by key. */
  accepted(): Map<string, { key: string; decision: Decision }> {
    const out = new Map<string, { key: string; decision: Decision }>();
    for (const [id, keys] of this.okKeys) {
      const [first] = keys;
      if (first) out.set(id, { key: first[0], decision: first[1] });
    }
    return out;
  }

  async stop(): Promise<void> {
    this.running = false;
    this.socket?.close();
    await sleep(20);
  }
}

export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  const rand = prng(options.seed);
  const dir = mkdtempSync(join(tmpdir(), 'elicitly-soak-'));
  const port = freePort();
  const env = { ELICITLY_STATE_DIR: dir, ELICITLY_PORT: String(port), ELICITLY_LOG_LEVEL: 'error', ...(options.databaseUrl ? { ELICITLY_DATABASE_URL: options.databaseUrl } : {}) };
  const spawnAgent = () => connect('v2-2025', { env });
  const agents: (Harness | null)[] = [];
  const createdAcked = new Set<string>();
  const canceledAcked = new Set<string>();
  const resultSeen = new Map<string, Decision>();
  const report: SoakReport = {
    durationMs: 0, kills: 0, respawns: 0,
    creates: { acknowledged: 0, refused: 0, lostWithProcess: 0 },
    decisions: { sent: 0, acknowledged: 0, refused: 0, secondSurface: 0 },
    cancels: { acknowledged: 0 }, awaits: 0, results: 0, finalRequests: 0,
    violations: { missingAfterRestart: [], decidedTwice: [], lostDecisions: [], lostCancels: [], replayMismatches: [], resultDisagrees: [], protocolErrors: [] },
  };
  const started = Date.now();
  const deadline = started + options.durationMs;
  const pick = <T>(items: readonly T[]): T | undefined => items[Math.floor(rand() * items.length)];

  for (let i = 0; i < options.agents; i++) agents.push(await spawnAgent());
  // The first approval call elects the hub; the extension needs one to connect to.
  await agents[0]?.callTool('elicit_status', { elicitationId: 'el_warmup' });
  const ext = new SoakExtension(port, options.databaseUrl ? await pairedKeyIn(options.databaseUrl) : pairedKey(dir));

  /** A call to a process that was killed throws (its pipe closed): that slot gets a new process. */
  async function call(slot: number, name: string, args: Record<string, unknown>): Promise<ToolResult | null> {
    const agent = agents[slot];
    if (!agent) return null;
    try {
      return await agent.callTool(name, args, { timeoutMs: 20_000 });
    } catch {
      if (agents[slot] === agent) {
        agents[slot] = null;
        void agent.close().catch(() => undefined);
        agents[slot] = await spawnAgent();
        report.respawns += 1;
      }
      return null;
    }
  }

  async function agentLoop(slot: number): Promise<void> {
    while (Date.now() < deadline) {
      const roll = rand();
      const known = [...createdAcked];
      if (roll < 0.4) {
        const result = await call(slot, 'elicit_approval', { message: `soak ${slot} ${Date.now()}`, context: { slot } });
        if (result === null) report.creates.lostWithProcess += 1;
        else if (result.isError) report.creates.refused += 1;
        else createdAcked.add((result.structuredContent as { elicitationId: string }).elicitationId);
      } else if (roll < 0.5) {
        const id = pick(known);
        if (id === undefined) continue;
        const result = await call(slot, 'elicit_cancel', { elicitationId: id });
        if (result && !result.isError) canceledAcked.add(id);
      } else if (roll < 0.7) {
        const id = pick(known);
        if (id === undefined) continue;
        report.awaits += 1;
        await call(slot, 'elicit_await', { elicitationId: id, waitSeconds: 1 });
      } else {
        const id = pick(known);
        if (id === undefined) continue;
        const result = await call(slot, 'elicit_result', { elicitationId: id });
        const envelope = result && !result.isError ? (result.structuredContent as { decision: Decision }) : null;
        if (envelope) {
          report.results += 1;
          const before = resultSeen.get(id);
          if (before !== undefined && before !== envelope.decision) report.violations.resultDisagrees.push(id);
          resultSeen.set(id, envelope.decision);
        }
      }
      await sleep(rand() * 20);
    }
  }

  async function reviewer(): Promise<void> {
    while (Date.now() < deadline) {
      ext.decide(rand);
      await sleep(30 + rand() * 60);
    }
  }

  async function killer(): Promise<void> {
    while (Date.now() + options.killEveryMs < deadline) {
      await sleep(options.killEveryMs * (0.5 + rand()));
      // The interval counts from a live hub: after a takeover, wait (bounded) until the extension is on the new one.
      const live = () => ext.hubPid !== null && agents.some((a) => a?.pid === ext.hubPid);
      while (!live() && Date.now() < deadline) await sleep(20);
      const pid = ext.hubPid;
      if (pid === null || !live()) continue;
      process.kill(pid, 'SIGKILL');
      report.kills += 1;
    }
  }

  try {
    await Promise.all([...agents.map((_, slot) => agentLoop(slot)), reviewer(), killer()]);

    // Let the outbox drain: the extension re-sends after each welcome until the hub has answered every decision.
    const drainBy = Date.now() + 15_000;
    while (ext.outbox.size > 0 && Date.now() < drainBy) {
      await agents.find(Boolean)?.callTool('elicit_status', { elicitationId: 'el_drain' }).catch(() => undefined);
      await sleep(100);
    }
    await ext.stop();
    report.decisions.sent = ext.sent;
    report.decisions.refused = ext.refused;
    report.decisions.secondSurface = ext.secondSurface;
    report.violations.protocolErrors.push(...ext.protocolErrors);
    const accepted = ext.accepted();
    report.decisions.acknowledged = accepted.size;
    report.creates.acknowledged = createdAcked.size;
    report.cancels.acknowledged = canceledAcked.size;
    for (const [id, keys] of ext.okKeys) if (new Set(keys.values()).size > 1 || keys.size > 1) report.violations.decidedTwice.push(id);
    for (const id of canceledAcked) if (accepted.has(id)) report.violations.decidedTwice.push(id);

    // A final restart: every process ends, a fresh one becomes the hub and is asked about every request.
    await Promise.allSettled(agents.map((a) => a?.close()));
    const final = await spawnAgent();
    const statuses = new Map<string, string>();
    for (const id of createdAcked) {
      const result = await final.callTool('elicit_status', { elicitationId: id }, { timeoutMs: 10_000 });
      const status = result.isError ? 'missing' : String((result.structuredContent as { status: string }).status);
      statuses.set(id, status);
      if (status === 'missing') report.violations.missingAfterRestart.push(id);
    }
    await final.close();

    // Reading the store back (the journal, or the database) gives the final hub's state, and every acknowledged decision
    // and cancel is in it.
    const parse = (raw: unknown) => ApprovalRecordSchema.safeParse(raw).data;
    const store: RecordStore<ApprovalRecord> = options.databaseUrl
      ? await PgRecordStore.open<ApprovalRecord>({ url: options.databaseUrl, parse })
      : await JournalStore.open<ApprovalRecord>({ dir, parse });
    const now = Date.now();
    report.finalRequests = store.size();
    for (const [id, status] of statuses) {
      const record = store.get(id);
      const replayed = record ? effectiveStatus(record, now) : 'missing';
      if (replayed !== status) report.violations.replayMismatches.push(`${id}: hub ${status}, journal ${replayed}`);
    }
    for (const [id, { key, decision }] of accepted) {
      const record = store.get(id);
      if (record?.outcome?.idempotencyKey !== key || record.outcome.decision !== decision) report.violations.lostDecisions.push(id);
      if (resultSeen.has(id) && resultSeen.get(id) !== decision) report.violations.resultDisagrees.push(id);
    }
    for (const id of canceledAcked) if (store.get(id)?.status !== 'canceled') report.violations.lostCancels.push(id);
    await store.close();
  } finally {
    await ext.stop();
    await Promise.allSettled(agents.map((a) => a?.close()));
    rmSync(dir, { recursive: true, force: true });
  }
  report.durationMs = Date.now() - started;
  return report;
}

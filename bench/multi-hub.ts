// Several hubs on one database (issue 39, part 2): three `elicitly-companion hub --database URL` processes of the
// built server on one throw-away PostgreSQL cluster, on this one machine (hubs, database and clients share its cores).
// Measured: creates per second through the three hubs (relays calling `create` over their sockets, spread evenly), and
// how long a decision on one hub takes to reach the reviewers connected to the two others.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { newElicitationId } from '../server/durable-request.js';
import { RelayClient } from '../server/hub/relay-client.js';
import { StateDir } from '../server/state-dir.js';
import { checkApprovalInput } from '../shared/approval-input.js';
import { pairedKeyIn, postgresBin, startPgCluster } from '../test/helpers/pg-cluster.js';
import { ScriptedExtension } from '../test/helpers/scripted-extension.js';
import { record } from './metrics.mjs';

const SERVER = fileURLToPath(new URL('../dist/server/main.js', import.meta.url));
const HUBS = 3;
const CREATES = 6000;
/** Creates right after the hubs start, measured apart and withdrawn before the measured burst. */
const WARM_UP = 4000;
/**
 * Agents per hub, each its own relay socket with calls in flight: a team's agents each have their own connection, and
 * each connection's rate limit (a burst of 500, then 200 a second) bounds one agent, not the hub. 6,000 creates over
 * 30 sockets, with the 4,000 creates and cancels before them, stay within each one's burst.
 */
const RELAYS_PER_HUB = 10;
const IN_FLIGHT = 10;
const DECISIONS = 200;

/** A process's CPU time so far (user + system), in ms, from /proc/<pid>/stat (clock ticks of 10 ms on Linux). */
function cpuMs(pid: number | null): number {
  if (pid === null) return Number.NaN;
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** CPU of every PostgreSQL process on this machine (the bench's cluster is the only one it starts), in ms. */
function postgresCpuMs(): number {
  let total = 0;
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'postgres') total += cpuMs(Number(pid));
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN;
};

const request = (n: number) => {
  const checked = checkApprovalInput({ message: `multi-hub ${n}`, context: { n } });
  if (!checked.ok) throw new Error('the bench request does not validate');
  return { id: newElicitationId(), request: checked.request, renderedTemplate: null, timeoutMs: 3_600_000, requester: { client: 'bench', pid: process.pid } };
};

interface Burst {
  perSecond: number;
  /** Where the CPU went, per create. */
  cpu: string;
  /** Each create's request id, with the relay (the agent) that made it. */
  created: [RelayClient, string][];
}

/** `count` creates spread over every relay, IN_FLIGHT calls at a time on each; the agents' requests are made before the clock starts (on a team they are other machines' work). */
async function burst(relays: RelayClient[], hubs: { process: ChildProcess }[], count: number, from: number): Promise<Burst> {
  const requests = Array.from({ length: count }, (_, n) => request(from + n));
  const created: [RelayClient, string][] = [];
  let next = 0;
  const pgBefore = postgresCpuMs();
  const cpuBefore = hubs.map((h) => cpuMs(h.process.pid ?? null));
  const clientBefore = process.cpuUsage();
  const began = performance.now();
  await Promise.all(
    relays.flatMap((relay) =>
      Array.from({ length: IN_FLIGHT }, async () => {
        while (next < count) {
          const n = next++;
          const answer = await relay.call('create', requests[n] ?? request(from + n));
          if (!answer.ok) throw new Error(`create refused: ${JSON.stringify(answer.error)}`);
          created.push([relay, answer.value.elicitationId]);
        }
      }),
    ),
  );
  const perSecond = count / ((performance.now() - began) / 1000);
  const hubCpu = hubs.map((h, i) => cpuMs(h.process.pid ?? null) - (cpuBefore[i] ?? 0));
  const client = process.cpuUsage(clientBefore);
  const pgCpu = postgresCpuMs() - pgBefore;
  const cpu = `CPU per create: hubs ${hubCpu.map((ms) => ((ms * 1000) / count).toFixed(0)).join(' + ')} µs, PostgreSQL ${((pgCpu * 1000) / count).toFixed(0)} µs, the agents (this process) ${((client.user + client.system) / count).toFixed(0)} µs`;
  return { perSecond, cpu, created };
}

/** Each request canceled by the agent that made it, 100 at a time. */
async function withdraw(created: [RelayClient, string][]): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 100 }, async () => {
      while (next < created.length) {
        const [relay, id] = created[next++] ?? [];
        if (!relay || !id) continue;
        const answer = await relay.call('cancel', { id });
        if (!answer.ok) throw new Error(`cancel refused: ${JSON.stringify(answer.error)}`);
      }
    }),
  );
}

async function connectWhenUp(port: number, options: Parameters<typeof ScriptedExtension.connect>[1]): Promise<ScriptedExtension> {
  const until = Date.now() + 20_000;
  for (;;) {
    try {
      return await ScriptedExtension.connect(port, options);
    } catch (error) {
      if (Date.now() > until) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

export async function multiHub(): Promise<void> {
  if (postgresBin() === null) {
    console.log('three hubs on one database: skipped (no PostgreSQL server binaries; Debian: apt-get install postgresql)');
    return;
  }
  const cluster = startPgCluster();
  const hubs: { dir: string; port: number; process: ChildProcess }[] = [];
  const sockets: ScriptedExtension[] = [];
  const relays: RelayClient[] = [];
  try {
    for (let i = 0; i < HUBS; i++) {
      const dir = mkdtempSync(join(tmpdir(), `elicitly-bench-multi-${i}-`));
      const port = 30_000 + Math.floor(Math.random() * 20_000);
      const child = spawn(process.execPath, [SERVER, 'hub', '--database', cluster.url], { env: { ...process.env, ELICITLY_STATE_DIR: dir, ELICITLY_PORT: String(port), ELICITLY_LOG_LEVEL: 'error' }, stdio: ['ignore', 'ignore', 'inherit'] });
      hubs.push({ dir, port, process: child });
    }
    // The agents are the product's own relay (what every MCP server process uses to reach a hub); the reviewers are
    // scripted extensions.
    const reviewers: ScriptedExtension[] = [];
    for (const hub of hubs) {
      reviewers.push(await connectWhenUp(hub.port, { key: await pairedKeyIn(cluster.url) }));
      for (let r = 0; r < RELAYS_PER_HUB; r++) {
        const connected = await RelayClient.connect({ port: hub.port, key: new StateDir(hub.dir).relayKey(), callTimeoutMs: 30_000 });
        if (!connected.ok) throw new Error(`relay: ${connected.reason} ${connected.detail}`);
        relays.push(connected.relay);
      }
    }
    sockets.push(...reviewers);

    // Each hub's first create loads the engine's lazy parts.
    for (const hub of relays.filter((_, i) => i % RELAYS_PER_HUB === 0)) await hub.call('create', request(-1));
    // A hub is a server that runs for weeks, but right after start V8 is still compiling its hot paths: `perf` over a
    // first burst of 6,000 creates put about 40 % of each hub's CPU in the optimizing compiler (`--trace-opt`: 1.6 s of
    // compiling a hub over the whole bench). So the first burst is shown as start-up, then withdrawn (the engine caps
    // pending requests at 10,000), and the goal is judged on the burst after it.
    const first = await burst(relays, hubs, WARM_UP, 0);
    console.log(`  the first ${WARM_UP.toLocaleString('en')} creates after start (code still being compiled): ${first.perSecond.toFixed(0)} creates/s; ${first.cpu}`);
    await withdraw(first.created);
    const steady = await burst(relays, hubs, CREATES, WARM_UP);
    console.log(`  ${steady.cpu}`);
    console.log(`three hubs on one database: ${steady.perSecond.toFixed(0)} creates/s over ${CREATES} after the first ${WARM_UP} (${relays.length} relay sockets, ${IN_FLIGHT} calls in flight each; hubs, PostgreSQL and clients on this machine's cores)`);
    record('multi_hub_creates_per_s', 'creates through three hubs on one PostgreSQL database', steady.perSecond, '/s', 5000, 'higher');
    record('multi_hub_first_creates_per_s', `  the first ${WARM_UP.toLocaleString('en')} after the hubs start`, first.perSecond, '/s', undefined, 'higher');
    for (const reviewer of reviewers) reviewer.received.length = 0;

    // A decision on hub 0 → the reviewers of hubs 1 and 2 told (request.removed), one decision at a time.
    const [deciding, ...others] = reviewers;
    const agent = relays[0];
    if (!deciding || !agent) throw new Error('no reviewer');
    const latencies: number[] = [];
    for (let i = 0; i < DECISIONS; i++) {
      const created = await agent.call('create', request(100_000 + i));
      const id = created.ok ? created.value.elicitationId : '';
      await Promise.all(others.map((o) => o.notice('request.created', (p) => p.request.elicitationId === id, 10_000)));
      const heard = others.map((o) => o.notice('request.removed', (p) => p.elicitationId === id, 10_000).then(() => performance.now()));
      const sent = performance.now();
      await deciding.call('decide', { elicitationId: id, idempotencyKey: `bench-${i}`, decision: 'approved' }, 10_000);
      for (const at of await Promise.all(heard)) latencies.push(at - sent);
    }
    console.log(`decision on one hub → the other hubs' reviewers: p50 ${pct(latencies, 50).toFixed(1)} ms, p99 ${pct(latencies, 99).toFixed(1)} ms, max ${Math.max(...latencies).toFixed(1)} ms over ${latencies.length}`);
    record('multi_hub_fanout_p99_ms', "  a decision → the other hubs' reviewers, p99", pct(latencies, 99), 'ms', 50);
  } finally {
    for (const socket of sockets) socket.socket.terminate();
    for (const relay of relays) relay.close();
    for (const hub of hubs) hub.process.kill('SIGTERM');
    await Promise.all(hubs.map((hub) => new Promise((resolve) => (hub.process.exitCode !== null ? resolve(null) : hub.process.once('exit', resolve)))));
    cluster.stop();
    for (const hub of hubs) rmSync(hub.dir, { recursive: true, force: true });
  }
}

// Cold start (spawn → tools/list answer) against a bare `node -e ''` baseline, and idle RSS after start.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { record } from './metrics.mjs';

const SERVER = fileURLToPath(new URL('../dist/server/main.js', import.meta.url));
const RUNS = 10;
/** The bound on the start over a bare node, on each Node line. */
const GOAL_OVER_BARE_MS = 30;
/** The official reference servers, from the registry, started the same way: what a host's other servers cost. */
const REFERENCES = {
  filesystem: { pkg: '@modelcontextprotocol/server-filesystem', version: '2026.8.31', bin: 'dist/index.js', args: () => [tmpdir()] },
  everything: { pkg: '@modelcontextprotocol/server-everything', version: '2026.8.31', bin: 'dist/index.js', args: () => ['stdio'] },
};
const REFERENCE_DIR = join(process.env.ELICITLY_BENCH_CACHE ?? join(homedir(), '.cache'), 'elicitly-bench-refs');

export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

function baseline(node) {
  const began = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(node, ['-e', ''], { stdio: 'ignore' });
    child.on('error', reject);
    child.on('exit', () => resolve(performance.now() - began));
  });
}

/**
 * Spawns the server (by default the checkout's build under this node; `command` runs another, e.g. an installed bin)
 * and answers once `tools/list` returns; leaves the child running for the caller.
 */
export function startServer(command = process.execPath, args = [SERVER], env = {}) {
  const began = performance.now();
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'ignore'], env: { ...process.env, ELICITLY_LOG_LEVEL: 'error', ...env } });
  const send = (msg) => child.stdin.write(`${JSON.stringify(msg)}\n`);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('server did not answer tools/list within 10 s')), 10_000);
    createInterface({ input: child.stdout }).on('line', (line) => {
      const msg = JSON.parse(line);
      if (msg.id === 1) {
        send({ jsonrpc: '2.0', method: 'notifications/initialized' });
        send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
      } else if (msg.id === 2) {
        clearTimeout(timer);
        resolve({ ms: performance.now() - began, child, tools: msg.result.tools.length });
      }
    });
    send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '0' } } });
  });
}

function rssMb(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
  return kb / 1024;
}

/** The other Node line the goal names (22), from the registry's `node` package as .ci/run uses it; undefined if absent. */
function otherNode() {
  try {
    const path = execFileSync('npm', ['exec', '--yes', '--package=node@22', '--', 'node', '-p', 'process.execPath'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 120_000 }).trim();
    return path || undefined;
  } catch {
    return undefined;
  }
}

/** Alternates bare node and the server, so that a machine slowing down mid-run weighs on both alike. */
async function measure(node, args = [SERVER]) {
  const base = [];
  const server = [];
  await startServer(node, args).then((run) => run.child.kill()); // the first start fills the compile cache where there is one
  for (let i = 0; i < RUNS; i++) {
    base.push(await baseline(node));
    const run = await startServer(node, args);
    server.push(run.ms);
    run.child.kill();
  }
  return { bare: median(base), server: median(server) };
}

/** The reference servers' entry files, installed once from the registry into the bench's cache; undefined if that fails. */
function referenceEntries() {
  const wanted = Object.values(REFERENCES).map(({ pkg, version }) => `${pkg}@${version}`);
  const entry = ({ pkg, bin }) => join(REFERENCE_DIR, 'node_modules', pkg, bin);
  const installed = () => Object.values(REFERENCES).every((ref) => existsSync(entry(ref)) && JSON.parse(readFileSync(join(REFERENCE_DIR, 'node_modules', ref.pkg, 'package.json'), 'utf8')).version === ref.version);
  try {
    if (!installed()) execFileSync('npm', ['install', '--no-save', '--no-audit', '--no-fund', '--prefix', REFERENCE_DIR, ...wanted], { stdio: 'ignore', timeout: 300_000 });
    return installed() ? Object.fromEntries(Object.entries(REFERENCES).map(([name, ref]) => [name, [entry(ref), ...ref.args()]])) : undefined;
  } catch {
    return undefined;
  }
}

export async function coldStart() {
  const lines = [['node', process.execPath]];
  const node22 = process.version.startsWith('v22.') ? undefined : otherNode();
  if (node22) lines.push(['node22', node22]);
  for (const [key, node] of lines) {
    const version = execFileSync(node, ['-v'], { encoding: 'utf8' }).trim();
    const { bare, server } = await measure(node);
    const suffix = key === 'node' ? '' : '_22';
    console.log(`cold start on ${version}, spawn → tools/list (median of ${RUNS}): server ${server.toFixed(1)} ms, node -e '' ${bare.toFixed(1)} ms, overhead ${(server - bare).toFixed(1)} ms (goal ≤ ${GOAL_OVER_BARE_MS} ms)`);
    record(`bare_node${suffix}_ms`, `node -e '' (${version})`, bare, 'ms');
    record(`cold_start${suffix}_ms`, `cold start, spawn → tools/list (${version})`, server, 'ms');
    record(`cold_start_overhead${suffix}_ms`, `  of which over node -e '' (${version})`, server - bare, 'ms', GOAL_OVER_BARE_MS);
  }
  const references = referenceEntries();
  if (references === undefined) console.log('reference servers: not measured (npm install from the registry failed)');
  for (const [name, args] of Object.entries(references ?? {})) {
    const { pkg, version } = REFERENCES[name];
    const { bare, server } = await measure(process.execPath, args);
    console.log(`reference ${pkg}@${version} on ${process.version}, spawn → tools/list (median of ${RUNS}): ${server.toFixed(1)} ms, overhead ${(server - bare).toFixed(1)} ms over node -e ''`);
    record(`reference_${name}_ms`, `reference server-${name}, spawn → tools/list (${process.version})`, server, 'ms');
  }
  if (!node22 && !process.version.startsWith('v22.')) console.log('cold start on Node 22: not measured (npm exec --package=node@22 failed)');
  const idle = await startServer();
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const rss = rssMb(idle.child.pid);
  // The SDK loads at the first call (server/mcp/fast-handshake.ts): what that call costs, and the memory after it.
  const first = await timedCall(idle.child, 3);
  const second = await timedCall(idle.child, 4);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const rssAfterCall = rssMb(idle.child.pid);
  idle.child.kill();
  const bareRss = await bareRssMb();
  console.log(`idle RSS 1 s after start: ${rss.toFixed(1)} MiB (goal ≤ 60 MiB; a bare node waiting on stdin: ${bareRss.toFixed(1)} MiB); 1 s after a first tool call: ${rssAfterCall.toFixed(1)} MiB`);
  console.log(`the first tool call (elicit_status), which loads the SDK: ${first.toFixed(1)} ms; the next: ${second.toFixed(1)} ms`);
  record('idle_rss_mib', 'idle RSS 1 s after start', rss, 'MiB', 60);
  record('bare_node_rss_mib', '  a bare node waiting on stdin', bareRss, 'MiB');
  record('rss_after_call_mib', '  1 s after its first tool call', rssAfterCall, 'MiB');
  record('first_call_ms', 'the first tool call, which loads the SDK', first, 'ms');
}

/** Sends `elicit_status` to a started server and answers how long until its answer came, in ms. */
function timedCall(child, id) {
  const began = performance.now();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no answer to tools/call within 10 s')), 10_000);
    const lines = createInterface({ input: child.stdout });
    lines.on('line', (line) => {
      if (JSON.parse(line).id !== id) return;
      clearTimeout(timer);
      lines.close();
      resolve(performance.now() - began);
    });
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'elicit_status', arguments: { elicitationId: 'el_none' } } })}\n`);
  });
}

/** The RSS of a node that only waits on stdin: the floor any server shares. */
async function bareRssMb() {
  const child = spawn(process.execPath, ['-e', "process.stdin.resume(); process.stdout.write('up\\n')"], { stdio: ['pipe', 'pipe', 'ignore'] });
  await new Promise((resolve) => child.stdout.once('data', resolve));
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const rss = rssMb(child.pid);
  child.kill();
  return rss;
}

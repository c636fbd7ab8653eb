// Cold start (spawn → tools/list answer) against a bare `node -e ''` baseline, and idle RSS after start.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const SERVER = fileURLToPath(new URL('../dist/server/main.js', import.meta.url));
const RUNS = 10;

export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

function baseline() {
  const began = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
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

export async function coldStart() {
  const base = [];
  const server = [];
  for (let i = 0; i < RUNS; i++) {
    base.push(await baseline());
    const run = await startServer();
    server.push(run.ms);
    run.child.kill();
  }
  const idle = await startServer();
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const rss = rssMb(idle.child.pid);
  idle.child.kill();
  const b = median(base);
  const s = median(server);
  console.log(`cold start, spawn → tools/list (median of ${RUNS}): server ${s.toFixed(1)} ms, node -e '' ${b.toFixed(1)} ms, overhead ${(s - b).toFixed(1)} ms (goal ≤ 150 ms)`);
  console.log(`idle RSS 1 s after start: ${rss.toFixed(1)} MB (goal ≤ 75 MB)`);
}

// `npm run bench`: request-to-notification latency. The built server is the hub, remote.json points ntfy and a webhook
// at a fake server on 127.0.0.1; each sample runs from the start of the elicit_approval call to the fake server having
// the whole POST. Loopback only: a real ntfy server adds its own network round trip.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { StateDir } from '../server/state-dir.js';
import { FakeNtfy } from '../test/helpers/fake-ntfy.js';

const SERVER = fileURLToPath(new URL('../dist/server/main.js', import.meta.url));
const N = Number(process.env.ELICITLY_BENCH_NOTIFY_N ?? 20);

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN;
};

export async function notify(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'elicitly-bench-notify-'));
  const port = 30_000 + Math.floor(Math.random() * 20_000);
  const fake = await FakeNtfy.start();
  new StateDir(dir).updateRemote((current) => ({
    ...current,
    enabled: true,
    ntfy: { url: `${fake.url}/bench_topic` },
    webhook: { url: `${fake.url}/hook`, secret: randomBytes(32).toString('hex') },
    remindMinutes: 0,
    beforeExpiryMinutes: 0,
  }));
  const transport = new StdioClientTransport({ command: process.execPath, args: [SERVER], env: { ...process.env, ELICITLY_STATE_DIR: dir, ELICITLY_PORT: String(port), ELICITLY_LOG_LEVEL: 'error' }, stderr: 'ignore' });
  const client = new Client({ name: 'bench', version: '0' }, { capabilities: {} });
  await client.connect(transport);
  const call = async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args }, { timeout: 60_000 })).structuredContent as Record<string, unknown> | undefined;
  await call('elicit_status', { elicitationId: 'warm' });

  const ntfy: number[] = [];
  const hook: number[] = [];
  const created: number[] = [];
  for (let i = 0; i < N; i++) {
    const began = performance.now();
    const id = String((await call('elicit_approval', { message: `bench ${i}`, context: { i } }))?.elicitationId);
    created.push(performance.now() - began);
    const [toNtfy, toHook] = await Promise.all([
      fake.next((r) => r.path === '/' && r.body.includes(`/r/${id}"`), 10_000),
      fake.next((r) => r.path === '/hook' && r.body.includes(`"${id}"`), 10_000),
    ]);
    ntfy.push(toNtfy.at - began);
    hook.push(toHook.at - began);
    await call('elicit_cancel', { elicitationId: id });
  }
  // The first send also loads and connects Node's fetch: shown on its own, it is most of a short run's p95.
  const line = (what: string, xs: number[]) => `${what}: median ${pct(xs, 50).toFixed(1)} ms, p95 ${pct(xs, 95).toFixed(1)} ms, first ${(xs[0] ?? Number.NaN).toFixed(1)} ms`;
  console.log(`\nrequest → notification (${N} elicit_approval calls, fake ntfy and webhook on 127.0.0.1)`);
  console.log(`  ${line('call start → ntfy POST received   ', ntfy)}`);
  console.log(`  ${line('call start → webhook POST received', hook)}`);
  console.log(`  ${line('call start → tool result (for scale)', created)}`);
  await client.close();
  await fake.close();
  rmSync(dir, { recursive: true, force: true });
}

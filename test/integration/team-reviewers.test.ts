// Reviewers are people (issue 39, part 3), on the built server: `reviewer add`, `pair --reviewer`, an extension that
// pairs with that code over the hub's socket, its decision recorded with the name (`decidedBy`) in the result and in
// the signed ledger, and `reviewer remove` forgetting the browser so it decides nothing more.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type WebSocket from 'ws';
import { EXTENSION_ORIGIN } from '../../shared/extension-id.js';
import { connect, SERVER_ENTRY, type Harness } from '../helpers/mcp-harness.js';
import { pairExtension } from '../helpers/pairing.js';
import { freePort, ScriptedExtension } from '../helpers/scripted-extension.js';

const dir = mkdtempSync(join(tmpdir(), 'elicitly-team-'));
const port = freePort();
const env = { ELICITLY_STATE_DIR: dir, ELICITLY_PORT: String(port) };
const sockets: WebSocket[] = [];
let agent: Harness;

function cli(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync(process.execPath, [SERVER_ENTRY, ...args], { env: { ...process.env, ...env }, encoding: 'utf8', timeout: 20_000 });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

beforeAll(async () => {
  agent = await connect('v2-2025', { env });
  await agent.callTool('elicit_status', { elicitationId: 'el_warmup' });
});
afterAll(async () => {
  for (const socket of sockets) socket.terminate();
  await agent?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a team\'s reviewers on one hub', () => {
  it('a browser paired for "Ana Pérez" decides as her: the result and the ledger say so; removed, it decides nothing more', async () => {
    expect(cli('reviewer', 'add', 'Ana Pérez', '--group', 'ops').status).toBe(0);
    // Once the team has reviewers a code must name one.
    const unnamed = cli('pair');
    expect(unnamed.status).toBe(2);
    expect(unnamed.stderr).toContain('--reviewer <name> (Ana Pérez)');
    const pairing = cli('pair', '--reviewer', 'ana pérez');
    expect(pairing.status).toBe(0);
    const code = pairing.stdout.trim().split('\n').at(-1) ?? '';
    const paired = await pairExtension(port, EXTENSION_ORIGIN, code, sockets);
    if (!('key' in paired)) throw new Error(`pairing was closed with ${paired.closed}`);
    expect(cli('pair', '--list').stdout).toContain(`${paired.keyId}\tpaired`);
    expect(cli('pair', '--list').stdout).toContain('\tfor Ana Pérez');
    const listed = JSON.parse(cli('reviewer', 'list', '--json').stdout) as { reviewers: { name: string; groups: string[]; extensions: number }[] };
    expect(listed.reviewers).toEqual([expect.objectContaining({ name: 'Ana Pérez', groups: ['ops'], extensions: 1 })]);

    const created = await agent.callTool('elicit_approval', { message: 'Rotate the production database password?', context: { db: 'prod' } });
    const id = String(created.structuredContent?.elicitationId);
    const ext = await ScriptedExtension.connect(port, { key: paired });
    try {
      const removed = ext.notice('request.removed', (p) => p.elicitationId === id, 10_000);
      const decided = await ext.call('decide', { elicitationId: id, idempotencyKey: 'ana-1', decision: 'approved' }, 10_000);
      expect(decided.result).toMatchObject({ ok: true, status: 'approved' });
      // Every reviewer's history names her (protocol 14).
      expect(await removed).toMatchObject({ status: 'approved', decidedVia: 'extension', decidedBy: 'Ana Pérez' });
    } finally {
      ext.socket.close();
    }
    const result = await agent.callTool('elicit_result', { elicitationId: id });
    expect(result.structuredContent).toMatchObject({ decision: 'approved', decidedVia: 'extension', decidedBy: 'Ana Pérez' });

    // The signed ledger holds the name with the decision, and still verifies.
    const verified = cli('audit', 'verify');
    expect(verified.status, verified.stderr).toBe(0);
    const exported = cli('audit', 'export');
    expect(exported.stdout.split('\n').some((line) => line.includes(id) && line.includes('"decidedBy":"Ana Pérez"'))).toBe(true);

    // She leaves the team: her browser's key opens nothing any more.
    const removed = cli('reviewer', 'remove', 'Ana Pérez');
    expect(removed.status).toBe(0);
    expect(removed.stderr).toContain('forgot the 1 browser extension(s)');
    await expect(ScriptedExtension.connect(port, { key: paired })).rejects.toThrow();
  });
});

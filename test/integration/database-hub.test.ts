// The hub with its requests in PostgreSQL (ELICITLY_DATABASE_URL), driven as a host drives it: the built server over
// stdio, a real cluster (test/helpers/pg-cluster.ts), a scripted extension. What the person decided survives the hub
// process being killed, because it is in the database, and nothing of the requests is left in the state dir.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Harness } from '../helpers/mcp-harness.js';
import { pairedKeyIn, postgresBin, startPgCluster, type PgCluster } from '../helpers/pg-cluster.js';
import { freePort, ScriptedExtension } from '../helpers/scripted-extension.js';

const required = process.env.ELICITLY_REQUIRE_POSTGRES === '1';

describe.skipIf(postgresBin() === null && !required)('a hub whose requests are in PostgreSQL', () => {
  let cluster: PgCluster;
  const stateDir = mkdtempSync(join(tmpdir(), 'elicitly-db-hub-'));
  const port = freePort();
  const harnesses: Harness[] = [];
  beforeAll(() => {
    cluster = startPgCluster();
  }, 60_000);
  afterAll(async () => {
    for (const h of harnesses) await h.close().catch(() => undefined);
    cluster?.stop();
    rmSync(stateDir, { recursive: true, force: true });
  });

  const server = async () => {
    const h = await connect('v2-2025', { env: { ELICITLY_STATE_DIR: stateDir, ELICITLY_PORT: String(port), ELICITLY_DATABASE_URL: cluster.url } });
    harnesses.push(h);
    return h;
  };

  it('a request is a row in the database; after the hub is killed, the next hub serves it and the decision lands there', async () => {
    const first = await server();
    const created = await first.callTool('elicit_approval', { message: 'Deploy build 900 to production?', context: { build: 900 } });
    const id = String(created.structuredContent?.elicitationId);
    expect(created.structuredContent).toMatchObject({ status: 'pending' });
    const db = postgres(cluster.url, { max: 1, onnotice: () => undefined });
    try {
      const [row] = await db<{ body: string }[]>`select body from elicitly_requests where id = ${id}`;
      expect(JSON.parse(row?.body ?? '{}')).toMatchObject({ id, status: 'pending', request: { message: 'Deploy build 900 to production?' } });
      expect(existsSync(join(stateDir, 'requests.jsonl')), 'no journal beside the database').toBe(false);

      // The hub dies without a word (SIGKILL): nothing closes the store.
      process.kill(first.pid ?? 0, 'SIGKILL');
      const second = await server();
      expect((await second.callTool('elicit_status', { elicitationId: id })).structuredContent).toEqual({ status: 'pending' });

      // With a database the paired browsers are the database's too (the team's directory).
      const ext = await ScriptedExtension.connect(port, { key: await pairedKeyIn(cluster.url) });
      try {
        const decided = await ext.call('decide', { elicitationId: id, idempotencyKey: 'db-1', decision: 'approved' }, 10_000);
        expect(decided.result).toMatchObject({ ok: true, status: 'approved' });
      } finally {
        ext.socket.close();
      }
      const [after] = await db<{ body: string }[]>`select body from elicitly_requests where id = ${id}`;
      expect(JSON.parse(after?.body ?? '{}')).toMatchObject({ status: 'approved', outcome: { decision: 'approved' } });
      expect((await second.callTool('elicit_result', { elicitationId: id })).structuredContent).toMatchObject({ status: 'consumed', decision: 'approved' });
    } finally {
      await db.end();
    }
  }, 60_000);

  it('a database that is gone makes approvals answer unavailable, naming it without its password', async () => {
    const dead = `postgres://elicitly:s3cret@127.0.0.1:${freePort()}/elicitly`;
    const h = await connect('v2-2025', { env: { ELICITLY_STATE_DIR: mkdtempSync(join(tmpdir(), 'elicitly-db-gone-')), ELICITLY_PORT: String(freePort()), ELICITLY_DATABASE_URL: dead } });
    harnesses.push(h);
    const refused = await h.callTool('elicit_approval', { message: 'Anyone there?', context: {} }, { timeoutMs: 60_000 });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toMatchObject({ error: 'unavailable', message: expect.stringContaining('could not open the approval store') });
    expect(JSON.stringify(refused.structuredContent)).not.toContain('s3cret');
    expect(h.stderr()).not.toContain('s3cret');
  }, 90_000);
});

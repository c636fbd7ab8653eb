import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Harness } from '../helpers/mcp-harness.js';
import { connect } from '../helpers/mcp-harness.js';
import { ScriptedExtension, freePort, pairedKey } from '../helpers/scripted-extension.js';

const dir = mkdtempSync(join(tmpdir(), 'elicitly-multi-'));
const port = freePort();
const env = { ELICITLY_STATE_DIR: dir, ELICITLY_PORT: String(port) };
const agents: Harness[] = [];
const extensions: ScriptedExtension[] = [];

afterAll(async () => {
  extensions.forEach((e) => e.close());
  await Promise.allSettled(agents.map((a) => a.close()));
  rmSync(dir, { recursive: true, force: true });
});

async function createThrough(agent: Harness, message: string): Promise<string> {
  const created = await agent.callTool('elicit_approval', { message, context: { message } });
  expect(created.isError).toBeFalsy();
  return (created.structuredContent as { elicitationId: string }).elicitationId;
}

/**
 * Reconnects like the real extension would, bounded: the new hub must be up within the takeover window. Tried every
 * 10 ms: a takeover in another process has no event here but the port answering, and the time measured is the takeover's.
 */
async function reconnect(withinMs: number): Promise<{ ext: ScriptedExtension; tookMs: number }> {
  const began = Date.now();
  while (Date.now() - began < withinMs) {
    try {
      const ext = await ScriptedExtension.connect(port, { hello: false, key: pairedKey(dir) });
      return { ext, tookMs: Date.now() - began };
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
  throw new Error(`no hub within ${withinMs} ms`);
}

describe('three server processes sharing one hub', () => {
  it('survive kill -9 of the hub: a relay takes over and nothing acknowledged is lost', async () => {
    for (let i = 0; i < 3; i++) agents.push(await connect('v2-2025', { env }));
    const [a, b, c] = agents as [Harness, Harness, Harness];
    // a becomes the hub by being first; b and c relay.
    const ids = [await createThrough(a, 'from a'), await createThrough(b, 'from b'), await createThrough(c, 'from c'), await createThrough(b, 'second from b')] as const;

    const ext = await ScriptedExtension.connect(port, { hello: false, key: pairedKey(dir) });
    extensions.push(ext);
    const welcome = await ext.handshake();
    expect(welcome.pending.map((r) => r.elicitationId).sort()).toEqual([...ids].sort());
    const hubPid = welcome.hubPid;

    expect(await ext.call('decide', { elicitationId: ids[0], idempotencyKey: 'acked', decision: 'approved' })).toMatchObject({ result: { ok: true, status: 'approved' } });
    // A decision in flight when the hub dies (sent, its answer not waited for): the extension re-sends it from its
    // outbox with the same key.
    ext.request('decide', { elicitationId: ids[1], idempotencyKey: 'in-flight', decision: 'rejected', comment: 'no' });
    process.kill(hubPid, 'SIGKILL');

    const { ext: again, tookMs } = await reconnect(5000);
    extensions.push(again);
    expect(tookMs).toBeLessThan(2000);
    const after = await again.handshake();
    expect(after.hubPid).not.toBe(hubPid);
    const stillPending = after.pending.map((r) => r.elicitationId);
    expect(stillPending).toEqual(expect.arrayContaining([ids[2], ids[3]]));
    expect(stillPending).not.toContain(ids[0]);

    expect(await again.call('decide', { elicitationId: ids[1], idempotencyKey: 'in-flight', decision: 'rejected', comment: 'no' })).toMatchObject({ result: { ok: true, status: 'rejected' } });

    // The survivors (b and c) read results through whichever process is the hub now.
    const survivor = (await b.callTool('elicit_status', { elicitationId: ids[2] })).isError ? c : b;
    expect((await survivor.callTool('elicit_result', { elicitationId: ids[0] })).structuredContent).toEqual({
      status: 'consumed',
      receipt: expect.objectContaining({ decidedVia: 'extension', ledgerIndex: expect.any(Number) }),
      decision: 'approved',
      action: 'submit',
      decidedVia: 'extension',
      context: { message: 'from a' },
      values: {},
    });
    expect((await c.callTool('elicit_result', { elicitationId: ids[1] })).structuredContent).toEqual({
      status: 'consumed',
      receipt: expect.objectContaining({ decidedVia: 'extension', ledgerIndex: expect.any(Number) }),
      decision: 'rejected',
      action: 'cancel',
      decidedVia: 'extension',
      context: { message: 'from b' },
      comment: 'no',
    });
    expect((await b.callTool('elicit_result', { elicitationId: ids[0] })).structuredContent).toMatchObject({ decision: 'approved' });
    for (const id of [ids[2], ids[3]]) {
      expect((await c.callTool('elicit_status', { elicitationId: id })).structuredContent).toEqual({ status: 'pending' });
    }
  }, 30_000);
});

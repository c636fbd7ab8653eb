// The real server (dist/server/main.js) as the hub, remote.json enabled with ntfy and a webhook pointed at a fake
// server on 127.0.0.1: what arrives, when, and that none of the request's content ever does.
import { createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApprovalEngine } from '../../server/approvals/approval-engine.js';
import { RoleElection } from '../../server/hub/role-election.js';
import { StateDir } from '../../server/state-dir.js';
import { checkApprovalInput } from '../../shared/approval-input.js';
import { FakeNtfy, type Received } from '../helpers/fake-ntfy.js';
import type { Harness } from '../helpers/mcp-harness.js';
import { connect } from '../helpers/mcp-harness.js';
import { freePort } from '../helpers/scripted-extension.js';

const MARKER = 'CONTENT-MARKER-b71c';
const SECRET = randomBytes(32).toString('hex');
const REMIND_S = 1.2;
const BEFORE_EXPIRY_S = 3;
const TIMEOUT_S = 8;
const dir = mkdtempSync(join(tmpdir(), 'elicitly-notify-'));
const port = freePort();
let fake: FakeNtfy;
let agent: Harness;

type NtfyBody = { topic: string; title: string; message: string; click: string; tags: string[]; priority: number };
type HookBody = { type: string; elicitationId: string; agent: string; kind: string; url: string; createdAt: string; expiresAt: string; sentAt: string };

const ntfyFor = (id: string) => (r: Received) => r.path === '/' && (JSON.parse(r.body) as NtfyBody).click.endsWith(`/r/${id}`);
const hookFor = (id: string, type: string) => (r: Received) => r.path === '/hook' && (JSON.parse(r.body) as HookBody).elicitationId === id && (JSON.parse(r.body) as HookBody).type === type;
const titled = (id: string, prefix: string) => (r: Received) => ntfyFor(id)(r) && (JSON.parse(r.body) as NtfyBody).title.startsWith(prefix);

async function file(): Promise<{ id: string; began: number }> {
  const began = performance.now();
  const created = await agent.callTool('elicit_approval', { message: `Ship it? ${MARKER}`, context: { note: MARKER, amount: 1200 }, timeoutSeconds: TIMEOUT_S });
  expect(created.structuredContent).toMatchObject({ status: 'pending' });
  return { id: (created.structuredContent as { elicitationId: string }).elicitationId, began };
}

beforeAll(async () => {
  fake = await FakeNtfy.start();
  new StateDir(dir).updateRemote((current) => ({
    ...current,
    enabled: true,
    ntfy: { url: `${fake.url}/elicitly_test_topic`, token: 'tk_integration' },
    webhook: { url: `${fake.url}/hook`, secret: SECRET },
    remindMinutes: REMIND_S / 60,
    beforeExpiryMinutes: BEFORE_EXPIRY_S / 60,
  }));
  agent = await connect('v2-2025', { clientInfo: { name: 'notify-agent', version: '1.0.0' }, env: { ELICITLY_STATE_DIR: dir, ELICITLY_PORT: String(port), ELICITLY_MIN_TIMEOUT_SECONDS: '1' } });
  expect((await agent.callTool('elicit_status', { elicitationId: 'el_none' })).isError).toBe(true);
});

afterAll(async () => {
  await agent?.close();
  await fake?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('notifications from the hub', () => {
  it('a content-free notification at once, a reminder and an expiry warning on schedule, nothing after elicit_cancel, a signed webhook', async () => {
    // B: notified, then withdrawn before its reminder.
    const b = await file();
    await fake.next(ntfyFor(b.id), 10_000);
    await fake.next(hookFor(b.id, 'request.waiting'), 10_000);
    expect((await agent.callTool('elicit_cancel', { elicitationId: b.id })).structuredContent).toEqual({ status: 'canceled' });

    // A: filed after B was withdrawn, so once A's reminder and warning arrived, B's would have too.
    const a = await file();
    const first = await fake.next(ntfyFor(a.id), 10_000);
    expect(first.headers.authorization).toBe('Bearer tk_integration');
    expect(first.headers['content-type']).toBe('application/json');
    expect(JSON.parse(first.body)).toEqual({
      topic: 'elicitly_test_topic',
      title: 'Approval waiting from notify-agent',
      message: 'Open the review to see it.',
      click: `http://127.0.0.1:${port}/phone/#/r/${a.id}`,
      tags: ['approval'],
      priority: 4,
    });

    const reminder = await fake.next(titled(a.id, 'Still waiting: approval from notify-agent'), 15_000);
    // Due REMIND_S after creation, which came after `began`; generous on the late side for a loaded machine.
    expect(reminder.at - a.began).toBeGreaterThanOrEqual(REMIND_S * 1000 - 50);
    expect(reminder.at - a.began).toBeLessThan(REMIND_S * 1000 + 5000);
    const warning = await fake.next(titled(a.id, 'Expires in 1 min: approval from notify-agent'), 15_000);
    expect(warning.at - a.began).toBeGreaterThanOrEqual((TIMEOUT_S - BEFORE_EXPIRY_S) * 1000 - 50);
    expect(warning.at - a.began).toBeLessThan((TIMEOUT_S - BEFORE_EXPIRY_S) * 1000 + 5000);
    await fake.next(hookFor(a.id, 'request.expiring'), 10_000);
    expect((await agent.callTool('elicit_cancel', { elicitationId: a.id })).structuredContent).toEqual({ status: 'canceled' });

    const ofB = fake.received.filter((r) => r.body.includes(b.id));
    expect(ofB.map((r) => r.path).sort()).toEqual(['/', '/hook']);
    const ofA = fake.received.filter((r) => r.body.includes(a.id));
    expect(ofA).toHaveLength(6);

    // Nothing of the request's content, anywhere in what left.
    expect(JSON.stringify(fake.received)).not.toContain(MARKER);
    expect(JSON.stringify(fake.received)).not.toContain('Ship it');

    // The webhook: its receiver checks the signature over "<timestamp>.<raw body>" and that the timestamp is fresh.
    for (const hook of fake.received.filter((r) => r.path === '/hook')) {
      const timestamp = String(hook.headers['x-elicitly-timestamp']);
      expect(Math.abs(Date.now() / 1000 - Number(timestamp))).toBeLessThan(300);
      const expected = `sha256=${createHmac('sha256', SECRET).update(`${timestamp}.${hook.body}`).digest('hex')}`;
      expect(hook.headers['x-elicitly-signature']).toBe(expected);
    }
    const waiting = JSON.parse((await fake.next(hookFor(a.id, 'request.waiting'), 1000)).body) as HookBody;
    expect(waiting).toMatchObject({ agent: 'notify-agent', kind: 'approval', url: `http://127.0.0.1:${port}/phone/#/r/${a.id}` });
    expect(Date.parse(waiting.expiresAt) - Date.parse(waiting.createdAt)).toBe(TIMEOUT_S * 1000);
  }, 45_000);
});

describe('the role election starts it with the hub', () => {
  it('onHub runs once the engine is attached; its stop runs when the hub closes; a hub that took over sees what waits', async () => {
    const electionDir = mkdtempSync(join(tmpdir(), 'elicitly-notify-roles-'));
    const electionPort = freePort();
    const calls: { pending: string[]; stopped: boolean }[] = [];
    const election = () =>
      new RoleElection({
        port: electionPort,
        state: new StateDir(electionDir),
        openEngine: () => ApprovalEngine.open({ dir: electionDir, retentionMs: 86_400_000 }),
        onHub: (engine) => {
          const call = { pending: engine.pendingViews().map((v) => v.elicitationId), stopped: false };
          calls.push(call);
          return () => {
            call.stopped = true;
          };
        },
      });
    const first = election();
    const second = election();
    try {
      const checked = checkApprovalInput({ message: 'x', context: {} });
      if (!checked.ok) throw new Error('fixture invalid');
      const params = { id: 'el_takeover', request: checked.request, renderedTemplate: null, timeoutMs: 3_600_000, requester: { client: 'test', pid: process.pid } };
      expect(await first.call('create', params)).toMatchObject({ ok: true });
      expect(await second.call('status', { id: 'el_takeover' })).toMatchObject({ ok: true });
      expect([first.role(), second.role()]).toEqual(['hub', 'relay']);
      expect(calls).toEqual([{ pending: [], stopped: false }]);
      await first.close();
      expect(calls[0]?.stopped).toBe(true);
      // The relay takes over at once when its hub goes; the new hub's notifier starts with the request still waiting.
      expect(await second.call('status', { id: 'el_takeover' })).toMatchObject({ ok: true, value: { status: 'pending' } });
      expect(second.role()).toBe('hub');
      expect(calls[1]).toEqual({ pending: ['el_takeover'], stopped: false });
    } finally {
      await first.close();
      await second.close();
      rmSync(electionDir, { recursive: true, force: true });
    }
    expect(calls[1]?.stopped).toBe(true);
  });
});

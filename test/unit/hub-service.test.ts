// The approval service as the hub offers it (server/hub/hub-service.ts): the engine's calls, decorated with what only
// the hub knows (its reviewers and the paired count), on a real engine in a temp dir and reviewers the test sets.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApprovalEngine } from '../../server/approvals/approval-engine.js';
import { HubService, type Reviewers } from '../../server/hub/hub-service.js';
import type { CreateParams } from '../../shared/approval-calls.js';
import { checkApprovalInput } from '../../shared/approval-input.js';

let dir: string;
let engine: ApprovalEngine;
let reviewers: { connected: number; lastSeenAt: number | null; paired: number | null };
let service: HubService;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'elicitly-hub-service-'));
  engine = await ApprovalEngine.open({ dir, retentionMs: 86_400_000 });
  reviewers = { connected: 0, lastSeenAt: null, paired: 1 };
  const live: Reviewers = { connected: () => reviewers.connected, lastSeenAt: () => reviewers.lastSeenAt, paired: () => reviewers.paired };
  service = new HubService(engine, live);
});
afterEach(async () => {
  await engine.close();
  rmSync(dir, { recursive: true, force: true });
});

function create(id: string): CreateParams {
  const checked = checkApprovalInput({ message: id, context: { id } });
  if (!checked.ok) throw new Error('fixture invalid');
  return { id, request: checked.request, renderedTemplate: null, timeoutMs: 60_000, requester: { client: 'test', pid: 1 } };
}

describe('what the hub adds to a create', () => {
  it.each<[string, { connected: number; paired: number | null }, { connected: boolean; next: boolean }]>([
    ['a reviewer connected', { connected: 1, paired: 1 }, { connected: true, next: false }],
    ['paired, none connected', { connected: 0, paired: 2 }, { connected: false, next: false }],
    ['nothing paired', { connected: 0, paired: 0 }, { connected: false, next: true }],
    ['the paired count unknown (a damaged file): no advice rather than wrong advice', { connected: 0, paired: null }, { connected: false, next: false }],
  ])('%s', async (_name, now, expected) => {
    reviewers = { ...reviewers, ...now };
    const answer = await service.call('create', create('el_one'));
    if (!answer.ok) throw new Error(answer.error.message);
    expect(answer.value.reviewer).toEqual({ connected: expected.connected });
    expect('next' in answer.value).toBe(expected.next);
    if (expected.next) {
      expect(answer.value.next).toContain('npx elicitly-companion pair');
      expect(answer.value.next).toContain('do not ask them for it');
    }
  });

  it('keeps the engine\'s fields and the wire\'s order: id, deadline, reviewer, advice, then the status', async () => {
    reviewers.paired = 0;
    const answer = await service.call('create', create('el_order'));
    if (!answer.ok) throw new Error(answer.error.message);
    expect(Object.keys(answer.value)).toEqual(['elicitationId', 'expiresAt', 'reviewer', 'next', 'status']);
    expect(answer.value).toMatchObject({ elicitationId: 'el_order', status: 'pending' });
  });

  it('counts the reviewers once the engine has answered, not before', async () => {
    reviewers.paired = 0;
    const engineCall = engine.call.bind(engine);
    vi.spyOn(engine, 'call').mockImplementation(async (method, params, signal) => {
      const answer = await engineCall(method, params, signal);
      // A pairing and a reviewer that came while the request was being written.
      reviewers = { connected: 1, lastSeenAt: 5, paired: 1 };
      return answer;
    });
    const answer = await service.call('create', create('el_late'));
    expect(answer).toMatchObject({ ok: true, value: { reviewer: { connected: true } } });
    expect(answer.ok && 'next' in answer.value).toBe(false);
  });

  it('passes a refused create on as the engine said it', async () => {
    await engine.close();
    expect(await service.call('create', create('el_new'))).toEqual(await engine.call('create', create('el_new')));
    expect(await service.call('create', create('el_new'))).toMatchObject({ ok: false, error: { code: 'unavailable' } });
  });
});

describe('what only the hub answers', () => {
  it('paired: the hub\'s count, without asking the engine', async () => {
    const spy = vi.spyOn(engine, 'call');
    reviewers.paired = 3;
    expect(await service.call('paired', {})).toEqual({ ok: true, value: { paired: 3 } });
    reviewers.paired = null;
    expect(await service.call('paired', {})).toEqual({ ok: true, value: { paired: null } });
    expect(spy).not.toHaveBeenCalled();
  });

  it('info: this process, the reviewers connected and last seen, and the engine\'s pending count', async () => {
    await service.call('create', create('el_a'));
    await service.call('create', create('el_b'));
    reviewers = { connected: 2, lastSeenAt: 1234, paired: 2 };
    expect(await service.call('info', {})).toEqual({ ok: true, value: { pid: process.pid, extensionsConnected: 2, lastSeenAt: 1234, pending: 2 } });
  });

  it('answers even while the engine refuses everything: it reads no store', async () => {
    await engine.close();
    expect(await service.call('paired', {})).toMatchObject({ ok: true });
    expect(await service.call('info', {})).toMatchObject({ ok: true, value: { pending: 0 } });
  });
});

describe('every other call is the engine\'s own', () => {
  it('with its params and signal, and its answer unchanged', async () => {
    await service.call('create', create('el_x'));
    const spy = vi.spyOn(engine, 'call');
    const signal = new AbortController().signal;
    const calls = [
      ['status', { id: 'el_x' }],
      ['await', { id: 'el_x', waitMs: 1 }],
      ['view', { id: 'el_x' }],
      ['cancel', { id: 'el_x' }],
      ['result', { id: 'el_x' }],
      ['rules', {}],
      ['ruleRemove', { id: 'rule_0123456789abcdef' }],
      ['appDecide', { elicitationId: 'el_x', idempotencyKey: 'k1', decision: 'approved' }],
    ] as const;
    for (const [method, params] of calls) {
      spy.mockClear();
      const answer = await service.call(method, params, signal);
      expect(spy).toHaveBeenCalledWith(method, params, signal);
      expect(answer).toEqual(await spy.mock.results[0]?.value);
    }
  });
});

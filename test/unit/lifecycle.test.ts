import { describe, expect, it } from 'vitest';
import type { LifecycleState, Outcome } from '../../shared/lifecycle.js';
import { approvalEnvelope, consume, decide, effectiveStatus, expire, withdraw } from '../../shared/lifecycle.js';

const pending: LifecycleState = { status: 'pending', expiresAt: 1000 };
const approve: Outcome = { decision: 'approved', action: 'submit', values: { a: 1 }, idempotencyKey: 'k1' };
const reject: Outcome = { decision: 'rejected', action: 'cancel', idempotencyKey: 'k2' };

describe('lifecycle', () => {
  it.each([
    ['pending before the deadline', pending, 999, 'pending'],
    ['pending at the deadline reads expired', pending, 1000, 'expired'],
    ['approved stays approved after the deadline', { ...pending, status: 'approved' as const }, 5000, 'approved'],
  ])('effectiveStatus: %s', (_n, state, now, expected) => {
    expect(effectiveStatus(state, now)).toBe(expected);
  });

  it.each([
    ['pending → approved', pending, approve, 10, { ok: true, status: 'approved' }],
    ['pending → rejected', pending, reject, 10, { ok: true, status: 'rejected' }],
    ['past the deadline → expired', pending, approve, 1000, { ok: false, reason: 'expired' }],
    ['withdrawn', { ...pending, status: 'canceled' as const }, approve, 10, { ok: false, reason: 'withdrawn' }],
    ['second decision loses', { ...pending, status: 'approved' as const, outcome: approve }, reject, 10, { ok: false, reason: 'already_decided' }],
    ['consumed then decided again', { ...pending, status: 'consumed' as const, outcome: approve }, reject, 10, { ok: false, reason: 'already_decided' }],
  ] as const)('decide: %s', (_n, state, outcome, now, expected) => {
    const result = decide(state, outcome, now);
    expect(result.ok).toBe(expected.ok);
    if (result.ok && 'status' in expected) expect(result.state.status).toBe(expected.status);
    if (!result.ok && 'reason' in expected) expect(result.reason).toBe(expected.reason);
  });

  it('a repeated decision with the same idempotency key gets the winning outcome', () => {
    const first = decide(pending, approve, 10);
    if (!first.ok) throw new Error('first decision refused');
    const again = decide(first.state, { ...approve, values: { a: 2 } }, 20);
    expect(again).toMatchObject({ ok: true, duplicate: true, state: { outcome: { values: { a: 1 } } } });
  });

  it.each([
    ['pending → canceled', pending, 10, { ok: true }],
    ['decided first wins', { ...pending, status: 'rejected' as const, outcome: reject }, 10, { ok: false, reason: 'already_decided' }],
    ['expired', pending, 2000, { ok: false, reason: 'expired' }],
    ['twice', { ...pending, status: 'canceled' as const }, 10, { ok: false, reason: 'already_canceled' }],
  ] as const)('withdraw: %s', (_n, state, now, expected) => {
    expect(withdraw(state, now)).toMatchObject(expected);
  });

  it('expire only touches pending requests past their deadline', () => {
    expect(expire(pending, 999).status).toBe('pending');
    expect(expire(pending, 1000).status).toBe('expired');
    expect(expire({ ...pending, status: 'approved' }, 5000).status).toBe('approved');
  });

  it('consume only touches decided requests', () => {
    expect(consume({ ...pending, status: 'approved', outcome: approve }, 5).status).toBe('consumed');
    expect(consume(pending, 5).status).toBe('pending');
  });

  it.each([
    ['submit', { x: 1 }, approve, { status: 'consumed', decision: 'approved', action: 'submit', context: { x: 1 }, values: { a: 1 }, decidedVia: 'extension' }],
    ['cancel without context', undefined, reject, { status: 'consumed', decision: 'rejected', action: 'cancel', context: null, decidedVia: 'extension' }],
    ['comment', null, { ...reject, comment: 'not now' }, { status: 'consumed', decision: 'rejected', action: 'cancel', context: null, comment: 'not now', decidedVia: 'extension' }],
    ['decided in the app', null, { ...approve, decidedVia: 'app' as const }, { status: 'consumed', decision: 'approved', action: 'submit', context: null, values: { a: 1 }, decidedVia: 'app' }],
  ])('approvalEnvelope: %s', (_n, context, outcome, expected) => {
    expect(approvalEnvelope(context, outcome)).toEqual(expected);
  });
});

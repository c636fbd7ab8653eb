// What the history says a request came to: the verdict derived from the row (table-driven), the words a row shows, and
// the database keeping the stored verdict right whichever writer changes the row.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ElicitlyDb } from '../../extension/db/database.js';
import { queueDecision, settleDecision } from '../../extension/db/outbox-repo.js';
import { historyPage } from '../../extension/db/history-queries.js';
import { applyStatus, getRequest, sweepExpired, upsertView } from '../../extension/db/requests-repo.js';
import { rowFromView, type RequestRow, type StoredRow } from '../../kit/rows/rows.js';
import { collected, deriveVerdict, type Verdict, type VerdictInputs } from '../../kit/rows/verdict.js';
import { decisionSummary } from '../../kit/ui/request-summary.js';
import { freshDb, proposalView } from './fakes.js';

const approved = { decision: 'approved' as const };
const rejected = { decision: 'rejected' as const };

describe('deriveVerdict', () => {
  const cases: [string, VerdictInputs, Verdict | undefined, Verdict][] = [
    ['pending', { status: 'pending' }, undefined, 'pending'],
    ['pending with this browser\'s decision on its way', { status: 'pending', outcome: approved, delivery: 'queued' }, undefined, 'pending'],
    ['approved at the hub', { status: 'approved' }, undefined, 'approved'],
    ['rejected at the hub', { status: 'rejected' }, undefined, 'rejected'],
    ['withdrawn by the agent', { status: 'canceled' }, undefined, 'withdrawn'],
    ['expired', { status: 'expired' }, 'pending', 'expired'],
    ['collected after an approval', { status: 'consumed' }, 'approved', 'approved'],
    ['collected after a rejection', { status: 'consumed' }, 'rejected', 'rejected'],
    ['collected, this browser\'s approval delivered', { status: 'consumed', outcome: approved, delivery: 'delivered' }, undefined, 'approved'],
    ['collected, this browser\'s rejection delivered', { status: 'consumed', outcome: rejected, delivery: 'delivered' }, 'pending', 'rejected'],
    ['collected, the hub\'s approval wins over a refused local rejection', { status: 'consumed', outcome: rejected, delivery: 'refused' }, 'approved', 'approved'],
    ['collected, this browser\'s decision refused (another won)', { status: 'consumed', outcome: approved, delivery: 'refused' }, 'pending', 'unknown'],
    ['collected, this browser\'s decision still queued', { status: 'consumed', outcome: approved, delivery: 'queued' }, 'pending', 'unknown'],
    ['collected, nothing known', { status: 'consumed' }, undefined, 'unknown'],
    ['a status that moved on beats an older verdict', { status: 'canceled' }, 'approved', 'withdrawn'],
  ];
  it.each(cases)('%s', (_name, row, previous, expected) => {
    expect(deriveVerdict(row, previous)).toBe(expected);
  });

  it('says collected only for a decided request', () => {
    expect(collected({ status: 'consumed' }, 'approved')).toBe(true);
    expect(collected({ status: 'consumed' }, 'unknown')).toBe(true);
    expect(collected({ status: 'approved' }, 'approved')).toBe(false);
    expect(collected({ status: 'rejected' }, 'rejected')).toBe(false);
    for (const [status, verdict] of [['pending', 'pending'], ['canceled', 'withdrawn'], ['expired', 'expired']] as const) {
      expect(collected({ status }, verdict)).toBeNull();
    }
  });
});

describe('decisionSummary: what a history row says', () => {
  const row = (extra: Partial<RequestRow> & { verdict: Verdict }): StoredRow => ({ ...rowFromView(proposalView('el_s', 1_700_000_000_000)), ...extra });
  const cases: [string, Partial<RequestRow> & { verdict: Verdict }, string, string | null][] = [
    ['approved, not collected', { status: 'approved', verdict: 'approved' }, 'Approved', 'not collected yet'],
    ['approved and collected (consumed)', { status: 'consumed', verdict: 'approved' }, 'Approved', 'collected by the agent'],
    ['rejected and collected (consumed)', { status: 'consumed', verdict: 'rejected' }, 'Rejected', 'collected by the agent'],
    ['collected, decided elsewhere', { status: 'consumed', verdict: 'unknown' }, 'Decided elsewhere', 'collected by the agent'],
    ['withdrawn', { status: 'canceled', verdict: 'withdrawn' }, 'Withdrawn', null],
    ['expired', { status: 'expired', verdict: 'expired' }, 'Expired', null],
    ['pending', { status: 'pending', verdict: 'pending' }, 'Pending', null],
    ['pending, decided here and queued', { status: 'pending', verdict: 'pending', outcome: { decision: 'rejected', action: 'cancel' }, delivery: 'queued' }, 'Pending', 'rejected here, waiting for the hub'],
    ['pending, refused as invalid', { status: 'pending', verdict: 'pending', delivery: 'refused', refusal: { reason: 'invalid' } }, 'Pending', 'your decision was refused; decide again'],
    ['decided in the chat, not collected yet', { status: 'approved', verdict: 'approved', decidedVia: 'app' }, 'Approved', 'decided in the chat · not collected yet'],
    ['decided in the chat and collected', { status: 'consumed', verdict: 'rejected', decidedVia: 'app' }, 'Rejected', 'decided in the chat · collected by the agent'],
    ['decided on a phone, not collected yet', { status: 'approved', verdict: 'approved', decidedVia: 'phone' }, 'Approved', 'decided on a paired phone · not collected yet'],
    ['decided in the extension says nothing more', { status: 'consumed', verdict: 'approved', decidedVia: 'extension' }, 'Approved', 'collected by the agent'],
    ['on a team\'s hub, by a reviewer here', { status: 'consumed', verdict: 'approved', decidedVia: 'extension', decidedBy: 'Ana Pérez' }, 'Approved', 'by Ana Pérez · collected by the agent'],
    ['on a team\'s hub, by a reviewer on a phone', { status: 'approved', verdict: 'approved', decidedVia: 'phone', decidedBy: 'Li' }, 'Approved', 'by Li · decided on a paired phone · not collected yet'],
  ];
  it.each(cases)('%s', (_name, extra, label, note) => {
    expect(decisionSummary(row(extra))).toMatchObject({ label, note });
  });
});

describe('the stored verdict follows every writer', () => {
  let db: ElicitlyDb;
  const T = 1_700_000_000_000;
  beforeEach(() => {
    db = freshDb();
  });
  afterEach(() => db.close());

  const verdictOf = async (id: string) => (await getRequest(db, id))?.verdict;
  const filtered = async (verdict: Verdict) => (await historyPage(db, { verdict })).rows.map((r) => r.elicitationId);

  it('a decision made here: pending → (queued) pending → approved → still approved once collected', async () => {
    await upsertView(db, proposalView('el_1', T));
    expect(await verdictOf('el_1')).toBe('pending');
    const entry = { idempotencyKey: 'k1', elicitationId: 'el_1', decision: 'approved' as const, values: { name: 'X' }, included: ['name'], queuedAt: T + 1 };
    expect((await queueDecision(db, entry, null)).state).toBe('queued');
    expect(await verdictOf('el_1')).toBe('pending');
    await settleDecision(db, 'k1', { ok: true, status: 'approved' }, T + 2);
    expect(await verdictOf('el_1')).toBe('approved');
    await applyStatus(db, 'el_1', 'consumed', T + 3);
    expect(await getRequest(db, 'el_1')).toMatchObject({ status: 'consumed', verdict: 'approved' });
    expect(await filtered('approved')).toEqual(['el_1']);
  });

  it('an approval a team\'s quorum counted leaves the request pending and undecided here, until the hub says otherwise', async () => {
    await upsertView(db, proposalView('el_q', T));
    await queueDecision(db, { idempotencyKey: 'kq', elicitationId: 'el_q', decision: 'approved', queuedAt: T + 1 }, null);
    await settleDecision(db, 'kq', { ok: true, status: 'pending' }, T + 2);
    const row = await getRequest(db, 'el_q');
    expect(row).toMatchObject({ status: 'pending', verdict: 'pending', delivery: 'delivered' });
    expect(row?.decidedAt).toBeUndefined();
    await applyStatus(db, 'el_q', 'approved', T + 3);
    expect(await verdictOf('el_q')).toBe('approved');
  });

  it('a decision made elsewhere: the hub\'s status is remembered once the agent has collected it', async () => {
    await upsertView(db, proposalView('el_2', T));
    await applyStatus(db, 'el_2', 'rejected', T + 1);
    await applyStatus(db, 'el_2', 'consumed', T + 2);
    expect(await verdictOf('el_2')).toBe('rejected');
    await upsertView(db, proposalView('el_3', T + 10));
    await applyStatus(db, 'el_3', 'consumed', T + 11);
    expect(await verdictOf('el_3')).toBe('unknown');
    expect(await filtered('rejected')).toEqual(['el_2']);
    expect(await filtered('unknown')).toEqual(['el_3']);
  });

  it('a decision made in the chat: the hub says where, and the row keeps it once collected', async () => {
    await upsertView(db, proposalView('el_5', T));
    await applyStatus(db, 'el_5', 'approved', T + 1, 'app');
    await applyStatus(db, 'el_5', 'consumed', T + 2);
    expect(await getRequest(db, 'el_5')).toMatchObject({ status: 'consumed', verdict: 'approved', decidedVia: 'app' });
  });

  it('this browser\'s decision refused because another reviewer decided first is not taken for the decision', async () => {
    await upsertView(db, proposalView('el_4', T));
    await queueDecision(db, { idempotencyKey: 'k4', elicitationId: 'el_4', decision: 'approved', queuedAt: T + 1 }, null);
    await settleDecision(db, 'k4', { ok: false, reason: 'already_decided', status: 'rejected' }, T + 2);
    expect(await verdictOf('el_4')).toBe('rejected');
  });

  it('a sweep, a raw put without a verdict, and a stale verdict put back are all corrected on write', async () => {
    await db.requests.put({ ...rowFromView(proposalView('el_5', T, { expiresAt: T + 10 })) });
    expect(await sweepExpired(db, T + 20)).toBe(1);
    expect(await verdictOf('el_5')).toBe('expired');
    const { verdict: _v, ...bare } = rowFromView(proposalView('el_6', T, { status: 'canceled' }));
    await db.requests.put(bare);
    expect(await verdictOf('el_6')).toBe('withdrawn');
    await db.requests.put({ ...rowFromView(proposalView('el_7', T)), status: 'expired', verdict: 'pending' });
    expect(await verdictOf('el_7')).toBe('expired');
  });
});

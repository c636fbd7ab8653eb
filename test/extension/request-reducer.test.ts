// Issue 35, part 3: the one reducer of the hub's news about requests, shared by the extension's database and the phone.
import { describe, expect, it } from 'vitest';
import { reduceRequestEvent, type HeldRows } from '../../kit/rows/request-reducer.js';
import type { StoredRow } from '../../kit/rows/rows.js';
import { proposalView } from '../phone/phone-fakes.js';
import { rowFor, proposal } from './review-helpers.js';

const T = 1_000_000;

function held(rows: StoredRow[], waiting: string[] = []): HeldRows {
  const byId = new Map(rows.map((r) => [r.elicitationId, r]));
  return { get: (id) => byId.get(id), pending: () => rows.filter((r) => r.status === 'pending'), waiting: (id) => waiting.includes(id) };
}

function stored(id: string, extra: Partial<StoredRow> = {}): StoredRow {
  return { ...rowFor(proposal(), { elicitationId: id, createdAt: T, expiresAt: T + 60_000 }), verdict: 'pending', ...extra } as StoredRow;
}

describe('reduceRequestEvent', () => {
  it('created: a new row from the view; a known one keeps this surface\'s own decision and delivery', () => {
    expect(reduceRequestEvent({ type: 'created', view: proposalView('el_new', T) }, held([]))).toEqual([{ row: expect.objectContaining({ elicitationId: 'el_new', status: 'pending' }), previous: undefined }]);
    const mine = stored('el_mine', { outcome: { decision: 'approved' }, delivery: 'queued' });
    const [change] = reduceRequestEvent({ type: 'created', view: proposalView('el_mine', T) }, held([mine]));
    expect(change?.row).toMatchObject({ outcome: { decision: 'approved' }, delivery: 'queued' });
    expect(change?.changes).toBeUndefined();
  });

  it('removed: the status, who decided it, and when it first ended; an unknown id changes nothing', () => {
    const row = stored('el_1');
    expect(reduceRequestEvent({ type: 'removed', elicitationId: 'el_1', status: 'approved', decidedVia: 'phone', now: T + 5 }, held([row]))).toEqual([
      { row: expect.objectContaining({ status: 'approved', decidedVia: 'phone', decidedAt: T + 5 }), previous: row, changes: { status: 'approved', decidedVia: 'phone', decidedAt: T + 5 } },
    ]);
    const ended = stored('el_2', { status: 'approved', decidedAt: T + 1 });
    expect(reduceRequestEvent({ type: 'removed', elicitationId: 'el_2', status: 'consumed', now: T + 9 }, held([ended]))[0]?.changes).toEqual({ status: 'consumed' });
    expect(reduceRequestEvent({ type: 'removed', elicitationId: 'el_none', status: 'expired', now: T }, held([]))).toEqual([]);
  });

  it('welcome: a row for each listed request; one shown pending but not listed left while away, unless its own decision is on the way', () => {
    const gone = stored('el_gone');
    const late = stored('el_late', { expiresAt: T + 10 });
    const sending = stored('el_sending');
    const changes = reduceRequestEvent({ type: 'welcome', pending: [proposalView('el_new', T)], now: T + 100 }, held([gone, late, sending], ['el_sending']));
    expect(changes.map((c) => [c.row.elicitationId, c.row.status, c.changes])).toEqual([
      ['el_new', 'pending', undefined],
      ['el_gone', 'canceled', { status: 'canceled', decidedAt: T + 100 }],
      ['el_late', 'expired', { status: 'expired', decidedAt: T + 100 }],
    ]);
  });
});

// The phone's in-memory lists: what a welcome, a new request, an ended one and the page's own decision do to them.
import { describe, expect, it } from 'vitest';
import { applyCreated, applyRemoved, applyWelcome, NO_REQUESTS, RECENT_LIMIT, recordOutcome } from '../../phone/request-lists.js';
import { decisionSummary } from '../../kit/ui/request-summary.js';
import { proposalView } from './phone-fakes.js';

const T = 1_000_000;
const ids = (rows: { elicitationId: string }[]) => rows.map((r) => r.elicitationId);

describe('request lists', () => {
  it('a welcome: the pending list, and the hub\'s recent history with the hub\'s own outcome (a collected one still says which way)', () => {
    const lists = applyWelcome(NO_REQUESTS, [proposalView('el_p', T)], [
      proposalView('el_c', T - 10, { status: 'consumed', decidedAt: T - 5, outcome: { decision: 'rejected', action: 'cancel', decidedVia: 'extension' } }),
    ], T);
    expect(ids(lists.pending)).toEqual(['el_p']);
    const [collected] = lists.recent;
    expect(collected?.decidedVia).toBe('extension');
    expect(collected && decisionSummary(collected)).toMatchObject({ verdict: 'rejected', label: 'Rejected', note: 'collected by the agent' });
  });

  it('a created request: pending to the inbox, one a rule decided straight to the history', () => {
    let lists = applyCreated(NO_REQUESTS, proposalView('el_1', T));
    lists = applyCreated(lists, proposalView('el_2', T, { status: 'approved', decidedAt: T, outcome: { decision: 'approved', action: 'submit', decidedVia: 'rule', ruleId: 'r_1' } }));
    expect(ids(lists.pending)).toEqual(['el_1']);
    expect(ids(lists.recent)).toEqual(['el_2']);
  });

  it('an ended request moves to the top of the history with who decided it; the page\'s own decision is remembered on the row', () => {
    let lists = applyWelcome(NO_REQUESTS, [proposalView('el_1', T), proposalView('el_2', T)], [proposalView('el_0', T - 100, { status: 'expired', decidedAt: T - 50 })], T);
    lists = recordOutcome(lists, 'el_1', { decision: 'approved', values: { name: 'Ada' } });
    lists = applyRemoved(lists, 'el_1', 'approved', 'phone', T + 10);
    expect(ids(lists.pending)).toEqual(['el_2']);
    expect(ids(lists.recent)).toEqual(['el_1', 'el_0']);
    expect(lists.recent[0]).toMatchObject({ status: 'approved', decidedVia: 'phone', decidedAt: T + 10, outcome: { decision: 'approved', values: { name: 'Ada' } }, delivery: 'delivered', verdict: 'approved' });
  });

  it('a reconnect\'s welcome keeps what ended while the page was open; the history is bounded', () => {
    let lists = applyWelcome(NO_REQUESTS, [proposalView('el_1', T)], [], T);
    lists = applyRemoved(lists, 'el_1', 'canceled', undefined, T + 1);
    lists = applyWelcome(lists, [], [proposalView('el_9', T, { status: 'expired', decidedAt: T + 5 })], T + 6);
    expect(ids(lists.recent)).toEqual(['el_9', 'el_1']);
    for (let i = 0; i < RECENT_LIMIT + 5; i++) lists = applyCreated(lists, proposalView(`el_x${i}`, T, { status: 'expired', decidedAt: T + 100 + i }));
    expect(lists.recent).toHaveLength(RECENT_LIMIT);
  });

  it('a request shown as pending that a reconnect\'s welcome lists nowhere left while the page was away, as the extension says it', () => {
    const pending = proposalView('el_gone', T);
    let lists = applyWelcome(NO_REQUESTS, [pending, proposalView('el_kept', T)], [], T);
    // Withdrawn before its deadline: canceled; one past its deadline: expired. Before, it only vanished from the inbox.
    lists = applyWelcome(lists, [proposalView('el_kept', T)], [], T + 1000);
    expect(ids(lists.pending)).toEqual(['el_kept']);
    expect(lists.recent[0]).toMatchObject({ elicitationId: 'el_gone', status: 'canceled', decidedAt: T + 1000 });
    lists = applyWelcome(lists, [], [], pending.expiresAt + 1);
    expect(lists.recent[0]).toMatchObject({ elicitationId: 'el_kept', status: 'expired' });
  });
});

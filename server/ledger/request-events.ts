// The ledger events a change to a request or to the rules makes: derived from the record as it is (what the ledger
// should hold for it), so the same function writes a change and, at open, finds what a crash kept from the ledger.
import { hashOf, sha256, type LedgerEvent } from './ledger-format.js';
import { shownText } from '../../shared/shown-hash.js';
import { decisionHash } from '../../shared/passkey.js';
import type { ApprovalRecord } from '../approvals/approval-record.js';
import type { Rule } from '../../shared/rules.js';

/** The request as a reviewer is given it (`shared/shown-hash.ts`: the same text every surface hashes). */
export const requestHashOf = (record: Pick<ApprovalRecord, 'request' | 'renderedTemplate'>): string => sha256(shownText(record));

/** What was decided, without who or how (those are in the event): the hash a passkey's challenge binds. */
export const decisionHashOf = (outcome: NonNullable<ApprovalRecord['outcome']>): string => decisionHash(outcome);

type RequestEventType = 'request.created' | 'request.decided' | 'request.collected' | 'request.expired' | 'request.withdrawn';

/** Which events the ledger holds for a request in this state, in the order they happened (from its status alone). */
export function requestEventTypes(record: ApprovalRecord): RequestEventType[] {
  const types: RequestEventType[] = ['request.created'];
  if (record.outcome && (record.status === 'approved' || record.status === 'rejected' || record.status === 'consumed')) types.push('request.decided');
  if (record.status === 'consumed') types.push('request.collected');
  if (record.status === 'expired') types.push('request.expired');
  if (record.status === 'canceled') types.push('request.withdrawn');
  return types;
}

/**
 * Those events of a request (all of them, or `types`), made in full. The request's hash is computed only when one of
 * them carries it: collecting, expiring or withdrawing a request hashes nothing.
 */
export function requestEvents(record: ApprovalRecord, types: readonly RequestEventType[] = requestEventTypes(record)): LedgerEvent[] {
  let hash: string | undefined;
  const requestHash = () => (hash ??= requestHashOf(record));
  const { outcome } = record;
  return types.map((type): LedgerEvent => {
    switch (type) {
      case 'request.created':
        return { type, id: record.id, kind: record.kind, requestHash: requestHash(), requester: record.requester.client ?? '' };
      case 'request.decided':
        if (!outcome) throw new Error(`${record.id} has no outcome to record`);
        return {
          type,
          id: record.id,
          decision: outcome.decision,
          decidedVia: outcome.decidedVia ?? 'extension',
          ...(outcome.decidedBy !== undefined ? { decidedBy: outcome.decidedBy } : {}),
          ...(outcome.ruleId !== undefined ? { ruleId: outcome.ruleId } : {}),
          decidedAt: record.decidedAt ?? record.createdAt,
          requestHash: requestHash(),
          decisionHash: decisionHashOf(outcome),
          ...(outcome.passkey ? { passkey: outcome.passkey } : {}),
        };
      default:
        return { type, id: record.id };
    }
  });
}

/** The events of a change: those the new state has and the old one had not. */
export function changeEvents(before: ApprovalRecord | undefined, after: ApprovalRecord): LedgerEvent[] {
  const had = new Set(before ? requestEventTypes(before) : []);
  return requestEvents(after, requestEventTypes(after).filter((type) => !had.has(type)));
}

/** A rule as the person made it: its counts are not part of it. */
export const ruleHashOf = (rule: Rule): string => hashOf({ id: rule.id, effect: rule.effect, match: rule.match, createdAt: rule.createdAt, expiresAt: rule.expiresAt });

/** Rules saved (new, or changed) and removed between two lists. */
export function ruleEvents(before: readonly Rule[], after: readonly Rule[]): LedgerEvent[] {
  const old = new Map(before.map((r) => [r.id, ruleHashOf(r)]));
  const now = new Set(after.map((r) => r.id));
  const events: LedgerEvent[] = [];
  for (const rule of after) {
    const ruleHash = ruleHashOf(rule);
    if (old.get(rule.id) !== ruleHash) events.push({ type: 'rule.saved', ruleId: rule.id, ruleHash });
  }
  for (const id of old.keys()) if (!now.has(id)) events.push({ type: 'rule.removed', ruleId: id });
  return events;
}

import type { Status } from '../../shared/lifecycle.js';
import type { FieldIssue } from '../../shared/field-issues.js';
import type { DecisionAnswer } from '../../shared/wire-fields.js';
import type { ElicitlyDb } from './database.js';
import { readRow } from './requests-repo.js';
import { OutboxRowSchema, type LocalOutcome, type OutboxRow, type RequestRow } from '../../kit/rows/rows.js';


/** What became of a decision the person made: queued for the hub, or why it was not. */
type QueueOutcome =
  | { state: 'queued'; entry: OutboxRow }
  | { state: 'not_found' }
  /** This browser already decided it (another popup or tab): the first decision stands. */
  | { state: 'already_decided_here'; decision: LocalOutcome; delivery: 'queued' | 'delivered' }
  /** Withdrawn, expired or decided elsewhere: a decision now could not win. */
  | { state: 'not_pending'; status: Exclude<Status, 'pending'> }
  /** It could be queued, but never sent: over the hub's frame limit. */
  | { state: 'too_large'; issues: FieldIssue[] };

function localOutcome(entry: OutboxRow): LocalOutcome {
  // The shown hash is for the hub's check, not part of what the person decided.
  const { idempotencyKey: _key, elicitationId: _id, queuedAt: _at, shownHash: _shown, passkey, ...decided } = entry;
  return { ...decided, action: entry.decision === 'approved' ? 'submit' : 'cancel', ...(passkey ? { passkey: true as const } : {}) };
}

/**
 * Puts a decision in the outbox unless this browser already has one for the request, checked and written in one
 * transaction so a popup and a tab deciding at the same moment cannot both queue one. A decision refused as invalid
 * has left the outbox and its row is `refused`: the person may decide again.
 */
export async function queueDecision(db: ElicitlyDb, entry: OutboxRow, oversized: FieldIssue | null): Promise<QueueOutcome> {
  const checked = OutboxRowSchema.parse(entry);
  return db.transaction('rw', db.outbox, db.requests, async (): Promise<QueueOutcome> => {
    const row = readRow(await db.requests.get(checked.elicitationId));
    if (!row) return { state: 'not_found' };
    const waiting = await db.outbox.where('elicitationId').equals(checked.elicitationId).first();
    if (waiting) return { state: 'already_decided_here', decision: localOutcome(waiting), delivery: 'queued' };
    if (row.delivery === 'delivered' && row.outcome) return { state: 'already_decided_here', decision: row.outcome, delivery: 'delivered' };
    if (row.status !== 'pending') return { state: 'not_pending', status: row.status };
    // Checked last: the person hears "already decided" before being asked to shorten a decision that cannot count.
    if (oversized) return { state: 'too_large', issues: [oversized] };
    await db.outbox.put(checked);
    await db.requests.update(checked.elicitationId, { outcome: localOutcome(checked), delivery: 'queued', refusal: undefined });
    return { state: 'queued', entry: checked };
  });
}

/**
 * The outbox in the order the decisions were made, each checked like every stored row. An entry that no longer fits
 * can never be sent as it is: it leaves the outbox, and its row stops saying it is on its way, so the person can decide
 * again.
 */
export async function queuedDecisions(db: ElicitlyDb, log?: (message: string) => void): Promise<OutboxRow[]> {
  const raws: unknown[] = await db.outbox.orderBy('queuedAt').toArray();
  const entries: OutboxRow[] = [];
  for (const raw of raws) {
    const parsed = OutboxRowSchema.safeParse(raw);
    if (parsed.success) {
      entries.push(parsed.data);
      continue;
    }
    const key = OutboxRowSchema.pick({ idempotencyKey: true, elicitationId: true }).safeParse(raw);
    if (!key.success) continue;
    log?.(`dropped an unreadable outbox entry for ${key.data.elicitationId}`);
    await db.transaction('rw', db.outbox, db.requests, async () => {
      await db.outbox.delete(key.data.idempotencyKey);
      const row = readRow(await db.requests.get(key.data.elicitationId));
      if (row?.delivery === 'queued') await db.requests.update(key.data.elicitationId, { delivery: undefined });
    });
  }
  return entries;
}

/** A queued decision that can never be sent: it leaves the outbox with the refusal on its row, next to the fields. */
export async function refuseQueued(db: ElicitlyDb, entry: OutboxRow, issues: FieldIssue[]): Promise<void> {
  await db.transaction('rw', db.outbox, db.requests, async () => {
    await db.outbox.delete(entry.idempotencyKey);
    await db.requests.update(entry.elicitationId, { delivery: 'refused', refusal: { reason: 'too_large', issues } });
  });
}

/**
 * Applies the hub's answer to the queued decision with this idempotency key and returns the entry it answered
 * (undefined when it is no longer in the outbox, e.g. a repeat). A decision the hub could not record has no answer
 * here (its call's error is `unavailable`): it stays queued and is sent again after the next welcome.
 */
export async function settleDecision(db: ElicitlyDb, idempotencyKey: string, answer: DecisionAnswer, now: number): Promise<OutboxRow | undefined> {
  return db.transaction('rw', db.outbox, db.requests, async () => {
    const entry = await db.outbox.get(idempotencyKey);
    if (!entry) return entry;
    await db.outbox.delete(idempotencyKey);
    if (answer.ok && answer.status === 'pending') {
      // A team's quorum counted this approval; the request waits for the others', undecided.
      await db.requests.update(entry.elicitationId, { delivery: 'delivered', refusal: undefined });
    } else if (answer.ok) {
      await db.requests.update(entry.elicitationId, { status: answer.status ?? entry.decision, decidedAt: now, delivery: 'delivered', refusal: undefined });
    } else if (answer.reason === 'invalid') {
      // Still pending: the reviewer fixes the named fields and decides again, starting from this attempt.
      await db.requests.update(entry.elicitationId, { delivery: 'refused', refusal: { reason: 'invalid', issues: answer.issues ?? [] } });
    } else {
      const changes: Partial<RequestRow> = { delivery: 'refused', refusal: { reason: answer.reason ?? 'not_found' } };
      if (answer.status) changes.status = answer.status;
      else if (answer.reason === 'not_found') changes.status = 'canceled';
      await db.requests.update(entry.elicitationId, changes);
    }
    return entry;
  });
}

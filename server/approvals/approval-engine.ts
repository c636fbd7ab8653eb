import type { ReviewRequest } from '../../shared/approval-input.js';
import { checkDecisionValues } from '../../shared/approval-input.js';
import type { Outcome, Status } from '../../shared/lifecycle.js';
import { consume, decide, effectiveStatus, expire, resultEnvelope, withdraw } from '../../shared/lifecycle.js';
import type { DecideMessage, HubMessage, RequestView } from '../../shared/wire-protocol.js';
import { log } from '../log.js';
import { JournalStore } from '../store/journal-store.js';
import type { ApprovalRecord } from './approval-record.js';
import { ApprovalRecordSchema, toView } from './approval-record.js';
import type { Answer, ApprovalService, CreateParams, Created } from './service.js';
import { fail } from './service.js';

const SWEEP_EVERY_MS = 250;
const DAY_MS = 24 * 60 * 60 * 1000;

export type EngineEvent = Extract<HubMessage, { type: 'request.created' | 'request.updated' | 'request.removed' }>;

type DecisionAnswer = Extract<HubMessage, { type: 'decision.result' }>;

/**
 * The hub's source of truth: every change is fsync'd to the journal before anyone hears of it, so a kill -9 at any
 * instant loses nothing that was acknowledged.
 */
export class ApprovalEngine implements ApprovalService {
  private readonly waiters = new Map<string, Set<() => void>>();
  private readonly listeners = new Set<(event: EngineEvent) => void>();
  private sweepTimer: NodeJS.Timeout | undefined;
  reviewerConnected: () => boolean = () => false;

  private constructor(
    private readonly store: JournalStore<ApprovalRecord>,
    private readonly retentionMs: number,
  ) {}

  static async open(dir: string, retentionDays = 7): Promise<ApprovalEngine> {
    const store = await JournalStore.open<ApprovalRecord>({
      dir,
      parse: (raw) => {
        const parsed = ApprovalRecordSchema.safeParse(raw);
        return parsed.success ? parsed.data : undefined;
      },
    });
    const engine = new ApprovalEngine(store, retentionDays * DAY_MS);
    await engine.purge();
    await engine.sweep();
    engine.sweepTimer = setInterval(() => void engine.sweep().catch((e: unknown) => log('error', 'sweep failed', { error: String(e) })), SWEEP_EVERY_MS);
    engine.sweepTimer.unref();
    return engine;
  }

  onEvent(listener: (event: EngineEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  pendingViews(): RequestView[] {
    const now = Date.now();
    return this.store
      .all()
      .filter((r) => effectiveStatus(r, now) === 'pending')
      .map(toView);
  }

  private emit(event: EngineEvent): void {
    for (const listener of this.listeners) listener(event);
  }

  private wake(id: string): void {
    const set = this.waiters.get(id);
    if (!set) return;
    this.waiters.delete(id);
    for (const resolve of set) resolve();
  }

  private async save(record: ApprovalRecord): Promise<void> {
    await this.store.put({ ...record, updatedAt: Date.now() });
  }

  private async changed(record: ApprovalRecord, status: Status): Promise<void> {
    await this.save(record);
    this.wake(record.id);
    this.emit(status === 'pending' ? { type: 'request.updated', elicitationId: record.id, status } : { type: 'request.removed', elicitationId: record.id, status });
  }

  async sweep(now = Date.now()): Promise<void> {
    const due = this.store.all().filter((r) => r.status === 'pending' && now >= r.expiresAt);
    await Promise.all(due.map((r) => this.changed(expire(r, now), 'expired')));
  }

  async purge(now = Date.now()): Promise<number> {
    return this.store.purge((r) => r.status !== 'pending' && now - (r.consumedAt ?? r.decidedAt ?? r.createdAt) > this.retentionMs);
  }

  async create(params: CreateParams): Promise<Answer<Created>> {
    const existing = this.store.get(params.id);
    const now = Date.now();
    // A relay that lost its hub mid-call retries with the same id: answer the request that was already stored.
    const record: ApprovalRecord = existing ?? {
      id: params.id,
      updatedAt: now,
      kind: params.kind,
      status: 'pending',
      createdAt: now,
      expiresAt: now + params.timeoutMs,
      requester: params.requester,
      request: params.request,
      renderedTemplate: params.renderedTemplate,
    };
    if (!existing) {
      await this.save(record);
      this.emit({ type: 'request.created', request: toView(record) });
    }
    return { ok: true, value: { elicitationId: record.id, status: 'pending', expiresAt: new Date(record.expiresAt).toISOString(), reviewer: { connected: this.reviewerConnected() } } };
  }

  private find(id: string): ApprovalRecord | undefined {
    return this.store.get(id);
  }

  async status(id: string): Promise<Answer<{ status: Status }>> {
    const record = this.find(id);
    if (!record) return notFound(id);
    return { ok: true, value: { status: effectiveStatus(record, Date.now()) } };
  }

  async await(id: string, waitMs: number, signal?: AbortSignal): Promise<Answer<{ status: Status }>> {
    const record = this.find(id);
    if (!record) return notFound(id);
    if (effectiveStatus(record, Date.now()) === 'pending' && !signal?.aborted) {
      await new Promise<void>((resolve) => {
        const set = this.waiters.get(id) ?? new Set<() => void>();
        this.waiters.set(id, set);
        const done = () => {
          clearTimeout(timer);
          set.delete(done);
          signal?.removeEventListener('abort', done);
          resolve();
        };
        const timer = setTimeout(done, Math.min(waitMs, record.expiresAt - Date.now() + SWEEP_EVERY_MS));
        set.add(done);
        signal?.addEventListener('abort', done, { once: true });
      });
    }
    return this.status(id);
  }

  async result(id: string): Promise<Answer<Record<string, unknown>>> {
    const record = this.find(id);
    if (!record) return notFound(id);
    const status = effectiveStatus(record, Date.now());
    if (status === 'pending') return fail('pending', `${id} is still pending: nobody has decided yet. Call elicit_await to wait for the decision.`);
    if (status === 'expired') return fail('expired', `${id} expired before anyone decided; nothing was approved. Create a new request if it still matters.`);
    if (status === 'canceled') return fail('canceled', `${id} was withdrawn with elicit_cancel; there is no decision.`);
    const outcome = record.outcome as Outcome;
    if (record.status !== 'consumed') await this.changed(consume(record, Date.now()), 'consumed');
    return { ok: true, value: resultEnvelope(record.request.context, outcome) };
  }

  async cancel(id: string): Promise<Answer<{ status: 'canceled' }>> {
    const record = this.find(id);
    if (!record) return notFound(id);
    const result = withdraw(record, Date.now());
    if (!result.ok) {
      const messages = {
        already_decided: `${id} was already decided (${record.outcome?.decision ?? record.status}); read it with elicit_result.`,
        expired: `${id} already expired; there is nothing to withdraw.`,
        already_canceled: `${id} was already withdrawn.`,
      } as const;
      return fail(result.reason === 'already_canceled' ? 'already_canceled' : result.reason, messages[result.reason]);
    }
    await this.changed(result.state, 'canceled');
    return { ok: true, value: { status: 'canceled' } };
  }

  /** A reviewer's decision: validated against the schema restricted to what was included, recorded, then acknowledged. */
  async decide(message: DecideMessage): Promise<DecisionAnswer> {
    const reply = (fields: Omit<DecisionAnswer, 'type' | 'elicitationId' | 'idempotencyKey'>): DecisionAnswer => ({
      type: 'decision.result',
      elicitationId: message.elicitationId,
      idempotencyKey: message.idempotencyKey,
      ...fields,
    });
    const record = this.find(message.elicitationId);
    if (!record) return reply({ ok: false, reason: 'not_found' });
    let outcome: Outcome = { decision: message.decision, action: message.decision === 'approved' ? 'submit' : 'cancel', idempotencyKey: message.idempotencyKey };
    if (message.comment !== undefined && message.comment.trim() !== '') outcome = { ...outcome, comment: message.comment };
    if (message.decision === 'approved') {
      const checked = checkDecisionValues(record.request as unknown as ReviewRequest, message.values ?? {}, message.included);
      if (!checked.ok) return reply({ ok: false, reason: 'invalid', status: effectiveStatus(record, Date.now()), issues: checked.issues });
      outcome = { ...outcome, values: checked.values };
    }
    const result = decide(record, outcome, Date.now());
    if (!result.ok) return reply({ ok: false, reason: result.reason, status: effectiveStatus(record, Date.now()) });
    if (!result.duplicate) await this.changed(result.state, result.state.status);
    return reply({ ok: true, status: result.state.status });
  }

  async close(): Promise<void> {
    clearInterval(this.sweepTimer);
    await this.store.close();
  }
}

function notFound(id: string): { ok: false; error: { code: 'not_found'; message: string } } {
  return { ok: false, error: { code: 'not_found', message: `no request ${JSON.stringify(id)}: check the elicitationId returned by elicit_approval or elicit_proposal` } };
}

import { firstIssue, type DecideMessage, type HubMessage, type RequestView } from '../../shared/wire-protocol.js';
import type { ElicitlyDb } from '../db/database.js';
import { applyStatus, applyWelcome, getRequest, pendingCount, pruneHistory, sweepExpired, upsertView } from '../db/requests-repo.js';
import type { OutboxRow, RequestRow } from '../db/rows.js';
import { readSettings, writeConnection, writeSettings } from '../db/settings-repo.js';
import { HubConnection, type Clock, type SocketFactory } from '../hub/hub-connection.js';
import { UiMessageSchema, type DecideReply, type Decision } from '../messages.js';

/** What the background needs from the browser; the entrypoint implements it with `browser.*`, tests with fakes. */
export interface Platform {
  setBadge(count: number): Promise<void>;
  notify(row: RequestRow): Promise<void>;
  clearNotification(elicitationId: string): Promise<void>;
  newKey(): string;
}

export interface ControllerOptions {
  db: ElicitlyDb;
  platform: Platform;
  socketFactory: SocketFactory;
  clock: Clock;
  client: { name: string; version: string };
  originNeedsPairing: boolean;
  everConnected: boolean;
  /** How long a page waits for the hub's verdict before being told the decision is queued. */
  answerTimeoutMs?: number;
  log?(message: string): void;
}

/** A welcome after a long absence can carry many requests; a notification each would be noise. */
const MAX_NOTIFICATIONS_PER_WELCOME = 3;
const PRUNE_EVERY_MS = 3_600_000;

type Answer = Extract<HubMessage, { type: 'decision.result' }>;

/**
 * The background's one job: keep IndexedDB a faithful mirror of the hub and deliver the reviewer's decisions exactly
 * once. The hub is the authority on status; the outbox is the authority on decisions not yet acknowledged, and is
 * replayed (same idempotency keys) after every welcome.
 */
export class BackgroundController {
  readonly connection: HubConnection;
  private readonly waiting = new Map<string, (answer: Answer) => void>();
  private lastPrune = 0;

  constructor(private readonly o: ControllerOptions) {
    this.connection = new HubConnection({
      socketFactory: o.socketFactory,
      clock: o.clock,
      client: o.client,
      originNeedsPairing: o.originNeedsPairing,
      everConnected: o.everConnected,
      target: async () => readSettings(o.db),
      onWelcome: (pending, pairedWith) => this.welcome(pending, pairedWith),
      onMessage: (message) => void this.hubMessage(message).catch((e: unknown) => this.log(`handling ${message.type} failed: ${String(e)}`)),
      onState: (state) => void writeConnection(o.db, state).catch(() => {}),
      log: (m) => this.log(m),
    });
  }

  start(): void {
    this.connection.ensure();
    void this.refreshBadge();
  }

  /** The 30 s alarm: reconnect if the socket is gone, retire expired requests, prune old history now and then. */
  async tick(): Promise<void> {
    this.connection.ensure();
    const now = this.o.clock.now();
    await sweepExpired(this.o.db, now);
    if (now - this.lastPrune >= PRUNE_EVERY_MS) {
      this.lastPrune = now;
      await pruneHistory(this.o.db, (await readSettings(this.o.db)).retentionDays, now);
    }
    await this.refreshBadge();
  }

  /** Runtime messages from the pages; anything that does not parse is answered with an error, never thrown. */
  async handleUiMessage(raw: unknown): Promise<unknown> {
    const parsed = UiMessageSchema.safeParse(raw);
    if (!parsed.success) return { state: 'error', message: `invalid message: ${firstIssue(parsed.error)}` };
    const message = parsed.data;
    if (message.type === 'wake') {
      this.connection.ensure();
      return { ok: true };
    }
    if (message.type === 'reconnect') {
      this.connection.restart();
      return { ok: true };
    }
    return this.decide(message);
  }

  async decide(request: Decision): Promise<DecideReply> {
    const { db, clock } = this.o;
    const row = await getRequest(db, request.elicitationId);
    if (!row) return { state: 'answered', ok: false, reason: 'not_found' };
    const entry: OutboxRow = {
      idempotencyKey: this.o.platform.newKey(),
      elicitationId: request.elicitationId,
      decision: request.decision,
      queuedAt: clock.now(),
      ...(request.values === undefined ? {} : { values: request.values }),
      ...(request.included === undefined ? {} : { included: request.included }),
      ...(request.comment === undefined || request.comment === '' ? {} : { comment: request.comment }),
    };
    const { idempotencyKey: _key, elicitationId: _id, queuedAt: _at, ...decided } = entry;
    await db.transaction('rw', db.outbox, db.requests, async () => {
      await db.outbox.put(entry);
      await db.requests.update(entry.elicitationId, {
        outcome: { ...decided, action: entry.decision === 'approved' ? 'submit' : 'cancel' },
        delivery: 'queued',
        refusal: undefined,
      });
    });
    if (!this.connection.send(decideMessage(entry))) {
      void this.refreshBadge();
      return { state: 'queued' };
    }
    // Registered right after the send: the answer can only arrive on a later turn of the event loop.
    const answered = new Promise<Answer | null>((resolve) => {
      const timer = clock.setTimeout(() => {
        this.waiting.delete(entry.idempotencyKey);
        resolve(null);
      }, this.o.answerTimeoutMs ?? 5000);
      this.waiting.set(entry.idempotencyKey, (answer) => {
        clock.clearTimeout(timer);
        resolve(answer);
      });
    });
    const answer = await answered;
    if (!answer) return { state: 'queued' };
    return {
      state: 'answered',
      ok: answer.ok,
      ...(answer.status ? { status: answer.status } : {}),
      ...(answer.reason ? { reason: answer.reason } : {}),
      ...(answer.issues ? { issues: answer.issues } : {}),
    };
  }

  private async welcome(pending: RequestView[], pairedWith: string | null): Promise<void> {
    const { db, clock } = this.o;
    // The code is spent once a hub accepted it; keeping it would only re-offer a dead credential.
    if (pairedWith) {
      const settings = await readSettings(db);
      if (settings.pairingCode === pairedWith) await writeSettings(db, { ...settings, pairingCode: '' });
    }
    const added = await applyWelcome(db, pending, clock.now());
    for (const row of added) this.connection.send({ type: 'ack', elicitationId: row.elicitationId });
    await this.notifyAll(added.slice(0, MAX_NOTIFICATIONS_PER_WELCOME));
    const queued = await db.outbox.orderBy('queuedAt').toArray();
    for (const entry of queued) this.connection.send(decideMessage(entry));
    await this.refreshBadge();
  }

  private async hubMessage(message: Exclude<HubMessage, { type: 'welcome' | 'heartbeat' }>): Promise<void> {
    const { db, clock } = this.o;
    switch (message.type) {
      case 'request.created': {
        const { row, isNew } = await upsertView(db, message.request);
        this.connection.send({ type: 'ack', elicitationId: row.elicitationId });
        if (isNew) await this.notifyAll([row]);
        break;
      }
      case 'request.updated':
      case 'request.removed':
        await applyStatus(db, message.elicitationId, message.status, clock.now());
        if (message.status !== 'pending') await this.o.platform.clearNotification(message.elicitationId);
        break;
      case 'decision.result':
        await this.decisionResult(message);
        break;
      default:
        return;
    }
    await this.refreshBadge();
  }

  private async decisionResult(answer: Answer): Promise<void> {
    const { db, clock } = this.o;
    const entry = await db.outbox.get(answer.idempotencyKey);
    if (entry) {
      await db.transaction('rw', db.outbox, db.requests, async () => {
        await db.outbox.delete(answer.idempotencyKey);
        if (answer.ok) {
          await db.requests.update(entry.elicitationId, { status: answer.status ?? entry.decision, decidedAt: clock.now(), delivery: 'delivered', refusal: undefined });
        } else if (answer.reason === 'invalid') {
          // Still pending: the reviewer fixes the named fields and decides again, starting from this attempt.
          await db.requests.update(entry.elicitationId, { delivery: 'refused', refusal: { reason: 'invalid', issues: answer.issues ?? [] } });
        } else {
          const changes: Partial<RequestRow> = { delivery: 'refused', refusal: { reason: answer.reason ?? 'not_found' } };
          if (answer.status) changes.status = answer.status;
          else if (answer.reason === 'not_found') changes.status = 'canceled';
          await db.requests.update(entry.elicitationId, changes);
        }
      });
      if (answer.ok || answer.reason !== 'invalid') await this.o.platform.clearNotification(entry.elicitationId);
    }
    this.waiting.get(answer.idempotencyKey)?.(answer);
    this.waiting.delete(answer.idempotencyKey);
  }

  private async notifyAll(rows: RequestRow[]): Promise<void> {
    if (rows.length === 0 || !(await readSettings(this.o.db)).notifications) return;
    for (const row of rows) await this.o.platform.notify(row).catch((e: unknown) => this.log(`notification failed: ${String(e)}`));
  }

  private async refreshBadge(): Promise<void> {
    await this.o.platform.setBadge(await pendingCount(this.o.db, this.o.clock.now())).catch(() => {});
  }

  private log(message: string): void {
    this.o.log?.(message);
  }
}

/** An outbox row holds only the fields that were given, so it is the message minus its queueing time. */
function decideMessage(entry: OutboxRow): DecideMessage {
  const { queuedAt: _at, ...decision } = entry;
  return { type: 'decide', ...decision };
}

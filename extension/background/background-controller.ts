import type { Status } from '../../shared/lifecycle.js';
import { firstIssue, type DecisionRefusal, type RequestView } from '../../shared/wire-protocol.js';
import { parseParams } from '../../shared/peer-calls.js';
import type { ElicitlyDb } from '../db/database.js';
import { queueDecision, queuedDecisions, refuseQueued, settleDecision } from '../db/outbox-repo.js';
import { applyStatus, applyWelcome, pendingCount, pruneHistory, storeReceipt, sweepExpired, upsertView } from '../db/requests-repo.js';
import type { OutboxRow, PairingReason, RequestRow } from '../../kit/rows/rows.js';
import { hubKeyFor } from '../../kit/rows/settings-schema.js';
import { forgetHubKey, forgetPairingCode, readSettings, savePairing, writeConnection } from '../db/settings-repo.js';
import { answeredReply } from '../../kit/hub/decision-reply.js';
import { HubConnection, type AfterRefusal, type Clock, type HubEvent, type HubTarget, type SocketFactory } from '../../kit/hub/hub-connection.js';
import { replaceRules } from '../db/rules-repo.js';
import { type DecideReply, type Decision, type PasskeyMethod, type PasskeyReply, type RuleReply } from '../../kit/messages.js';
import { UiMessageSchema, type UiMessage } from '../messages.js';
import type { DecisionAnswer } from '../../shared/wire-fields.js';
import type { Rule } from '../../shared/rules.js';
import { decideParams, oversizedIssue } from './decide-frame.js';

/** What the background needs from the browser; the entrypoint implements it with `browser.*`, tests with fakes. */
export interface Platform {
  setBadge(count: number): Promise<void>;
  notify(row: RequestRow): Promise<void>;
  clearNotification(elicitationId: string): Promise<void>;
  newKey(): string;
}

interface ControllerOptions {
  db: ElicitlyDb;
  platform: Platform;
  socketFactory: SocketFactory;
  clock: Clock;
  client: { name: string; version: string };
  /** How long a page waits for the hub's verdict before being told the decision is queued (or a rule change unanswered). */
  answerTimeoutMs?: number;
  log?(message: string): void;
}

/** A welcome after a long absence can carry many requests; a notification each would be noise. */
const MAX_NOTIFICATIONS_PER_WELCOME = 3;
const PRUNE_EVERY_MS = 3_600_000;
/**
 * How long a sent decision's call waits for the hub's answer, past the page's own wait: an answer that comes late still
 * settles the outbox; one that never comes leaves the decision queued for the next welcome.
 */
const DELIVERY_TIMEOUT_MS = 30_000;

/** What the hub would answer to a decision for a request that has already ended this way. */
const ENDED: Record<Exclude<Status, 'pending'>, DecisionRefusal> = {
  approved: 'already_decided',
  rejected: 'already_decided',
  consumed: 'already_decided',
  canceled: 'withdrawn',
  expired: 'expired',
};

/**
 * The background's one job: keep IndexedDB a faithful mirror of the hub and deliver the reviewer's decisions exactly
 * once. The hub is the authority on status; the outbox is the authority on decisions not yet acknowledged, and is
 * replayed (same idempotency keys) after every welcome.
 */
export class BackgroundController {
  readonly connection: HubConnection;
  private lastPrune = 0;
  private badgeFailing = false;

  constructor(private readonly o: ControllerOptions) {
    this.connection = new HubConnection({
      socketFactory: o.socketFactory,
      clock: o.clock,
      client: o.client,
      role: 'extension',
      url: (target) => `ws://127.0.0.1:${target.port}`,
      binding: (target) => ({ port: target.port, role: 'extension' }),
      target: async () => {
        const settings = await readSettings(o.db);
        return { port: settings.port, key: hubKeyFor(settings, settings.port), pairingCode: settings.pairingCode };
      },
      onPaired: (target, key) => savePairing(o.db, target.port, key, target.pairingCode),
      onRefused: (target, reason) => this.refused(target, reason),
      onWelcome: (welcome) => this.welcome(welcome.pending, welcome.rules),
      onMessage: (message) => this.hubMessage(message).catch((e: unknown) => this.log(`handling ${message.method} failed: ${String(e)}`)),
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
    if (message.type === 'rule.save' || message.type === 'rule.delete') return this.changeRule(message);
    if (message.type === 'passkey') return this.passkey(message.method, message.params);
    if (message.type === 'shown') return { ok: this.connection.notify({ method: 'request.shown', params: { elicitationId: message.elicitationId, shownHash: message.shownHash } }) };
    return this.decide(message);
  }

  /**
   * A rule change from the Rules view goes to the hub, the one writer of rules, and the page waits a bounded time for
   * its answer. Unlike a decision it is not queued: with no hub the person is told, and nothing happens later behind
   * their back. The table changes only when the hub pushes its list (`rules.changed`), so it never shows a rule the hub
   * does not have.
   */
  private async changeRule(message: Extract<UiMessage, { type: 'rule.save' | 'rule.delete' }>): Promise<RuleReply> {
    const timeoutMs = this.o.answerTimeoutMs ?? 5000;
    const answer = message.type === 'rule.save'
      ? await this.connection.call('rule.save', { ...(message.id === undefined ? {} : { id: message.id }), rule: message.rule, ...(message.approval ?? {}) }, timeoutMs)
      : await this.connection.call('rule.delete', { id: message.id }, timeoutMs);
    if ('unanswered' in answer) return answer.unanswered === 'not_connected' ? { state: 'not_connected' } : { state: 'no_answer' };
    if (!answer.ok) return { state: 'answered', ok: false, issues: answer.error.issues ?? [{ path: '(hub)', rule: answer.error.code, message: answer.error.message }] };
    if ('removed' in answer.value) return { state: 'answered', ok: true };
    const { ok, id, issues } = answer.value;
    return { state: 'answered', ok, ...(id ? { id } : {}), ...(issues ? { issues } : {}) };
  }

  /** A passkey call from a page, checked against its schema here and answered by the hub within a bounded time. */
  private async passkey(method: PasskeyMethod, raw: Record<string, unknown>): Promise<PasskeyReply> {
    const params = parseParams(method, raw);
    if (!params.success) return { state: 'error', message: `invalid ${method}: ${firstIssue(params.error)}` };
    const answer = await this.connection.call(method, params.data, this.o.answerTimeoutMs ?? 5000);
    if ('unanswered' in answer) return answer.unanswered === 'not_connected' ? { state: 'not_connected' } : { state: 'no_answer' };
    return answer.ok ? { state: 'answered', ok: true, value: answer.value } : { state: 'answered', ok: false, code: answer.error.code, message: answer.error.message };
  }

  /**
   * One decision per request from this browser: it is queued only if nothing else decided it here first (another popup
   * or tab), and only if it can ever be sent. Then it goes to the hub, and the page waits a bounded time for the answer.
   */
  async decide(request: Decision): Promise<DecideReply> {
    const { db, clock } = this.o;
    const entry: OutboxRow = {
      idempotencyKey: this.o.platform.newKey(),
      elicitationId: request.elicitationId,
      decision: request.decision,
      queuedAt: clock.now(),
      ...(request.values === undefined ? {} : { values: request.values }),
      ...(request.included === undefined ? {} : { included: request.included }),
      ...(request.comment === undefined || request.comment === '' ? {} : { comment: request.comment }),
      ...(request.rule === undefined ? {} : { rule: request.rule }),
      ...(request.shownHash === undefined ? {} : { shownHash: request.shownHash }),
      ...(request.passkey === undefined ? {} : { passkey: request.passkey }),
    };
    const queued = await queueDecision(db, entry, oversizedIssue(decideParams(entry)));
    switch (queued.state) {
      case 'not_found':
        return { state: 'answered', ok: false, reason: 'not_found' };
      case 'not_pending':
        return { state: 'answered', ok: false, reason: ENDED[queued.status], status: queued.status };
      case 'already_decided_here':
        return { state: 'already_decided_here', decision: queued.decision, delivery: queued.delivery };
      case 'too_large':
        return { state: 'too_large', issues: queued.issues };
      case 'queued':
        break;
    }
    // The page waits a bounded time; the call goes on past it, so a late answer still settles the outbox.
    const delivered = this.deliver(entry).finally(() => void this.refreshBadge());
    const answer = await new Promise<DecisionAnswer | null>((resolve) => {
      const timer = clock.setTimeout(() => resolve(null), this.o.answerTimeoutMs ?? 5000);
      void delivered.then(
        (value) => {
          clock.clearTimeout(timer);
          resolve(value);
        },
        () => resolve(null),
      );
    });
    // No answer yet, or `unavailable` (the hub could not record it): it stays in the outbox for the next hub.
    return answer ? answeredReply(answer) : { state: 'queued' };
  }

  /**
   * Sends one queued decision and applies the hub's answer to the outbox; null while it stays queued (no hub, no answer
   * in time, or the hub could not record it). A decide the hub refused as malformed is a refusal naming its fields.
   */
  private async deliver(entry: OutboxRow): Promise<DecisionAnswer | null> {
    const answer = await this.connection.call('decide', decideParams(entry), DELIVERY_TIMEOUT_MS);
    let decided: DecisionAnswer;
    if (answer.ok) decided = answer.value;
    else if (answer.error.code === 'invalid' && !('unanswered' in answer)) decided = { ok: false, reason: 'invalid', issues: answer.error.issues ?? [{ path: '(decision)', rule: 'invalid', message: answer.error.message }] };
    else return null;
    const settled = await settleDecision(this.o.db, entry.idempotencyKey, decided, this.o.clock.now());
    // Refused but still waiting for the person (invalid values, a passkey that did not sign it): its notification stays.
    if (settled && !(!decided.ok && (decided.reason === 'invalid' || decided.status === 'pending'))) await this.o.platform.clearNotification(settled.elicitationId);
    return decided;
  }

  /** Only the refused credential goes, and only if it is still the stored one: the person may be pairing anew. */
  private async refused(target: HubTarget, reason: PairingReason): Promise<AfterRefusal> {
    if (reason === 'key_unknown') {
      if (target.key) await forgetHubKey(this.o.db, target.port, target.key.keyId);
    } else {
      await forgetPairingCode(this.o.db, target.pairingCode);
    }
    // A code may be entered in the popup meanwhile: look again after the backoff.
    return 'wait';
  }

  /**
   * A request that cannot be stored is reported and skipped by applyWelcome; should the welcome fail as a whole
   * anyway, the queued decisions are still re-sent: they do not depend on it, and the hub is waiting for them.
   */
  private async welcome(pending: RequestView[], rules: Rule[]): Promise<void> {
    const { db, clock } = this.o;
    await this.storeRules(rules);
    try {
      const { added, skipped } = await applyWelcome(db, pending, clock.now());
      for (const row of skipped) this.log(`skipped request ${row.elicitationId} of the welcome: it cannot be stored here (${row.reason})`);
      await this.notifyAll(added.slice(0, MAX_NOTIFICATIONS_PER_WELCOME));
    } catch (error) {
      this.log(`applying the welcome failed: ${String(error)}`);
    }
    await this.replayOutbox();
    await this.refreshBadge();
  }

  /** The hub's list of rules, whole; a failure is logged and leaves the last list (the next change sends it again). */
  private async storeRules(rules: readonly unknown[]): Promise<void> {
    try {
      const { skipped } = await replaceRules(this.o.db, rules);
      if (skipped > 0) this.log(`skipped ${skipped} rule(s) from the hub: they do not fit this extension's rule schema`);
    } catch (error) {
      this.log(`storing the rules failed: ${String(error)}`);
    }
  }

  /**
   * Every queued decision again, with its own key: the hub's first-decision-wins rule turns a repeat into its answer.
   * Each is its own call; their answers are applied as they come, not waited for here.
   */
  private async replayOutbox(): Promise<void> {
    for (const entry of await queuedDecisions(this.o.db, (m) => this.log(m))) {
      // Written by an older version, or over a limit that changed: sending it would only get the socket closed.
      const oversized = oversizedIssue(decideParams(entry));
      if (oversized) {
        this.log(`dropped a queued decision for ${entry.elicitationId}: ${oversized.message}`);
        await refuseQueued(this.o.db, entry, [oversized]);
        continue;
      }
      void this.deliver(entry)
        .then(() => this.refreshBadge())
        .catch((error: unknown) => this.log(`delivering the decision for ${entry.elicitationId} failed: ${String(error)}`));
    }
  }

  private async hubMessage(message: HubEvent): Promise<void> {
    const { db, clock } = this.o;
    switch (message.method) {
      case 'request.created': {
        const { request } = message.params;
        const stored = await upsertView(db, request).catch((error: unknown) => {
          this.log(`skipped request ${request.elicitationId}: it cannot be stored here (${String(error)})`);
          return null;
        });
        // One of the person's rules may have decided it already: it goes to the history, with nothing to notify.
        if (stored?.isNew && stored.row.status === 'pending') await this.notifyAll([stored.row]);
        break;
      }
      case 'rules.changed':
        await this.storeRules(message.params.rules);
        return;
      case 'request.receipt':
        await storeReceipt(db, message.params.elicitationId, message.params.receipt);
        return;
      case 'request.removed': {
        const { elicitationId, status, decidedVia, decidedBy } = message.params;
        await applyStatus(db, elicitationId, status, clock.now(), decidedVia, decidedBy);
        if (status !== 'pending') await this.o.platform.clearNotification(elicitationId);
        break;
      }
    }
    await this.refreshBadge();
  }

  private async notifyAll(rows: RequestRow[]): Promise<void> {
    if (rows.length === 0 || !(await readSettings(this.o.db)).notifications) return;
    for (const row of rows) await this.o.platform.notify(row).catch((e: unknown) => this.log(`notification failed: ${String(e)}`));
  }

  /**
   * A badge that cannot be set is logged, not thrown at the change that set it (the change itself is done), and only
   * once until it works again: it is set on every change, and one broken API would flood the log.
   */
  private async refreshBadge(): Promise<void> {
    const count = await pendingCount(this.o.db, this.o.clock.now());
    try {
      await this.o.platform.setBadge(count);
      this.badgeFailing = false;
    } catch (error) {
      if (!this.badgeFailing) this.log(`the toolbar badge cannot be set: ${error instanceof Error ? error.message : String(error)}`);
      this.badgeFailing = true;
    }
  }

  private log(message: string): void {
    this.o.log?.(message);
  }
}

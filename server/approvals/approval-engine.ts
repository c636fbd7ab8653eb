import { randomBytes } from 'node:crypto';
import type { Answer, CreateParams, Created, HubNotice, Params, Result } from '../../shared/peer-calls.js';
import { fail } from '../../shared/peer-calls.js';
import type { DecidedVia, Outcome, Status, Surface } from '../../shared/lifecycle.js';
import type { FieldIssue } from '../../shared/field-issues.js';
import type { Receipt } from '../../shared/receipt.js';
import { ruleSubject, ruleVerdict, type PathContext } from '../../shared/rule-match.js';
import { MAX_RULES, RuleSchema, describeRule, type Rule, type RuleDraft } from '../../shared/rules.js';
import { resultEnvelope, type ResultEnvelope } from '../../shared/review-request.js';
import { requestSizeIssues } from '../../shared/approval-input.js';
import { notUnicodeIssue } from '../../shared/well-formed.js';
import { formatIssues, issue } from '../../shared/field-issues.js';
import { consume, decide, effectiveStatus, expire, withdraw } from '../../shared/lifecycle.js';
import type { RequestView } from '../../shared/review-request.js';
import type { DecideParams, DecisionAnswer } from '../../shared/wire-fields.js';
import { log } from '../log.js';
import type { StoreIo } from '../store/journal-store.js';
import { JournalStore } from '../store/journal-store.js';
import { StaleRecord, type AppliedChange, type OpenRecordStore, type RecordStore } from '../store/record-store.js';
import { RULES_KEY, RulesFile, type RulesStore } from '../store/rules-file.js';
import { DecisionLedger, NO_LEDGER, type EngineLedger, type KeyDescriptor } from '../ledger/decision-ledger.js';
import { requestHashOf } from '../ledger/request-events.js';
import { keyIdOf, type KeyRole } from '../ledger/ledger-format.js';
import { ledgerKey } from '../ledger/ledger-key.js';
import { PasskeyRegistry, type PasskeyChange } from '../passkeys/passkey-registry.js';
import { decisionChallenge, decisionCore, decisionHash, needsPasskey } from '../../shared/passkey.js';
import { sameReviewer } from '../../shared/reviewers.js';
import { reviewerMayDecide, routeOf, type QuorumStatus, type RequestRoute, type RoutingRead } from '../../shared/routing.js';
import type { ApprovalRecord } from './approval-record.js';
import { ApprovalRecordSchema, toView } from './approval-record.js';

export type EngineEvent = Extract<HubNotice, { method: 'request.created' | 'request.removed' | 'request.receipt' | 'rules.changed' }>;
/** A change to the person's rules: the saved rule, or what is wrong with it (each issue names its field). */
export type RuleChange = { ok: true; rule: Rule } | { ok: false; reason: 'invalid' | 'unavailable'; issues: FieldIssue[] };

export interface EngineOptions {
  dir: string;
  /** How long ended requests are kept (`ELICITLY_RETENTION_DAYS`). */
  retentionMs: number;
  now?: () => number;
  /** How often a pending request past its deadline is recorded as expired. Default 250 ms. */
  sweepEveryMs?: number;
  /** How often ended requests past retention are purged (also once at open). Default hourly. */
  purgeEveryMs?: number;
  /** Fault seam for the store (a slow or failing fsync). */
  io?: StoreIo;
  /**
   * Where the requests are kept: the journal in `dir` by default, or a team's database (`ELICITLY_DATABASE_URL`,
   * store/pg-record-store.ts).
   */
  requests?: OpenRecordStore<ApprovalRecord>;
  /** Where the rules are kept: `rules.json` in `dir` by default, or a team's database (store/pg-rules-store.ts). */
  rules?: (parse: (raw: unknown) => Rule | undefined, max: number) => Promise<RulesStore<Rule>>;
  /** Where the passkeys are kept instead of the state dir's `passkeys.json` (a team's database). */
  passkeys?: NonNullable<Parameters<typeof PasskeyRegistry.open>[0]['list']>;
  /** Pending requests this hub keeps at most; one more create is refused naming the limit. Default 10,000. */
  maxPending?: number;
  /** How a rule's paths resolve: the person's home for `~`, and the real path with links followed. Default: as text, no home. */
  paths?: PathContext;
  /** The ledger's checkpoint cadence (tests): every this many entries, and every this many ms with activity. */
  ledgerCheckpoint?: { every?: number; ms?: number };
  /** False: no ledger at all (the bench's baseline, to measure what the ledger costs). Default true. */
  ledger?: boolean;
  /**
   * The team's ledger (a database's: `ledger/pg-ledger.ts`, its entries appended by the stores above in each change's
   * transaction), told whether this hub runs the timers. Absent: the state dir's ledger, written by this engine.
   */
  openLedger?: (context: { leads: () => boolean }) => Promise<EngineLedger>;
  /** How long the ledger keeps a sealed segment (`ELICITLY_LEDGER_RETENTION_DAYS`); absent: for ever. */
  ledgerRetentionMs?: number;
  /**
   * The team's routing policy as it is now (the directory's: read again when it changed), or what is wrong with it:
   * then nothing is filed until it is fixed, rather than reaching reviewers it should not. Absent: no routing.
   */
  routing?: () => RoutingRead;
}

/** The reviewer a deciding browser or phone was paired for, on a team's hub: their name and groups. */
export interface DecidingReviewer {
  name: string;
  groups: readonly string[];
}

/** A rule of rules file version 1, where a pattern's `?` and `\` were themselves: kept meaning exactly that. */
function migrateRule(raw: unknown, from: number): unknown {
  if (from !== 1 || raw === null || typeof raw !== 'object' || !('match' in raw)) return raw;
  const { match } = raw;
  if (match === null || typeof match !== 'object' || !('pattern' in match) || typeof match.pattern !== 'string') return raw;
  return { ...raw, match: { ...match, pattern: match.pattern.replace(/[\\?]/g, (c) => `\\${c}`) } };
}

/** Rule counts are written at most this often: a count is a statistic, not a decision (the decision is in the journal). */
const HIT_FLUSH_MS = 1000;

/**
 * The calls the engine answers by id. `paired` and `info` are about the hub's reviewers, and the hub answers them
 * (`HubService`); a decision and a rule change are the engine's own methods (`decide`, `saveRule`, `deleteRule`).
 */
export type EngineMethod = 'create' | 'status' | 'await' | 'result' | 'cancel' | 'view' | 'rules';
/** A create as the engine answers it: the hub adds whether a reviewer is there, and what to tell the person if not. */
export type EngineCreated = Omit<Created, 'reviewer' | 'next'>;
export type EngineResult<M extends EngineMethod> = M extends 'create' ? EngineCreated : Result<M>;

/**
 * Whose requests a call may see: `null`, every one (a caller on this computer); a key id, only those that key filed
 * (a relay on another machine, `key export`). Another key's request reads as not found: its existence is not told.
 */
export type Scope = string | null;

type Handlers = { [M in EngineMethod]: (params: Params<M>, scope: Scope, signal?: AbortSignal) => Promise<Answer<EngineResult<M>>> };

const HOUR_MS = 3_600_000;
/** The benchmark's design point: 10,000 pending requests in well under 200 MB. */
const MAX_PENDING = 10_000;
/** What a request created without `surfaces` (or stored before they were) may be decided in. */
const ALL_SURFACES: readonly Surface[] = ['extension', 'app'];
/** The queue key every change to the rules runs under: one at a time, like the changes to one request. */
const RULES_QUEUE = RULES_KEY;
/** A decision the store could not record: the caller answers it as every call of a failed engine (`unavailable`). */
const UNRECORDED = 'unrecorded';
/**
 * How many times a change is made again after another hub changed its request first (a shared database). Each retry
 * reads the newer version, and a request's lifecycle only moves forward, so a second retry is already rare.
 */
const STALE_RETRIES = 5;

/**
 * Whether a rule saved with a decision says the same as the decision. A confirm's "no" is an answered question
 * (approved, `confirmed: false`), so a deny rule goes with it as well as with a dismissal.
 */
function ruleFitsDecision(message: DecideParams, rule: RuleDraft, kind: string): boolean {
  if (kind === 'confirm') {
    const yes = message.decision === 'approved' && message.values?.confirmed === true;
    return rule.effect === 'allow' ? yes : !yes;
  }
  return rule.effect === (message.decision === 'approved' ? 'allow' : 'deny');
}

/**
 * The hub's source of truth. Every change is fsync'd before anyone hears of it, and the changes to one request run one
 * at a time, so an answer (a repeated decision included) is only given for what is on disk. Opened only by the process
 * that holds the hub; when its store fails it refuses everything and tells its owner, who steps down.
 */
export class ApprovalEngine {
  private readonly waiters = new Map<string, Set<() => void>>();
  private readonly listeners = new Set<(event: EngineEvent) => void>();
  private readonly failureListeners = new Set<(error: Error) => void>();
  private failureTold = false;
  /** A request's ledger events still being appended: a receipt waits for them. */
  private readonly ledgering = new Map<string, Promise<void>>();
  /** The last queued operation of each request: the next one starts after it settles. */
  private readonly tails = new Map<string, Promise<void>>();
  private readonly inflight = new Set<Promise<void>>();
  private readonly timers: NodeJS.Timeout[] = [];
  /** Answers by rule not yet counted in the rules file: rule id → how many, and when last. */
  private readonly hits = new Map<string, { count: number; last: number }>();
  private hitsFlushedAt = 0;
  private sweeping = false;
  private closing = false;
  private closed: Promise<void> | undefined;
  /** Which surfaces were recorded showing which pending request (`surface id`): said once each, forgotten as it ends. */
  private readonly shown = new Set<string>();
  /** Pending requests by id, kept as changes commit: the cap is checked on every create without a scan. */
  private readonly pending = new Set<string>();
  /**
   * Creates past the cap check whose record is not yet on disk. They count against the cap from the check on, in the
   * same synchronous step: counting only committed requests let parallel creates all pass it (11,975 of 10,000).
   */
  private reserved = 0;

  private readonly handlers: Handlers = {
    create: (p, scope) => this.create(p, scope),
    status: async (p, scope) => this.status(p.id, scope),
    await: (p, scope, signal) => this.await(p.id, p.waitMs, scope, signal),
    result: (p, scope) => this.result(p.id, scope),
    cancel: (p, scope) => this.cancel(p.id, scope),
    view: async (p, scope) => {
      const record = this.visible(p.id, scope);
      if (!record) return fail('not_found', `no request ${p.id} (unknown, or removed after the retention period)`);
      // The chat's review reads a request to show it: that is its showing.
      this.recordShown(record.id, 'app', requestHashOf(record));
      return { ok: true, value: toView({ ...record, status: effectiveStatus(record, this.now()) }) };
    },
    rules: async () => ({ ok: true, value: { rules: [...this.rules.all()] } }),
  };

  private constructor(
    private readonly store: RecordStore<ApprovalRecord>,
    private readonly rules: RulesStore<Rule>,
    private readonly ledger: EngineLedger,
    /** The person's passkeys and setting; their changes go to the ledger like every other. */
    readonly passkeys: PasskeyRegistry,
    /** The ledger signing key's id, bound into every passkey challenge: an assertion for another hub means nothing here. */
    private readonly hubKeyId: string,
    private readonly options: EngineOptions,
    private readonly now: () => number,
  ) {
    const failed = (error: Error) => this.failed(error);
    store.onFailure(failed);
    // Another hub's change, applied in the request's turn: nothing this engine is doing to that request sees it change
    // under it.
    store.onRemoteChange((change) => {
      void this.exclusive(change.id, async () => {
        const applied = change.apply();
        if (applied) this.applied(applied);
      });
    });
    rules.onFailure(failed);
    // Another hub's rules, read in the rules' turn; a failed read has failed the store (the hub steps down).
    rules.onRemoteChange((change) => {
      void this.exclusive(RULES_QUEUE, async () => {
        const applied = await change.apply();
        if (applied) this.rulesApplied(applied);
      }).catch(() => undefined);
    });
    passkeys.onFailure(failed);
  }

  /** The first failure of a store (journal, rules, ledger), told to the owner once: it steps the hub down. */
  private failed(error: Error): void {
    if (this.failureTold) return;
    this.failureTold = true;
    for (const listener of this.failureListeners) listener(error);
  }

  static async open(options: EngineOptions): Promise<ApprovalEngine> {
    const parse = (raw: unknown) => {
      const parsed = ApprovalRecordSchema.safeParse(raw);
      return parsed.success ? parsed.data : undefined;
    };
    const store = options.requests ? await options.requests(parse) : await JournalStore.open<ApprovalRecord>({ dir: options.dir, io: options.io, parse });
    const parseRule = (raw: unknown) => {
      const parsed = RuleSchema.safeParse(raw);
      return parsed.success ? parsed.data : undefined;
    };
    let rules: RulesStore<Rule>;
    try {
      rules = options.rules ? await options.rules(parseRule, MAX_RULES) : await RulesFile.open<Rule>({
        dir: options.dir,
        io: options.io,
        max: MAX_RULES,
        migrate: migrateRule,
        parse: parseRule,
      });
    } catch (error) {
      await store.close();
      throw error;
    }
    const closeStores = () => Promise.all([store.close(), rules.close()]);
    let ledger: EngineLedger = NO_LEDGER;
    try {
      if (options.ledger !== false && options.openLedger) ledger = await options.openLedger({ leads: () => store.leads() });
      else if (options.ledger !== false) ledger = await DecisionLedger.open({
        dir: options.dir,
        io: options.io,
        now: options.now,
        records: store.all(),
        rules: rules.all(),
        checkpointEvery: options.ledgerCheckpoint?.every,
        checkpointMs: options.ledgerCheckpoint?.ms,
      });
    } catch (error) {
      await closeStores();
      throw error;
    }
    // The ledger has read its key already; only the bench's run without one reads it here.
    const hubKeyId = ledger.keyId ?? keyIdOf(ledgerKey(options.dir).publicKey);
    let passkeys: PasskeyRegistry;
    try {
      passkeys = await PasskeyRegistry.open({
        dir: options.dir,
        hub: hubKeyId,
        io: options.io,
        now: options.now,
        onChange: (change: PasskeyChange) => ledger.recordPasskey(change),
        ...(options.passkeys ? { list: options.passkeys } : {}),
      });
    } catch (error) {
      await closeStores();
      await ledger.close();
      throw error;
    }
    const engine = new ApprovalEngine(store, rules, ledger, passkeys, hubKeyId, options, options.now ?? Date.now);
    for (const record of store.all()) if (record.status === 'pending') engine.pending.add(record.id);
    // A request bound to a connection left by a hub that is gone: that connection is gone with it, and so is its asker.
    // Not on a shared database, where the connection may be another hub's, alive.
    if (!store.shared) await engine.withdrawBound(store.all().filter((r) => r.bound && r.status === 'pending').map((r) => r.id));
    await engine.purge();
    await engine.sweep();
    const every = (ms: number, run: () => Promise<unknown>, what: string) => {
      const timer = setInterval(() => void run().catch((e: unknown) => log('error', `${what} failed`, { error: String(e) })), ms);
      timer.unref();
      engine.timers.push(timer);
    };
    every(options.sweepEveryMs ?? 250, () => engine.sweep(), 'expiry sweep');
    every(options.purgeEveryMs ?? HOUR_MS, () => engine.purge(), 'retention purge');
    return engine;
  }

  /** What the last open of the store moved aside as damaged, if anything. */
  get damage() {
    return this.store.damage;
  }

  /** Every call passes here, so a failed or closing engine refuses them all in one place. */
  call<M extends EngineMethod>(method: M, params: Params<M>, scope: Scope, signal?: AbortSignal): Promise<Answer<EngineResult<M>>> {
    if (this.unusable()) return Promise.resolve(this.unavailable());
    const handler: Handlers[M] = this.handlers[method];
    return handler(params, scope, signal);
  }

  /** Requests waiting for a decision now (the hub's `info`), those of one key only when scoped. */
  pendingCount(scope: Scope = null): number {
    if (scope === null) return this.pending.size;
    let count = 0;
    for (const id of this.pending) if (this.store.get(id)?.owner === scope) count++;
    return count;
  }

  /** The record, if this scope may see it. */
  private visible(id: string, scope: Scope): ApprovalRecord | undefined {
    const record = this.store.get(id);
    return record && (scope === null || record.owner === scope) ? record : undefined;
  }

  /** The team's route a request took at creation, if it took one: whose reviewers it reaches. */
  routeOf(id: string): RequestRoute | undefined {
    return this.store.get(id)?.route;
  }

  /**
   * Withdraws these requests where they still wait: the connection that filed them with `bound` closed. Each in its
   * own request's queue; one that was decided meanwhile keeps its decision.
   */
  withdrawBound(ids: Iterable<string>): Promise<void> {
    return Promise.all([...ids].map((id) => this.cancel(id, null))).then(() => undefined);
  }

  onEvent(listener: (event: EngineEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Whether this hub runs the timers: always on the journal; one hub of a shared database at a time. */
  leads(): boolean {
    return this.store.leads();
  }

  /** Called when the store failed: this engine answers `unavailable` from then on. */
  onFailure(listener: (error: Error) => void): () => void {
    this.failureListeners.add(listener);
    return () => this.failureListeners.delete(listener);
  }

  pendingViews(): RequestView[] {
    const now = this.now();
    return this.store
      .all()
      .filter((r) => effectiveStatus(r, now) === 'pending')
      .map(toView);
  }

  /**
   * The last `count` ended requests (decided, withdrawn, expired, consumed), newest first: a device's welcome carries
   * them as its history, since it keeps none of its own.
   */
  recentViews(count: number): RequestView[] {
    const now = this.now();
    const ended: { at: number; view: RequestView }[] = [];
    for (const record of this.store.all()) {
      const status = effectiveStatus(record, now);
      if (status === 'pending') continue;
      // Not yet swept, an expired request ended at its deadline.
      ended.push({ at: record.decidedAt ?? (record.status === 'pending' ? record.expiresAt : record.updatedAt), view: toView({ ...record, status }) });
    }
    return ended
      .sort((a, b) => b.at - a.at)
      .slice(0, count)
      .map((e) => e.view);
  }

  /** The person's rules, as the hub's welcome and `rules` frames carry them. */
  ruleList(): Rule[] {
    return [...this.rules.all()];
  }

  /** What the last open of the rules file moved aside as damaged, if anything. */
  get rulesDamage() {
    return this.rules.damage;
  }

  /**
   * Saves a rule the person made (the extension's Rules view, or a decision's "Always …"): a new one, or `id` replaced
   * whole. On disk before it answers; every extension is then sent the new list.
   */
  saveRule(draft: RuleDraft, options: { id?: string; from?: string } = {}): Promise<RuleChange> {
    if (this.unusable()) return Promise.resolve({ ok: false, reason: 'unavailable', issues: [] });
    const notText = notUnicodeIssue(draft, ['rule']);
    if (notText) return Promise.resolve({ ok: false, reason: 'invalid', issues: [notText] });
    return this.exclusive(RULES_QUEUE, async (): Promise<RuleChange> => {
      const now = this.now();
      const all = this.rules.all();
      // An existing rule ended now (the Rules view's "End now", whose clock is the page's) stops applying; a new rule that
      // would never apply is a mistake.
      if (draft.expiresAt !== null && draft.expiresAt <= now && options.id === undefined) {
        return { ok: false, reason: 'invalid', issues: [issue(['rule', 'expiresAt'], 'in_the_past', 'must be in the future (or null: until removed)')] };
      }
      let next: Rule[];
      let saved: Rule;
      const existing = options.id === undefined ? undefined : all.find((r) => r.id === options.id);
      if (options.id !== undefined && !existing) return { ok: false, reason: 'invalid', issues: [issue(['id'], 'not_found', `no rule ${options.id} (removed, or expired)`)] };
      // The same "always" saved again (the same effect and conditions) renews the one rule rather than adding a copy.
      const same = existing ?? all.find((r) => r.effect === draft.effect && JSON.stringify(r.match) === JSON.stringify(draft.match));
      if (same) {
        saved = { ...same, effect: draft.effect, match: draft.match, expiresAt: draft.expiresAt };
        next = all.map((r) => (r.id === same.id ? saved : r));
      } else {
        if (all.length >= MAX_RULES) {
          return { ok: false, reason: 'invalid', issues: [issue(['rule'], 'limit', `there are already ${all.length} rules, the most kept (${MAX_RULES}): remove some first`)] };
        }
        const from = options.from !== undefined && options.from.length <= 100 ? { from: options.from } : {};
        saved = RuleSchema.parse({ id: `rule_${randomBytes(8).toString('hex')}`, effect: draft.effect, match: draft.match, createdAt: now, expiresAt: draft.expiresAt, ...from });
        next = [...all, saved];
      }
      if (!(await this.writeRules(next))) return { ok: false, reason: 'unavailable', issues: [] };
      this.applyRulesToPending();
      return { ok: true, rule: saved };
    });
  }

  /**
   * After the person saved a rule, the requests already waiting that the rules now decide are decided too: five
   * sessions asking the same thing are all answered by one "Always allow". Each runs in its own request's queue, after
   * whatever change it is in, and is never awaited here: the saving call may hold a request's queue itself.
   */
  private applyRulesToPending(): void {
    for (const id of [...this.pending]) {
      void this.exclusive(id, async () => {
        if (this.unusable()) return;
        const record = this.store.get(id);
        const now = this.now();
        if (!record || effectiveStatus(record, now) !== 'pending') return;
        const decided = this.decidedByRule(record, now);
        if (decided && (await this.write(decided.record))) {
          this.countHits(decided.used, now);
          this.changed(decided.record);
        }
      });
    }
  }

  /** Removes one rule; true when there was one. 'unavailable' when it could not be made durable. */
  deleteRule(id: string): Promise<boolean | 'unavailable'> {
    if (this.unusable()) return Promise.resolve('unavailable');
    return this.exclusive(RULES_QUEUE, async () => {
      const all = this.rules.all();
      if (!all.some((r) => r.id === id)) return false;
      return (await this.writeRules(all.filter((r) => r.id !== id))) ? true : 'unavailable';
    });
  }

  private async writeRules(next: Rule[]): Promise<boolean> {
    const before = this.rules.all();
    try {
      await this.rules.replace(next);
    } catch (error) {
      // Another hub changed the rules first: the change is made again from its list (`unlessStale`).
      if (error instanceof StaleRecord) throw error;
      // Logged by the store; its failure listeners step the hub down.
      return false;
    }
    try {
      await this.ledger.recordRules(before, next);
    } catch (error) {
      this.ledgerFailed(error);
      return false;
    }
    this.emit({ method: 'rules.changed', params: { rules: this.ruleList() } });
    return true;
  }

  /** Removes the rules whose time is up, and tells the extensions. */
  private async sweepRules(): Promise<void> {
    const now = this.now();
    if (!this.rules.all().some((r) => r.expiresAt !== null && now >= r.expiresAt)) return;
    await this.exclusive(RULES_QUEUE, async () => {
      const at = this.now();
      const live = this.rules.all().filter((r) => r.expiresAt === null || at < r.expiresAt);
      if (live.length !== this.rules.all().length) await this.writeRules(live);
    });
  }

  /** Records every pending request past its deadline as expired, and removes expired rules. */
  async sweep(): Promise<void> {
    if (this.sweeping || this.unusable()) return;
    this.sweeping = true;
    try {
      await this.sweepRules();
      await this.flushHits(false);
      // Expiry is read lazily everywhere; recording it (and telling every hub's peers) is the leading hub's work.
      if (!this.store.leads()) return;
      const now = this.now();
      const due = this.store.all().filter((r) => r.status === 'pending' && now >= r.expiresAt);
      await Promise.all(
        due.map((r) =>
          this.exclusive(r.id, async () => {
            const current = this.store.get(r.id);
            if (!current || current.status !== 'pending') return;
            const expired = expire(current, this.now());
            if (expired !== current && (await this.write(expired))) this.changed(expired);
          }),
        ),
      );
    } finally {
      this.sweeping = false;
    }
  }

  /** Forgets ended requests whose last change is older than the retention; returns how many went. */
  async purge(): Promise<number> {
    if (this.unusable() || !this.store.leads()) return 0;
    const purgeable = (r: ApprovalRecord, now: number) => r.status !== 'pending' && now - (r.consumedAt ?? r.decidedAt ?? r.createdAt) > this.options.retentionMs;
    const due = this.store.all().filter((r) => purgeable(r, this.now()));
    const removed = await Promise.all(
      due.map((r) =>
        this.exclusive(r.id, async () => {
          const current = this.store.get(r.id);
          if (!current || !purgeable(current, this.now())) return false;
          await this.store.delete(r.id);
          await this.ledger.purged(r.id);
          return true;
        }),
      ),
    );
    const count = removed.filter(Boolean).length;
    if (count > 0) log('info', 'purged ended requests past retention', { count });
    const keep = this.options.ledgerRetentionMs;
    if (keep !== undefined) await this.ledger.prune(this.now() - keep).catch((error: unknown) => this.ledgerFailed(error));
    return count;
  }

  /**
   * A reviewer's decision: validated against the schema restricted to what was included, made durable, then answered.
   * A rule saved with it (the extension's socket only) is checked and saved first, once the decision is known to hold.
   */
  /** `by`: the reviewer the deciding surface was paired for (a team's hub), recorded as the outcome's `decidedBy`. */
  decide(message: DecideParams, surface: Exclude<DecidedVia, 'rule'>, by?: DecidingReviewer): Promise<Answer<DecisionAnswer>> {
    if (this.unusable()) return Promise.resolve(this.unavailable());
    // Surfaces are fixed at creation, so this read needs no turn in the request's queue.
    const created = this.store.get(message.elicitationId);
    if (surface === 'app' && created && !(created.surfaces ?? ALL_SURFACES).includes('app')) {
      return Promise.resolve(fail('not_in_app', `${message.elicitationId} was created with surfaces ["extension"]: only the browser extension may decide it, not a review inside a chat`));
    }
    return this.exclusive(message.elicitationId, async (): Promise<Answer<DecisionAnswer>> => {
      const answer = await this.decideNow(message, surface, by);
      // Not recorded (the store failed under it): refused like every call of an engine that cannot write.
      return answer === UNRECORDED ? this.unavailable() : { ok: true, value: answer };
    });
  }

  private async decideNow(message: DecideParams, surface: Exclude<DecidedVia, 'rule'>, reviewer: DecidingReviewer | undefined): Promise<DecisionAnswer | typeof UNRECORDED> {
    const record = this.store.get(message.elicitationId);
    if (!record) return { ok: false, reason: 'not_found' };
    const by = reviewer?.name;
    // A routed request is decided only by a reviewer of its groups: not by another, nor by a surface that is nobody's.
    if (!reviewerMayDecide(record.route, reviewer?.groups ?? null) && effectiveStatus(record, this.now()) === 'pending') {
      const groups = record.route?.groups.join(', ') ?? '';
      return { ok: false, reason: 'invalid', status: 'pending', issues: [issue(['elicitationId'], 'not_your_group', `the team routes this request to ${groups}${reviewer ? `, and ${reviewer.name} is not in ${record.route?.groups.length === 1 ? 'it' : 'any of them'}` : ': decide it on a browser or phone paired for a reviewer of those groups'}`)] };
    }
    if (message.shownHash !== undefined && message.shownHash !== requestHashOf(record)) {
      return { ok: false, reason: 'shown_mismatch', status: effectiveStatus(record, this.now()), issues: [issue(['shownHash'], 'shown_mismatch', 'what was shown is not the stored request (a changed or stale view): show it again and decide on what is shown')] };
    }
    const core = decisionCore(record.request, message);
    if (!core.ok) return { ok: false, reason: 'invalid', status: effectiveStatus(record, this.now()), issues: core.issues };
    let outcome: Outcome = { ...core.core, decidedVia: surface, ...(by === undefined ? {} : { decidedBy: by }), idempotencyKey: message.idempotencyKey };
    let result = decide(record, outcome, this.now());
    if (!result.ok) return { ok: false, reason: result.reason, status: effectiveStatus(record, this.now()) };
    if (record.assurance === 'passkey' && !result.duplicate) {
      // The passkey signed a challenge derived from this request and exactly these values: recomputed here from what
      // the hub is about to record, so a value changed after the assertion no longer matches.
      if (message.passkey === undefined) {
        return { ok: false, reason: 'passkey_required', status: 'pending', issues: [issue(['passkey'], 'passkey_required', 'this request is decided only with one of your passkeys' + (surface === 'app' ? ': decide it in the browser extension' : ''))] };
      }
      const challenge = decisionChallenge({ hub: this.hubKeyId, requestId: record.id, requestHash: requestHashOf(record), decisionHash: decisionHash(core.core) });
      const verified = await this.passkeys.verify(message.passkey, challenge, ['passkey']);
      if (!verified.ok) {
        if (verified.code === 'unavailable') return UNRECORDED;
        return { ok: false, reason: verified.code === 'passkey_required' ? 'passkey_required' : verified.code === 'invalid' ? 'invalid' : 'passkey_invalid', status: 'pending', issues: verified.issues };
      }
      outcome = { ...outcome, passkey: verified.evidence };
      result = decide(record, outcome, this.now());
      if (!result.ok) return { ok: false, reason: result.reason, status: effectiveStatus(record, this.now()) };
    }
    const quorum = record.route?.quorum ?? 1;
    if (quorum > 1 && !result.duplicate && outcome.decision === 'approved') {
      if (message.rule) return { ok: false, reason: 'invalid', status: 'pending', issues: [issue(['rule'], 'quorum', `this request needs ${quorum} approvals: no rule may answer it for the others`)] };
      const counted = this.approve(record, by ?? '', message.idempotencyKey, decisionHash(core.core));
      if ('refused' in counted) return counted.refused;
      if (counted.approvals.length < quorum) {
        if (counted.approvals !== record.approvals && !(await this.write({ ...record, approvals: counted.approvals }))) return UNRECORDED;
        return { ok: true, status: 'pending' };
      }
      outcome = { ...outcome, approvedBy: counted.approvals.map((a) => a.by) };
      result = decide({ ...record, approvals: counted.approvals }, outcome, this.now());
      if (!result.ok) return { ok: false, reason: result.reason, status: effectiveStatus(record, this.now()) };
    }
    // A repeat reads the committed record (its rule was saved with the first one); only a first decision saves one.
    if (message.rule && !result.duplicate && this.passkeys.require().includes('rules')) {
      return { ok: false, reason: 'invalid', status: 'pending', issues: [issue(['rule'], 'passkey_required', 'saving a rule needs your passkey (your setting): decide without "Always", and make the rule in the Rules view')] };
    }
    if (message.rule && !result.duplicate) {
      if (surface !== 'extension') return { ok: false, reason: 'invalid', status: 'pending', issues: [issue(['rule'], 'forbidden', 'only the browser extension may save a rule')] };
      if (record.kind !== 'permission' && record.kind !== 'confirm') {
        return { ok: false, reason: 'invalid', status: 'pending', issues: [issue(['rule'], 'not_applicable', `rules answer permission requests and confirm questions, not a ${record.kind}`)] };
      }
      if (!ruleFitsDecision(message, message.rule, record.kind)) {
        return { ok: false, reason: 'invalid', status: 'pending', issues: [issue(['rule', 'effect'], 'mismatch', `"${message.rule.effect}" does not say what this decision says; an allow rule goes with an allow (yes), a deny rule with a deny (no)`)] };
      }
      const saved = await this.saveRule(message.rule, { from: record.id });
      if (!saved.ok) return saved.reason === 'unavailable' ? UNRECORDED : { ok: false, reason: 'invalid', status: 'pending', issues: saved.issues };
      result = decide(record, { ...outcome, ruleId: saved.rule.id }, this.now());
      if (!result.ok) return { ok: false, reason: result.reason, status: effectiveStatus(record, this.now()) };
    }
    if (!result.duplicate) {
      if (!(await this.write(result.state))) return UNRECORDED;
      this.changed(result.state);
    }
    return { ok: true, status: result.state.status };
  }

  /**
   * One reviewer's approval toward a quorum: counted once per person (an approval repeated answers as the first did),
   * and only for the values the first approver approved, so the decision is one thing several people agreed to.
   */
  private approve(record: ApprovalRecord, by: string, idempotencyKey: string, hash: string): { approvals: NonNullable<ApprovalRecord['approvals']> } | { refused: DecisionAnswer } {
    const approvals = record.approvals ?? [];
    if (approvals.some((a) => sameReviewer(a.by, by))) return { approvals };
    const first = approvals[0];
    if (first && first.decisionHash !== hash) {
      return { refused: { ok: false, reason: 'invalid', status: 'pending', issues: [issue(['values'], 'quorum_mismatch', `${first.by} approved other values: approve the same values, or reject`)] } };
    }
    return { approvals: [...approvals, { by, at: this.now(), idempotencyKey, decisionHash: hash }] };
  }

  /** Stops the timers, answers the waiters, lets every queued change finish, then closes the store. */
  close(): Promise<void> {
    this.closed ??= (async () => {
      this.closing = true;
      for (const timer of this.timers) clearInterval(timer);
      for (const id of [...this.waiters.keys()]) this.wake(id);
      while (this.inflight.size > 0) await Promise.all([...this.inflight]);
      await Promise.allSettled([...this.ledgering.values()]);
      await this.flushHits(true).catch(() => undefined);
      await this.store.close();
      await this.rules.close();
      await this.passkeys.close();
      await this.ledger.close();
    })();
    return this.closed;
  }

  private unusable(): boolean {
    return this.closing || this.store.failed !== undefined || this.rules.failed !== undefined || this.ledger.failed !== undefined || this.passkeys.failed !== undefined;
  }

  private unavailable() {
    const failed = this.store.failed ?? this.rules.failed ?? this.ledger.failed ?? this.passkeys.failed;
    const why = failed ? `its store failed (${failed.message})` : 'it is shutting down';
    return fail('unavailable', `the approval hub cannot take this now: ${why}; another process takes over. Call again in a moment.`);
  }

  private exclusive<T>(id: string, run: () => Promise<T>): Promise<T> {
    const before = this.tails.get(id) ?? Promise.resolve();
    const result = before.then(() => this.unlessStale(run));
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(id, tail);
    this.inflight.add(tail);
    void tail.then(() => {
      this.inflight.delete(tail);
      if (this.tails.get(id) === tail) this.tails.delete(id);
    });
    return result;
  }

  /**
   * Runs a change; when another hub changed the request first (`StaleRecord`), reads the newer version, tells this
   * hub's peers about it, and makes the change again from it: a decision that lost the race answers "already decided".
   */
  private async unlessStale<T>(run: () => Promise<T>): Promise<T> {
    for (let tries = 1; ; tries++) {
      try {
        return await run();
      } catch (error) {
        if (!(error instanceof StaleRecord) || tries >= STALE_RETRIES) throw error;
        if (error.id === RULES_KEY) {
          const rules = await this.rules.refresh();
          if (rules) this.rulesApplied(rules);
          continue;
        }
        const applied = await this.store.refresh(error.id);
        if (applied) this.applied(applied);
      }
    }
  }

  /** Another hub's rules, now in memory: this hub's ledger records them and its extensions get the new list. */
  private rulesApplied({ before, after }: { before: readonly Rule[]; after: readonly Rule[] }): void {
    this.ledger.recordRules(before, after).catch((error: unknown) => this.ledgerFailed(error));
    this.emit({ method: 'rules.changed', params: { rules: this.ruleList() } });
  }

  /** Another hub's change, now in memory: this hub's waiters, peers and ledger hear of it as of a change of its own. */
  private applied({ before, after }: AppliedChange<ApprovalRecord>): void {
    if (after === undefined) {
      if (before === undefined) return;
      this.pending.delete(before.id);
      this.ledger.purged(before.id).catch((error: unknown) => this.ledgerFailed(error));
      return;
    }
    this.ledgerChange(before, after);
    if (before === undefined) {
      if (after.status === 'pending') this.pending.add(after.id);
      this.emit({ method: 'request.created', params: { request: toView(after) } });
      if (after.status === 'pending') return;
    } else if (before.status === after.status) return;
    this.changed(after);
  }

  /**
   * True once the record is on disk in the journal; false when it refused it (the failure listeners step the hub down).
   * Its ledger events are appended right after, in the same order, and not waited for here: the journal is what
   * happened, and the ledger can never hold a change the journal does not. Only a receipt waits for them
   * (`result`); a crash before they are on disk leaves the ledger short, and the next open appends what it lacks.
   */
  private async write(record: ApprovalRecord): Promise<boolean> {
    const before = this.store.get(record.id);
    try {
      await this.store.put({ ...record, updatedAt: this.now() });
    } catch (error) {
      // Another hub changed it first: the change is made again from the newer version (`unlessStale`).
      if (error instanceof StaleRecord) throw error;
      log('error', 'could not record a change', { id: record.id, error: String(error) });
      return false;
    }
    this.ledgerChange(before, record);
    return true;
  }

  /** The change's ledger events, appended after the store holds it; a first decision's receipt is told once they are. */
  private ledgerChange(before: ApprovalRecord | undefined, record: ApprovalRecord): void {
    const ledgered = this.ledger.recordChange(before, record);
    this.ledgering.set(record.id, ledgered);
    const decidedNow = record.outcome !== undefined && before?.outcome === undefined;
    ledgered.then(
      async () => {
        if (this.ledgering.get(record.id) === ledgered) this.ledgering.delete(record.id);
        // The receipt exists once the decision's entry is on disk: the extensions keep it for the person's history.
        if (!decidedNow) return;
        // A receipt the team's database could not give now is still read by elicit_result; the hub goes on.
        const receipt = await this.ledger.receipt(record.id).catch((error: unknown) => {
          log('warn', 'could not read a decision\'s receipt to tell the reviewers', { id: record.id, error: String(error) });
          return null;
        });
        if (receipt) this.emit({ method: 'request.receipt', params: { elicitationId: record.id, receipt } });
      },
      (error: unknown) => this.ledgerFailed(error),
    );
  }

  /**
   * A reviewer showed a pending request to the person (an extension's or a phone's notice, the chat's `view`): the
   * ledger records it once per request and surface, with the hash the surface rendered.
   */
  recordShown(id: string, surface: Exclude<DecidedVia, 'rule'>, requestHash: string): void {
    const record = this.store.get(id);
    if (this.unusable() || !record || effectiveStatus(record, this.now()) !== 'pending') return;
    const key = `${surface} ${id}`;
    if (this.shown.has(key)) return;
    this.shown.add(key);
    this.ledger.recordShown(id, surface, requestHash).catch((error: unknown) => this.ledgerFailed(error));
  }

  /**
   * The keys of one role that may call the hub, as the hub read them (a pairing, `pair --remove`, `key revoke`, and at
   * start): the ledger records what appeared, went or was replaced. Never fails the caller; a ledger that cannot
   * append fails the engine, as for every other change.
   */
  recordKeys(role: KeyRole, keys: readonly KeyDescriptor[]): Promise<void> {
    if (this.unusable()) return Promise.resolve();
    return this.ledger.recordKeys(role, keys).catch((error: unknown) => this.ledgerFailed(error));
  }

  private ledgerFailed(error: unknown): void {
    const failure = error instanceof Error ? error : new Error(String(error));
    log('error', 'could not append to the ledger', { error: failure.message });
    this.failed(failure);
  }

  private changed(record: ApprovalRecord): void {
    if (record.status !== 'pending') {
      this.pending.delete(record.id);
      for (const surface of ['extension', 'phone', 'app']) this.shown.delete(`${surface} ${record.id}`);
    }
    this.wake(record.id);
    this.emit({
      method: 'request.removed',
      params: {
        elicitationId: record.id,
        status: record.status,
        ...(record.outcome?.decidedVia ? { decidedVia: record.outcome.decidedVia } : {}),
        ...(record.outcome?.decidedBy ? { decidedBy: record.outcome.decidedBy } : {}),
      },
    });
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

  private create(params: CreateParams, scope: Scope): Promise<Answer<EngineCreated>> {
    return this.exclusive(params.id, async () => {
      // A relay that lost its hub mid-call retries with the same id: answer the request that was already stored.
      const existing = this.store.get(params.id);
      if (existing) {
        if (scope !== null && existing.owner !== scope) return fail('invalid', `id: ${JSON.stringify(params.id)} is taken; make a new one`);
        return { ok: true, value: this.created(existing) };
      }
      // The one size cap of every kind, here where every create from every relay passes.
      const tooLarge = requestSizeIssues(params.request);
      if (tooLarge.length > 0) return fail('invalid', `refused (too_large): ${formatIssues(tooLarge)}`);
      const notText = notUnicodeIssue({ request: params.request, renderedTemplate: params.renderedTemplate });
      if (notText) return fail('invalid', `refused (unicode): ${formatIssues([notText])}`);
      if (params.assurance === 'passkey' && this.passkeys.credentials().length === 0) {
        return fail('invalid', 'assurance: the person has no passkey registered, so nothing could decide this request (refused: no_passkey); ask without assurance, or ask the person to add a passkey in the extension\'s Settings');
      }
      const max = this.options.maxPending ?? MAX_PENDING;
      const held = this.pending.size + this.reserved;
      if (held >= max) {
        return fail('limit', `this hub already holds ${held} pending requests, the most it keeps (${max}): wait for decisions, or withdraw some with elicit_cancel`);
      }
      this.reserved++;
      try {
        return await this.insert(params, scope);
      } finally {
        this.reserved--;
      }
    });
  }

  /** Writes a new request whose slot under the cap is reserved; on success it is pending before the slot is released. */
  private async insert(params: CreateParams, scope: Scope): Promise<Answer<EngineCreated>> {
    const now = this.now();
    const routing = this.options.routing?.() ?? { ok: true, policy: null };
    if (!routing.ok) return fail('unavailable', `the team's routing policy cannot be used (${routing.problem}): nothing is filed until it is fixed`);
    const { request } = params;
    const route = routeOf(routing.policy, {
      agent: request.kind === 'permission' ? request.host : params.requester.client,
      directory: request.kind === 'permission' ? request.cwd || null : null,
      kind: request.kind,
      tool: request.kind === 'permission' ? request.tool : null,
    });
    const pending: ApprovalRecord = {
      id: params.id,
      updatedAt: now,
      kind: params.request.kind,
      status: 'pending',
      createdAt: now,
      expiresAt: now + params.timeoutMs,
      requester: params.requester,
      request: params.request,
      renderedTemplate: params.renderedTemplate,
      ...(params.surfaces ? { surfaces: params.surfaces } : {}),
      ...(scope === null ? {} : { owner: scope }),
      ...(params.bound ? { bound: true as const } : {}),
      ...(route ? { route } : {}),
      // The person's setting as it is now, with passkeys to meet it: a later change does not move a request filed before.
      ...(needsPasskey(params.request.kind, params.assurance, this.passkeys.credentials().length > 0 ? this.passkeys.require() : []) ? { assurance: 'passkey' as const } : {}),
    };
    const byRule = this.decidedByRule(pending, now);
    const record = byRule?.record ?? pending;
    if (!(await this.write(record))) return this.unavailable();
    if (byRule) this.countHits(byRule.used, now);
    if (record.status === 'pending') this.pending.add(record.id);
    // A request a rule decided still goes to the extensions, decided: the person's history shows what the rule did.
    this.emit({ method: 'request.created', params: { request: toView(record) } });
    if (record.outcome?.decidedVia === 'rule') log('info', 'a rule decided a request at creation', { id: record.id, ruleId: record.outcome.ruleId, decision: record.outcome.decision });
    return { ok: true, value: this.created(record) };
  }

  /**
   * The request decided by the person's rules, or null when they must decide it. Only permission requests and confirm
   * questions have rules: allow is the yes, deny the no (a confirm's no is an answer, `confirmed: false`).
   */
  private decidedByRule(record: ApprovalRecord, now: number): { record: ApprovalRecord; used: Rule[] } | null {
    const { request } = record;
    if (request.kind !== 'permission' && request.kind !== 'confirm') return null;
    // A rule is no passkey: what needs the person's passkey is never answered in advance; nor is one person's rule a quorum.
    if (record.assurance === 'passkey' || (record.route?.quorum ?? 1) > 1) return null;
    const verdict = ruleVerdict(this.rules.all(), ruleSubject(request, record.requester.client), now, this.options.paths);
    if (!verdict) return null;
    const { rule } = verdict;
    const allow = rule.effect === 'allow';
    const base = { decidedVia: 'rule' as const, ruleId: rule.id, idempotencyKey: `rule:${rule.id}` };
    const outcome: Outcome =
      request.kind === 'confirm'
        ? { ...base, decision: 'approved', action: 'submit', values: { confirmed: allow } }
        : allow
          ? { ...base, decision: 'approved', action: 'submit', values: {} }
          : { ...base, decision: 'rejected', action: 'cancel', comment: `Denied by the rule: ${describeRule(rule, now)}`.slice(0, 4000) };
    return { record: { ...record, status: outcome.decision, decidedAt: now, outcome }, used: verdict.used };
  }

  /** Counts an answer by these rules; the counts reach the file and the extensions with the next flush. */
  private countHits(used: readonly Rule[], now: number): void {
    for (const rule of used) this.countHitsOf(rule.id, 1, now);
  }

  private countHitsOf(id: string, count: number, last: number): void {
    const seen = this.hits.get(id);
    this.hits.set(id, { count: (seen?.count ?? 0) + count, last: Math.max(seen?.last ?? 0, last) });
  }

  /** Writes the counts gathered since the last flush (at most once a second, and at close). */
  private async flushHits(force: boolean): Promise<void> {
    if (this.hits.size === 0 || (!force && this.now() - this.hitsFlushedAt < HIT_FLUSH_MS)) return;
    await this.exclusive(RULES_QUEUE, async () => {
      // Not `unusable()`: the counts are written at close too.
      if (this.hits.size === 0 || this.store.failed !== undefined || this.rules.failed !== undefined) return;
      const counted = new Map(this.hits);
      this.hits.clear();
      this.hitsFlushedAt = this.now();
      const all = this.rules.all();
      if (!all.some((r) => counted.has(r.id))) return;
      try {
        await this.writeRules(all.map((r) => {
          const hit = counted.get(r.id);
          return hit ? { ...r, hits: (r.hits ?? 0) + hit.count, lastHitAt: Math.max(r.lastHitAt ?? 0, hit.last) } : r;
        }));
      } catch (error) {
        // Another hub wrote the rules first: the counts wait for the retry, over its list.
        if (error instanceof StaleRecord) for (const [id, hit] of counted) this.countHitsOf(id, hit.count, hit.last);
        throw error;
      }
    });
  }

  private created(record: ApprovalRecord): EngineCreated {
    const base = { elicitationId: record.id, expiresAt: new Date(record.expiresAt).toISOString() };
    const { outcome } = record;
    // A retried create of a request a rule decided answers as the first one did.
    if (outcome?.decidedVia === 'rule' && outcome.ruleId !== undefined) {
      const ruleId = RuleSchema.shape.id.safeParse(outcome.ruleId);
      if (ruleId.success) return { ...base, status: outcome.decision, decidedVia: 'rule', ruleId: ruleId.data };
    }
    return { ...base, status: 'pending' };
  }

  private status(id: string, scope: Scope): Answer<{ status: Status; approvals?: QuorumStatus }> {
    const record = this.visible(id, scope);
    if (!record) return notFound(id);
    const needed = record.route?.quorum ?? 1;
    const by = (record.approvals ?? []).map((a) => a.by);
    return { ok: true, value: { status: effectiveStatus(record, this.now()), ...(needed > 1 ? { approvals: { given: by.length, needed, by } } : {}) } };
  }

  private async await(id: string, waitMs: number, scope: Scope, signal?: AbortSignal): Promise<Answer<{ status: Status; approvals?: QuorumStatus }>> {
    const record = this.visible(id, scope);
    if (!record) return notFound(id);
    if (effectiveStatus(record, this.now()) === 'pending' && !signal?.aborted) {
      await new Promise<void>((resolve) => {
        const set = this.waiters.get(id) ?? new Set<() => void>();
        this.waiters.set(id, set);
        const done = () => {
          clearTimeout(timer);
          set.delete(done);
          signal?.removeEventListener('abort', done);
          resolve();
        };
        const timer = setTimeout(done, Math.max(0, Math.min(waitMs, record.expiresAt - this.now() + (this.options.sweepEveryMs ?? 250))));
        set.add(done);
        signal?.addEventListener('abort', done, { once: true });
      });
      // A store that failed while this call waited (the wake-up of a closing engine) is not answered from memory.
      if (this.store.failed) return this.unavailable();
    }
    return this.status(id, scope);
  }

  private result(id: string, scope: Scope): Promise<Answer<ResultEnvelope>> {
    return this.exclusive(id, async () => {
      // On a shared database another hub may have decided it a moment ago, its notice still on the way: the row says.
      if (this.store.shared && this.store.get(id)?.status === 'pending') {
        const applied = await this.store.refresh(id);
        if (applied) this.applied(applied);
      }
      const record = this.visible(id, scope);
      if (!record) return notFound(id);
      const status = effectiveStatus(record, this.now());
      if (status === 'pending') return fail('pending', `${id} is still pending: nobody has decided yet. Call elicit_await to wait for the decision.`);
      if (status === 'expired') return fail('expired', `${id} expired before anyone decided; nothing was approved. Create a new request if it still matters.`);
      if (status === 'canceled') return fail('canceled', `${id} was withdrawn with elicit_cancel; there is no decision.`);
      if (!record.outcome) return fail('unavailable', `${id} is ${status} but its stored decision is missing`);
      if (record.status !== 'consumed') {
        const consumed = consume(record, this.now());
        if (!(await this.write(consumed))) return this.unavailable();
        this.changed(consumed);
      }
      // The asks keep their seed's shape; an approval, a proposal and a permission prompt come with their receipt, once
      // the ledger holds their decision.
      const ask = record.kind === 'confirm' || record.kind === 'form' || record.kind === 'selection';
      if (!ask) {
        try {
          await this.ledgering.get(id);
        } catch {
          return this.unavailable();
        }
      }
      let receipt: Receipt | null;
      try {
        receipt = ask ? null : await this.ledger.receipt(id);
      } catch {
        return this.unavailable();
      }
      return { ok: true, value: { ...resultEnvelope(record.request, record.outcome), ...(receipt ? { receipt } : {}) } };
    });
  }

  private cancel(id: string, scope: Scope): Promise<Answer<{ status: 'canceled' }>> {
    return this.exclusive(id, async () => {
      const record = this.visible(id, scope);
      if (!record) return notFound(id);
      const result = withdraw(record, this.now());
      if (!result.ok) {
        const messages = {
          already_decided: `${id} was already decided (${record.outcome?.decision ?? record.status}); read it with elicit_result.`,
          expired: `${id} already expired; there is nothing to withdraw.`,
          already_canceled: `${id} was already withdrawn.`,
        } as const;
        return fail(result.reason, messages[result.reason]);
      }
      if (!(await this.write(result.state))) return this.unavailable();
      this.changed(result.state);
      return { ok: true, value: { status: 'canceled' } };
    });
  }
}

function notFound(id: string): { ok: false; error: { code: 'not_found'; message: string } } {
  return { ok: false, error: { code: 'not_found', message: `no request ${JSON.stringify(id)}: check the elicitationId returned by elicit_approval or elicit_proposal` } };
}

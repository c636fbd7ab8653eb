import { createReadStream } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { Receipt } from '../../shared/receipt.js';
import type { Rule } from '../../shared/rules.js';
import type { ApprovalRecord } from '../approvals/approval-record.js';
import type { PasskeyChange } from '../passkeys/passkey-registry.js';
import { log } from '../log.js';
import type { StoreIo } from '../store/journal-store.js';
import { LedgerEntrySchema, keyIdOf, type KeyRole, type LedgerEntry, type LedgerEvent } from './ledger-format.js';
import { ledgerKey } from './ledger-key.js';
import { LEDGER_DIR, LedgerStore, SEGMENT_FILE, segmentName, type Placed } from './ledger-store.js';
import { changeEvents, requestEventTypes, requestEvents, ruleEvents } from './request-events.js';

export const RECEIPT_VERIFY = 'elicitly-companion audit verify --receipt <file with this receipt>';

interface DecisionLedgerOptions {
  dir: string;
  io?: StoreIo;
  now?: () => number;
  /** The journal's records and the rules as they are at open: what the ledger must hold. */
  records: readonly ApprovalRecord[];
  rules: readonly Rule[];
  checkpointEvery?: number;
  checkpointMs?: number;
  segmentEntries?: number;
}

/** What the engine asks of its ledger. */
export interface EngineLedger {
  readonly failed: Error | undefined;
  /** The signing key's id (bound into every passkey challenge); null without a ledger. */
  readonly keyId: string | null;
  recordChange(before: ApprovalRecord | undefined, after: ApprovalRecord): Promise<void>;
  recordRules(before: readonly Rule[], after: readonly Rule[]): Promise<void>;
  purged(id: string): Promise<void>;
  recordPasskey(change: PasskeyChange): Promise<void>;
  recordKeys(role: KeyRole, keys: readonly KeyDescriptor[]): Promise<void>;
  recordShown(id: string, surface: string, requestHash: string): Promise<void>;
  /** Removes whole sealed segments older than `before` (retention). */
  prune(before: number): Promise<void>;
  receipt(id: string): Promise<Receipt | null>;
  close(): Promise<void>;
}

/** No ledger: the bench's baseline, to measure what the ledger costs. Never in the product. */
export const NO_LEDGER: EngineLedger = {
  failed: undefined,
  keyId: null,
  recordChange: async () => undefined,
  recordRules: async () => undefined,
  purged: async () => undefined,
  recordPasskey: async () => undefined,
  recordKeys: async () => undefined,
  recordShown: async () => undefined,
  prune: async () => undefined,
  receipt: async () => null,
  close: async () => undefined,
};

/**
 * The events of a record written before requests were refused for text that is not Unicode (`shared/well-formed.ts`):
 * it has no canonical form, so no hash. Left out of the ledger, said in the log, rather than stopping the hub at open.
 */
export function hashable(id: string, events: () => LedgerEvent[]): LedgerEvent[] {
  try {
    return events();
  } catch (error) {
    log('error', 'ledger: a request that cannot be hashed (its text is not Unicode) is left out of the ledger', { id, error: String(error) });
    return [];
  }
}

/** A key as the ledger records it: never the key itself, and `fingerprint` (its SHA-256) only to tell a replaced one. */
export interface KeyDescriptor {
  keyId: string;
  fingerprint: string;
  origin?: string;
  name?: string;
  grants?: readonly string[];
}
export const describeKey = (k: Omit<KeyDescriptor, 'keyId'>): string => JSON.stringify([k.fingerprint, k.origin ?? null, k.name ?? null, k.grants ?? null]);

/** What the ledger says of one role's keys when `known` (key id → `describeKey`) is what it said so far and `keys` is how they are now. */
export function keyChanges(known: ReadonlyMap<string, string>, role: KeyRole, keys: readonly KeyDescriptor[]): LedgerEvent[] {
  const now = new Map(keys.map((k) => [k.keyId, describeKey(k)]));
  const events: LedgerEvent[] = [];
  for (const [keyId, was] of known) if (now.get(keyId) !== was) events.push({ type: 'key.removed', role, keyId });
  for (const k of keys) {
    if (known.get(k.keyId) === describeKey(k)) continue;
    events.push({ type: 'key.added', role, keyId: k.keyId, fingerprint: k.fingerprint, ...(k.origin ? { origin: k.origin } : {}), ...(k.name ? { name: k.name } : {}), ...(k.grants?.length ? { grants: [...k.grants] } : {}) });
  }
  return events;
}

type DecidedEvent = Extract<LedgerEvent, { type: 'request.decided' }>;
type Decided = Placed & { event: DecidedEvent };

/**
 * A decision's receipt: its entry, what it recorded, the newest checkpoint when it covers the entry (null until one
 * does), and for a file ledger where the line is.
 */
export function receiptOf(entry: LedgerEntry, event: DecidedEvent, checkpoint: Pick<LedgerEntry, 'index' | 'hash'> | null, hub: string, at?: Receipt['at']): Receipt {
  return {
    ledgerIndex: entry.index,
    ...(at ? { at } : {}),
    entryHash: entry.hash,
    requestHash: event.requestHash,
    decisionHash: event.decisionHash,
    decidedVia: event.decidedVia,
    ...(event.decidedBy !== undefined ? { decidedBy: event.decidedBy } : {}),
    decidedAt: event.decidedAt,
    checkpoint: checkpoint && checkpoint.index > entry.index ? { index: checkpoint.index, hash: checkpoint.hash } : null,
    ...(event.passkey ? { passkey: { ...event.passkey, requestId: event.id, hub } } : {}),
    verify: RECEIPT_VERIFY,
  };
}

/**
 * The engine's side of the ledger: every change to a request or to the rules appended while the journal writes it (the
 * two fsyncs at once: one after the other halved creates/s), and acknowledged only once both are on disk. At open the
 * two are reconciled (`catchUp`): the journal is what happened. It also remembers where each request's decision is,
 * for receipts.
 */
export class DecisionLedger implements EngineLedger {
  private readonly decided = new Map<string, Decided>();
  /** The keys the ledger says may call, by role: what a change of the state dir's key files is compared with. */
  private readonly keys = new Map<KeyRole, Map<string, string>>();

  private constructor(
    private readonly store: LedgerStore,
    /** The signing key's id: bound into every passkey challenge, so a receipt names it. */
    readonly keyId: string,
  ) {}

  static async open(options: DecisionLedgerOptions): Promise<DecisionLedger> {
    const key = ledgerKey(options.dir);
    const store = await LedgerStore.open({ dir: options.dir, key, io: options.io, now: options.now, checkpointEvery: options.checkpointEvery, checkpointMs: options.checkpointMs, segmentEntries: options.segmentEntries });
    const ledger = new DecisionLedger(store, keyIdOf(key.publicKey));
    try {
      await ledger.catchUp(options);
    } catch (error) {
      await store.close().catch(() => undefined);
      throw error;
    }
    return ledger;
  }

  get failed(): Error | undefined {
    return this.store.failure;
  }

  /**
   * What the ledger holds (read without checking: `audit verify` checks) against the journal and the rules file, both
   * ways: what they hold and the ledger lacks is appended (the journal was written, the ledger's write was cut), and an
   * event the journal does not hold (its write failed or was cut, so the change was never acknowledged) is marked
   * `request.unrecorded`.
   */
  private async catchUp(options: DecisionLedgerOptions): Promise<void> {
    const records = new Map(options.records.map((r) => [r.id, r]));
    const have = new Map<string, Set<string>>();
    const ruleHashes = new Map<string, string>();
    const dir = path.join(path.resolve(options.dir), LEDGER_DIR);
    const numbers = (await readdir(dir)).map((n) => SEGMENT_FILE.exec(n)).filter((m) => m !== null).map((m) => Number(m[1])).sort((a, b) => a - b);
    const entries: Placed[] = [];
    for (const n of numbers) {
      const lines = createInterface({ input: createReadStream(path.join(dir, segmentName(n)), { encoding: 'utf8' }), crlfDelay: Infinity });
      let offset = 0;
      for await (const line of lines) {
        const at = offset;
        offset += Buffer.byteLength(line, 'utf8') + 1;
        let raw: unknown;
        try {
          raw = JSON.parse(line);
        } catch {
          continue;
        }
        const parsed = LedgerEntrySchema.safeParse(raw);
        if (!parsed.success) continue;
        const { event } = parsed.data;
        // A showing is not a change of the request: the journal does not hold it, so it is not reconciled with it.
        if ('id' in event && event.type !== 'request.shown') {
          const types = have.get(event.id) ?? new Set<string>();
          if (event.type === 'request.unrecorded') types.delete(event.event);
          else if (event.type === 'request.purged') have.delete(event.id);
          else types.add(event.type);
          if (event.type !== 'request.purged') have.set(event.id, types);
          if (records.has(event.id)) entries.push({ entry: parsed.data, segment: n, offset: at });
        }
        if (event.type === 'key.added') this.keyMap(event.role).set(event.keyId, describeKey(event));
        if (event.type === 'key.removed') this.keyMap(event.role).delete(event.keyId);
        if (event.type === 'rule.saved') ruleHashes.set(event.ruleId, event.ruleHash);
        if (event.type === 'rule.removed') ruleHashes.delete(event.ruleId);
      }
    }
    const events: LedgerEvent[] = [];
    for (const [id, types] of have) {
      const record = records.get(id);
      const expected = new Set<string>(record ? requestEventTypes(record) : []);
      for (const type of types) if (!expected.has(type)) events.push({ type: 'request.unrecorded', id, event: type });
    }
    const unrecorded = new Set(events.map((e) => (e.type === 'request.unrecorded' ? `${e.id} ${e.event}` : '')));
    for (const record of options.records) {
      const types = have.get(record.id);
      const lacking = requestEventTypes(record).filter((type) => !types?.has(type));
      if (lacking.length > 0) events.push(...hashable(record.id, () => requestEvents(record, lacking)));
    }
    const ledgerRules = [...ruleHashes].map(([id, hash]) => ({ id, hash }));
    events.push(...ruleEvents([], options.rules).filter((e) => e.type !== 'rule.saved' || !ledgerRules.some((r) => r.id === e.ruleId && r.hash === e.ruleHash)));
    events.push(...ledgerRules.filter((r) => !options.rules.some((rule) => rule.id === r.id)).map((r): LedgerEvent => ({ type: 'rule.removed', ruleId: r.id })));
    // Decisions of this journal's records, unless voided.
    for (const placed of entries) if (!('id' in placed.entry.event) || !unrecorded.has(`${placed.entry.event.id} ${placed.entry.event.type}`)) this.remember(placed);
    if (events.length === 0) return;
    log('warn', 'ledger: the journal and the ledger disagreed after a crash or a failed write; the ledger now says what the journal holds', { events: events.length });
    for (const entry of await this.store.append(events)) this.remember(entry);
  }

  private remember(placed: Placed): void {
    const { event } = placed.entry;
    if (event.type === 'request.decided') this.decided.set(event.id, { ...placed, event });
  }

  /** Appends what changed between the stored record and the new one; resolves once it is on disk. */
  async recordChange(before: ApprovalRecord | undefined, after: ApprovalRecord): Promise<void> {
    const events = hashable(after.id, () => changeEvents(before, after));
    if (events.length === 0) return;
    for (const entry of await this.store.append(events)) this.remember(entry);
  }

  async recordRules(before: readonly Rule[], after: readonly Rule[]): Promise<void> {
    const events = ruleEvents(before, after);
    if (events.length > 0) await this.store.append(events);
  }

  /** A request purged from the journal: said in the ledger, and forgotten here. */
  async purged(id: string): Promise<void> {
    this.decided.delete(id);
    await this.store.append([{ type: 'request.purged', id }]);
  }

  private keyMap(role: KeyRole): Map<string, string> {
    let map = this.keys.get(role);
    if (!map) this.keys.set(role, (map = new Map()));
    return map;
  }

  /**
   * The keys of one role as the state dir holds them now: what appeared, went or was replaced since the ledger last said
   * is appended. Called by the hub whenever it reads them again, and as it starts.
   */
  async recordKeys(role: KeyRole, keys: readonly KeyDescriptor[]): Promise<void> {
    const events = keyChanges(this.keyMap(role), role, keys);
    if (events.length === 0) return;
    // Known at once, so a second read before this append is on disk does not say it again.
    this.keys.set(role, new Map(keys.map((k) => [k.keyId, describeKey(k)])));
    await this.store.append(events);
  }

  async prune(before: number): Promise<void> {
    await this.store.prune(before);
  }

  async recordShown(id: string, surface: string, requestHash: string): Promise<void> {
    await this.store.append([{ type: 'request.shown', id, surface, requestHash }]);
  }

  /** A change to the passkeys or their setting, on disk before the change is answered. */
  async recordPasskey(change: PasskeyChange): Promise<void> {
    await this.store.append([change]);
  }

  /** Where a request's decision is in the ledger, and the newest checkpoint that covers it; null before it is recorded. */
  async receipt(id: string): Promise<Receipt | null> {
    const found = this.decided.get(id);
    if (!found) return null;
    const { entry, event, segment, offset } = found;
    return receiptOf(entry, event, this.store.checkpoint, this.keyId, { segment, offset });
  }

  close(): Promise<void> {
    return this.store.close();
  }
}

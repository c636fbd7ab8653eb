// The requests' store as the engine sees it, whatever keeps it: the embedded journal (one person, one state dir) or a
// team's PostgreSQL database. Both hold every live record in memory and make a change visible only once it is durable;
// one contract suite runs against both (test/integration/record-store-contract.test.ts). Several hubs may share a
// database: then a write made from an outdated version is refused (`StaleRecord`) and the others' changes arrive here.
import type { StoredRecord } from './journal-store.js';
import { WriteFailure } from './write-failure.js';

export type { StoredRecord };

/** What an open found damaged and moved aside: how many entries, and where they went (a file, or a table). */
export interface StoreDamage {
  quarantined: number;
  quarantineFile: string;
}

export interface RecordStore<T extends StoredRecord> {
  get(id: string): T | undefined;
  all(): T[];
  size(): number;
  /** Resolves once the record is durable; only then does `get` return it. */
  put(record: T): Promise<void>;
  delete(id: string): Promise<void>;
  /** Waits for queued writes, then closes; later writes are refused. */
  close(): Promise<void>;
  /** What the last open moved aside as damaged, or null when everything read back. */
  readonly damage: StoreDamage | null;
  /** The failure that made the store refuse further writes, if any: its owner must step down and reopen it. */
  readonly failed: Error | undefined;
  /** Called once, on that failure. */
  onFailure(listener: (error: Error) => void): () => void;
  /**
   * True when other hubs write the same records (a team's database): a put may then be refused as `StaleRecord`, and
   * their changes arrive through `onRemoteChange`. False for the journal, which its one hub alone writes.
   */
  readonly shared: boolean;
  /**
   * Changes other hubs committed. The listener runs `apply()` in that request's turn (the engine's queue for its id),
   * so memory never changes under a change being made; `apply` answers null when memory already has that version.
   * With no listener the store applies them itself.
   */
  onRemoteChange(listener: (change: RemoteChange<T>) => void): () => void;
  /**
   * Reads one record again from where it is kept and applies it, in that request's turn: what a caller does after a
   * `StaleRecord`, before it makes its change again from the newer version.
   */
  refresh(id: string): Promise<AppliedChange<T> | null>;
  /** Whether this hub runs the timers (the expiry sweep, the purge, notifications): one hub of a database at a time. */
  leads(): boolean;
}

/** A record as this hub had it and as it is now (undefined: deleted). */
export interface AppliedChange<T> {
  before: T | undefined;
  after: T | undefined;
}

export interface RemoteChange<T> {
  id: string;
  apply(): AppliedChange<T> | null;
}

/**
 * A put or delete made from a version of the record another hub has changed since: nothing was written. The caller
 * refreshes the record and makes its change again from what is there now (a decision that lost the race then reads
 * "already decided").
 */
export class StaleRecord extends Error {
  constructor(readonly id: string) {
    super(`${id} was changed by another hub since it was read`);
    this.name = 'StaleRecord';
  }
}

/** Opens the requests' store, with the caller's validator for each stored record (a record that fails it is damage). */
export type OpenRecordStore<T extends StoredRecord> = (parse: (raw: unknown) => StoredRecord | undefined) => Promise<RecordStore<T>>;

/**
 * A record as a store writes it: its JSON text, and the copy memory keeps (what a reopen reads back, whatever the
 * caller does with its object afterwards); or why it cannot be written.
 */
export function recordToWrite<T extends StoredRecord>(record: T, store: string): { text: string; copy: T } | Error {
  if (typeof record.id !== 'string' || record.id === '' || typeof record.updatedAt !== 'number') {
    return new TypeError(`${store}: a record needs a non-empty string id and a numeric updatedAt`);
  }
  try {
    const text = JSON.stringify(record);
    return { text, copy: JSON.parse(text) as T };
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}

/**
 * What both stores keep the same way: every live record in memory (changed only once a change is durable), what the
 * open moved aside, and the first write failure, after which the store refuses every write and its owner steps down.
 */
export abstract class MemoryRecords<T extends StoredRecord> implements Pick<RecordStore<T>, 'get' | 'all' | 'size' | 'damage' | 'failed' | 'onFailure' | 'shared' | 'onRemoteChange' | 'refresh' | 'leads'> {
  protected readonly records = new Map<string, T>();
  protected readonly writeFailure = new WriteFailure();
  protected damageFound: StoreDamage | null = null;

  get(id: string): T | undefined {
    return this.records.get(id);
  }

  all(): T[] {
    return [...this.records.values()];
  }

  size(): number {
    return this.records.size;
  }

  get damage(): StoreDamage | null {
    return this.damageFound;
  }

  get failed(): Error | undefined {
    return this.writeFailure.failed;
  }

  onFailure(listener: (error: Error) => void): () => void {
    return this.writeFailure.onFailure(listener);
  }

  /** One hub's own store (the journal): nobody else writes it, so nothing is stale and this hub leads. */
  get shared(): boolean {
    return false;
  }

  onRemoteChange(_listener: (change: RemoteChange<T>) => void): () => void {
    return () => undefined;
  }

  refresh(_id: string): Promise<AppliedChange<T> | null> {
    return Promise.resolve(null);
  }

  leads(): boolean {
    return true;
  }
}

// The requests' store as the engine sees it, whatever keeps it: the embedded journal (one person, one state dir) or a
// team's PostgreSQL database. Both hold every live record in memory and make a change visible only once it is durable;
// one contract suite runs against both (test/integration/record-store-contract.test.ts).
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
export abstract class MemoryRecords<T extends StoredRecord> implements Pick<RecordStore<T>, 'get' | 'all' | 'size' | 'damage' | 'failed' | 'onFailure'> {
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
}

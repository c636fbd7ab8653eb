import { Dexie } from 'dexie';
import type { ElicitlyDb } from './database.js';

// The requests table's key ranges and the one read both the worker's repo and the pages' reads make, without zod: the
// pages check what they read with a chunk of their own (ui/page-reads.ts).

/**
 * Compound-key bounds are written as "the prefix alone" to "the prefix then maxKey": a shorter array sorts before every
 * longer one it prefixes, and Dexie's maxKey (an array) after any number or string. Using maxKey twice in one key would
 * be invalid: IndexedDB refuses a key that contains the same array object twice.
 */
export function prefixRange(prefix: unknown[]): [unknown[], unknown[]] {
  return [prefix, [...prefix, Dexie.maxKey]];
}
export const PENDING = prefixRange(['pending']);

/** The pending rows newest first, as stored: not checked yet (`unknown`), so no caller can skip the check. */
export function uncheckedPending(db: ElicitlyDb): Promise<unknown[]> {
  return db.requests.where('[status+createdAt+elicitationId]').between(...PENDING).reverse().toArray();
}

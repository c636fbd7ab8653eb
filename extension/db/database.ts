import { Dexie, type DexieOptions, type EntityTable } from 'dexie';
import { searchWords } from '../../shared/search-words.js';
import type { ConnectionState, OutboxRow, RequestRow, Settings } from './rows.js';

const DB_NAME = 'elicitly';

interface Keyed<T> { key: 'current'; value: T }

/**
 * The extension's store, shared by the service worker (the only writer of requests) and the pages (readers through
 * liveQuery, which sees the worker's writes). History is paged by keyset on compound indexes that end in the primary
 * key, so ties on createdAt never skip or repeat a row.
 */
export class ElicitlyDb extends Dexie {
  requests!: EntityTable<RequestRow, 'elicitationId'>;
  outbox!: EntityTable<OutboxRow, 'idempotencyKey'>;
  settings!: Dexie.Table<Keyed<Settings>, 'current'>;
  connection!: Dexie.Table<Keyed<ConnectionState>, 'current'>;

  constructor(options?: DexieOptions) {
    super(DB_NAME, options);
    // v1 shipped without message search.
    this.version(1).stores({
      requests: 'elicitationId, [createdAt+elicitationId], [status+createdAt+elicitationId], [kind+createdAt+elicitationId], [kind+status+createdAt+elicitationId], expiresAt',
      outbox: 'idempotencyKey, elicitationId, queuedAt',
      settings: 'key',
      connection: 'key',
    });
    // v2: a multi-entry word index for search, back-filled from each stored message.
    this.version(2)
      .stores({
        requests: 'elicitationId, [createdAt+elicitationId], [status+createdAt+elicitationId], [kind+createdAt+elicitationId], [kind+status+createdAt+elicitationId], expiresAt, *words',
      })
      .upgrade((tx) => tx.table<RequestRow, string>('requests').toCollection().modify((row) => {
        row.words = searchWords(typeof row.message === 'string' ? row.message : '');
      }));
    // v3: no `expiresAt` index; nothing queried it (deadlines are checked on the pending rows, a small set). The
    // outbox keeps `elicitationId` (one decision per request is looked up by it) and `queuedAt` (replay order).
    this.version(3).stores({
      requests: 'elicitationId, [createdAt+elicitationId], [status+createdAt+elicitationId], [kind+createdAt+elicitationId], [kind+status+createdAt+elicitationId], *words',
    });
  }
}

export function openDb(options?: DexieOptions): ElicitlyDb {
  return new ElicitlyDb(options);
}

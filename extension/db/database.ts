import { Dexie, type DBCore, type DBCoreMutateRequest, type DexieOptions, type EntityTable } from 'dexie';
// zod/mini: every page opens the database before it has loaded zod's classic API (ui/page-reads.ts).
import * as z from 'zod/mini';
import type { Rule } from '../../shared/rules.js';
import { STATUSES } from '../../shared/statuses.js';
import { searchWords } from '../../kit/core/search-words.js';
import type { ConnectionState, OutboxRow, RequestRow } from '../../kit/rows/rows.js';
import type { Settings } from '../../kit/rows/settings-schema.js';
import { VERDICTS, deriveVerdict, type Verdict } from '../../kit/rows/verdict.js';

const DB_NAME = 'elicitly';

interface Keyed<T> { key: 'current'; value: T }

/**
 * The history's filters, each a compound index that ends in the primary key so its pages are keyset ranges: one index
 * per combination of kind, verdict and agent, in that order (`historyIndex` in requests-repo.ts picks one).
 */
const HISTORY_INDEXES = [
  '[createdAt+elicitationId]',
  '[kind+createdAt+elicitationId]',
  '[verdict+createdAt+elicitationId]',
  '[agent+createdAt+elicitationId]',
  '[kind+verdict+createdAt+elicitationId]',
  '[kind+agent+createdAt+elicitationId]',
  '[verdict+agent+createdAt+elicitationId]',
  '[kind+verdict+agent+createdAt+elicitationId]',
].join(', ');

/** What the verdict is derived from; anything else in the row is left alone, and a row without a status is not touched. */
const VerdictFieldsSchema = z.object({
  status: z.enum(STATUSES),
  outcome: z.optional(z.object({ decision: z.enum(['approved', 'rejected']) })),
  delivery: z.optional(z.enum(['queued', 'delivered', 'refused'])),
  verdict: z.catch(z.optional(z.enum(VERDICTS)), undefined),
});

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A stored row's verdict as of now; the verdict it carries is what was known before this write. */
function verdictOf(value: unknown): Verdict | undefined {
  const fields = VerdictFieldsSchema.safeParse(value);
  return fields.success ? deriveVerdict(fields.data, fields.data.verdict) : undefined;
}

function withVerdict(value: unknown): unknown {
  const verdict = verdictOf(value);
  return verdict === undefined || !isRecord(value) || value.verdict === verdict ? value : { ...value, verdict };
}

/**
 * Every write of a request row passes here, whoever makes it (the outbox's settle, a sweep, a welcome): the verdict
 * index can never disagree with the row's status. A `put` carries the whole row, and Dexie's `update` is a read,
 * a change and a `put` of the whole row too, so the verdict stored before the change travels with it.
 */
function verdictMiddleware(down: DBCore): DBCore {
  return {
    ...down,
    table(name) {
      const table = down.table(name);
      if (name !== 'requests') return table;
      return {
        ...table,
        mutate(req: DBCoreMutateRequest) {
          if (req.type !== 'add' && req.type !== 'put') return table.mutate(req);
          return table.mutate({ ...req, values: req.values.map(withVerdict) });
        },
      };
    },
  };
}

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
  /** The person's rules as the hub last listed them (`rules-repo.ts`); the background is their one writer. */
  rules!: EntityTable<Rule, 'id'>;

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
    // v4: the history filters by what was decided (the verdict, back-filled here) and by agent instead of by status;
    // `[status+…]` stays for the inbox's pending rows, `[kind+status+…]` served only the old status filter.
    this.version(4)
      .stores({ requests: `elicitationId, ${HISTORY_INDEXES}, [status+createdAt+elicitationId], *words` })
      .upgrade((tx) => tx.table<RequestRow, string>('requests').toCollection().modify((row) => {
        const verdict = verdictOf(row);
        if (verdict !== undefined) row.verdict = verdict;
      }));
    // v5: the person's rules, mirrored from the hub (welcome.rules and every `rules` frame); nothing else changes.
    this.version(5).stores({ rules: 'id' });
    this.use({ stack: 'dbcore', name: 'RequestVerdict', create: verdictMiddleware });
  }
}

export function openDb(options?: DexieOptions): ElicitlyDb {
  return new ElicitlyDb(options);
}

// What the stores of a team's PostgreSQL database share (pg-record-store.ts for the requests, pg-rules-store.ts for
// the person's rules, pg-directory.ts for the keys and the reviewers): the versioned schema and its migration under an advisory lock, the lock keys, a session, and
// the helpers that bound every wait and keep the password out of every message.
import postgres from 'postgres';

/** The advisory lock keys (one namespace): migrations, and the hub that runs the timers. */
export const LOCK_NAMESPACE = 0x454c4943; // "ELIC"
const MIGRATION_LOCK = 1;
export const LEADER_LOCK = 3;

/**
 * The schema, one step per version, applied in order at open under the migration lock, each step in the same
 * transaction as the version it brings. `body` is a record's (the rule list's, a directory document's) JSON text
 * exactly as written (as the journal keeps its lines): jsonb would reorder keys, and refuse a `\u0000` that JSON
 * allows. `rev` counts a row's writes: a hub writes a row only over the version it read.
 */
export const MIGRATIONS: readonly string[] = [
  `create table elicitly_requests (id text primary key, updated_at bigint not null, body text not null);
   create table elicitly_requests_quarantine (id bigserial primary key, moved_at timestamptz not null default now(), reason text not null, body text not null)`,
  `alter table elicitly_requests add column rev bigint not null default 1`,
  `create table elicitly_rules (id smallint primary key check (id = 1), rev bigint not null, body text not null);
   create table elicitly_rules_quarantine (id bigserial primary key, moved_at timestamptz not null default now(), reason text not null, body text not null)`,
  `create table elicitly_directory (name text primary key, rev bigint not null, body text not null)`,
  `create table elicitly_passkeys (id smallint primary key check (id = 1), rev bigint not null, body text not null);
   create table elicitly_passkeys_quarantine (id bigserial primary key, moved_at timestamptz not null default now(), reason text not null, body text not null)`,
];

/** One session (one connection) to the database. */
export function session(url: string): postgres.Sql {
  return postgres(url, { max: 1, idle_timeout: 0, connect_timeout: 10, onnotice: () => undefined, prepare: true });
}

export const toError = (error: unknown) => (error instanceof Error ? error : new Error(String(error)));

/** Rejects with `what` after `ms` unless `promise` settles first. */
export async function within<V>(promise: Promise<V>, ms: number, what: string): Promise<V> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(what)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** The database's address without its password, for a log line or a refusal. */
export function describeDatabase(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.username ? `${u.username}@` : ''}${u.host}${u.pathname}`;
  } catch {
    return 'the database';
  }
}

/** Applies the missing steps of MIGRATIONS under the migration lock (every hub of a database may open at once). */
export async function migrate(conn: postgres.Sql): Promise<void> {
  await conn.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${LOCK_NAMESPACE}, ${MIGRATION_LOCK})`;
    await tx`create table if not exists elicitly_schema (version integer not null)`;
    const [row] = await tx<{ version: number }[]>`select version from elicitly_schema`;
    const from = row?.version ?? 0;
    if (from > MIGRATIONS.length) throw new Error(`the database's schema is version ${from}, newer than this hub knows (${MIGRATIONS.length}): update elicitly-companion`);
    for (let version = from; version < MIGRATIONS.length; version++) await tx.unsafe(MIGRATIONS[version] ?? '');
    if (row === undefined) await tx`insert into elicitly_schema (version) values (${MIGRATIONS.length})`;
    else if (from < MIGRATIONS.length) await tx`update elicitly_schema set version = ${MIGRATIONS.length}`;
  });
}

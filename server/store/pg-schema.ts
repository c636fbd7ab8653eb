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
  // The team's ledger: one chain for every hub. \`line\` is the entry exactly as \`ledger-format.ts\` writes a file's line
  // (what \`audit verify\` checks); the head row is the chain's end, locked by each append, so entries are chained in
  // the order their transactions take it. Appended only by \`elicitly_ledger_append\`, inside the transaction of the
  // change it records (a request's, the rules', the passkeys'): a change and its entries commit together or not at all.
  `create table elicitly_ledger (idx bigint primary key, at bigint not null, type text not null, request_id text, line text not null);
   create index elicitly_ledger_decided on elicitly_ledger (request_id) where type = 'request.decided';
   create index elicitly_ledger_keys on elicitly_ledger (idx) where type in ('key.added', 'key.removed');
   create table elicitly_ledger_head (id smallint primary key check (id = 1), idx bigint not null, hash text not null, checkpoint_idx bigint, checkpoint_hash text, checkpoint_at bigint);
   insert into elicitly_ledger_head (id, idx, hash) values (1, 0, repeat('0', 64));
   create function elicitly_ledger_append(p_at bigint, p_types text[], p_ids text[], p_bodies text[]) returns json language plpgsql as $fn$
   declare
     n int := coalesce(array_length(p_bodies, 1), 0);
     v_idx bigint;
     v_prev text;
     o_idx bigint[] := '{}';
     o_hash text[] := '{}';
     o_line text[] := '{}';
   begin
     if n = 0 then return '[]'::json; end if;
     select idx, hash into v_idx, v_prev from elicitly_ledger_head where id = 1 for update;
     for i in 1..n loop
       o_idx[i] := v_idx;
       o_hash[i] := encode(sha256(convert_to('{"at":' || p_at || ',"event":' || p_bodies[i] || ',"index":' || v_idx || ',"prev":"' || v_prev || '"}', 'UTF8')), 'hex');
       o_line[i] := '{"at":' || p_at || ',"event":' || p_bodies[i] || ',"hash":"' || o_hash[i] || '","index":' || v_idx || ',"prev":"' || v_prev || '"}';
       v_prev := o_hash[i];
       v_idx := v_idx + 1;
     end loop;
     insert into elicitly_ledger (idx, at, type, request_id, line) select t.idx, p_at, t.type, t.id, t.line from unnest(o_idx, p_types, p_ids, o_line) as t(idx, type, id, line);
     update elicitly_ledger_head set idx = v_idx, hash = v_prev where id = 1;
     return (select json_agg(json_build_array(t.idx, t.hash) order by t.n) from unnest(o_idx, o_hash) with ordinality as t(idx, hash, n));
   end $fn$`,
];

/**
 * What a change appends to the team's ledger, made by its caller (\`ledger/pg-ledger.ts\`) for the store to append in
 * the change's own transaction: the event's type, the request it is about (null: none), and its canonical JSON.
 */
export interface LedgerRow {
  type: string;
  id: string | null;
  body: string;
}

/** Appends `rows` to the team's ledger within `sql`'s transaction (or as its own statement), stamped `at`. */
export async function appendLedger(sql: postgres.Sql | postgres.TransactionSql, at: number, rows: readonly LedgerRow[]): Promise<void> {
  await sql`select elicitly_ledger_append(${at}::bigint, ${rows.map((r) => r.type)}::text[], ${rows.map((r) => r.id)}::text[], ${rows.map((r) => r.body)}::text[])`;
}

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

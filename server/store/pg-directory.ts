// The directory (`directory.ts`) of a team's hubs, in their PostgreSQL database: a row per document, shared by every
// hub and by the commands (`pair`, `reviewer`, `key`, `remote pair`, `routing`) run with the database's URL. A browser paired
// through one hub proves its key on every hub; a key revoked or a reviewer removed anywhere is refused everywhere, and
// each hub cuts the sockets it holds for them once the notice arrives.
//
// Each process holds every row in memory (a few documents of a few kilobytes), read at open and kept by NOTIFY, so a
// handshake reads no row. A change is made over the row locked in the transaction that writes it and NOTIFYs the
// others, so two hubs pairing at once both keep their keys, and a pairing code is spent by exactly one of them. The
// directory changes a few times a day: a lock per change costs nothing, where the requests' thousands a second do
// without one (pg-record-store.ts).
import { randomBytes } from 'node:crypto';
import type postgres from 'postgres';
import { z } from 'zod';
import type { PushSubscription } from '../../shared/push-notice.js';
import type { Reviewer } from '../../shared/reviewers.js';
import { RoutingPolicySchema, readRoutingPolicy, type RoutingPolicy, type RoutingRead } from '../../shared/routing.js';
import type { Grant } from '../../shared/wire-fields.js';
import {
  DEVICES, DOC_NAMES, DirectoryReads, EXTENSIONS, LEDGER_KEY, PAIRINGS, PUSH_KEYS, RELAY_KEYS, REVIEWERS, ROUTING, edits, theirs,
  type Directory, type Doc, type Edit, type PairedDevice, type PairedExtension, type Pairing, type PairingPurpose, type RelayKey,
} from '../directory.js';
import { log } from '../log.js';
import type { VapidKeys } from '../remote/web-push.js';
import { ledgerKeyOf } from '../ledger/ledger-key.js';
import type { LedgerKey } from '../ledger/ledger-store.js';
import { describeDatabase, migrate, session, toError, within } from './pg-schema.js';

const CHANNEL = 'elicitly_directory';
const NoticeSchema = z.strictObject({ from: z.string(), name: z.string(), rev: z.number().int() });

interface Row { name: string; rev: string | number; body: string }

/** A document's value from its text: the empty one for a row never written (''), undefined for a damaged text. */
function valueOf<D>(doc: Doc<D>, body: string): D | undefined {
  if (body === '') return doc.empty;
  let raw: unknown;
  try {
    raw = JSON.parse(body);
  } catch {
    return undefined;
  }
  const parsed = doc.schema.safeParse(raw);
  return parsed.success ? parsed.data : undefined;
}

/** A document as this process holds it: its version, its text, and its value once read (per schema). */
interface Held { rev: number; body: string; value?: unknown; damagedSaid?: boolean }

export interface PgDirectoryOptions {
  url: string;
  /** A change not committed by then fails (a paused database): nothing is answered as done. Default 5 s. */
  commitTimeoutMs?: number;
}

export class PgDirectory extends DirectoryReads implements Directory {
  /** Tells this process's notices from the others'. */
  private readonly from = randomBytes(8).toString('hex');
  private readonly held = new Map<string, Held>();
  private readonly listeners = new Set<(name: string | null) => void>();
  /** Wrong pairing guesses being written, per purpose: they count against the code already (`DirectoryReads.pairing`). */
  private readonly guessing = new Map<PairingPurpose, number>();
  private unlisten: (() => Promise<void>) | undefined;
  private listens = 0;
  private closed = false;

  private constructor(
    private readonly sql: postgres.Sql,
    private readonly options: PgDirectoryOptions,
    readonly where: string,
  ) {
    super();
  }

  static async open(options: PgDirectoryOptions): Promise<PgDirectory> {
    const where = describeDatabase(options.url);
    const sql = session(options.url);
    let directory: PgDirectory | undefined;
    try {
      return await within((async () => {
        await migrate(sql);
        directory = new PgDirectory(sql, options, where);
        const current = directory;
        // Listening before reading: a change committed in between is both read and heard, never neither.
        const listening = await sql.listen(CHANNEL, (payload) => current.notified(payload), () => current.listened());
        current.unlisten = listening.unlisten;
        await current.catchUp();
        return current;
      })(), 10_000, `${where} did not answer within 10000 ms`);
    } catch (error) {
      if (directory) directory.closed = true;
      await sql.end({ timeout: 1 }).catch(() => undefined);
      throw error;
    }
  }

  protected read<D>(doc: Doc<D>): D {
    const held = this.held.get(doc.name);
    if (!held) return doc.empty;
    if (held.value === undefined) {
      const value = valueOf(doc, held.body);
      held.value = value ?? doc.empty;
      if (value === undefined && doc.damaged !== undefined && !held.damagedSaid) {
        held.damagedSaid = true;
        log('error', `the directory's ${doc.name} in the database is damaged; ${doc.damaged}`, { database: this.where, rev: held.rev });
      }
    }
    return held.value as D;
  }

  protected override failuresInFlight(purpose: PairingPurpose): number {
    return this.guessing.get(purpose) ?? 0;
  }

  /**
   * One change to one document, made over the row as it is in the database, locked for the transaction that writes
   * it and NOTIFYs the others: changes made at once by several processes land one after the other, none lost. Memory
   * changes only once the change is committed.
   */
  private async edit<D, T>(doc: Doc<D>, edit: Edit<D, T>): Promise<T> {
    if (this.closed) throw new Error('the directory is closed');
    const ms = this.options.commitTimeoutMs ?? 5000;
    let done: { result: T; row?: Row };
    try {
      done = await within(this.sql.begin(async (tx) => {
        // A document never written is a row of version 0 and no text, so there is always a row to lock.
        await tx`insert into elicitly_directory (name, rev, body) values (${doc.name}, 0, '') on conflict (name) do nothing`;
        const [row] = await tx<Row[]>`select name, rev, body from elicitly_directory where name = ${doc.name} for update`;
        const { next, result } = edit((row && valueOf(doc, row.body)) ?? doc.empty);
        if (next === undefined) return { result };
        const body = JSON.stringify(doc.schema.parse(next));
        const [written] = await tx<{ rev: string | number }[]>`update elicitly_directory set body = ${body}, rev = rev + 1 where name = ${doc.name} returning rev`;
        const rev = Number(written?.rev);
        await tx`select pg_notify(${CHANNEL}, ${JSON.stringify({ from: this.from, name: doc.name, rev })})`;
        return { result, row: { name: doc.name, rev, body } };
      }), ms, `${this.where} did not commit within ${ms} ms`);
    } catch (error) {
      const failure = toError(error);
      log('error', 'could not change the directory in the database', { database: this.where, document: doc.name, error: failure.message });
      throw failure;
    }
    if (done.row) this.keep(done.row);
    return done.result;
  }

  /** Holds a row when it is newer than the one held, and tells the watchers. */
  private keep(row: Row): void {
    const rev = Number(row.rev);
    const held = this.held.get(row.name);
    if (held && held.rev >= rev) return;
    this.held.set(row.name, { rev, body: row.body });
    for (const listener of this.listeners) listener(row.name);
  }

  private async reread(name: string): Promise<void> {
    const ms = this.options.commitTimeoutMs ?? 5000;
    const [row] = await within(this.sql<Row[]>`select name, rev, body from elicitly_directory where name = ${name}`, ms, `${this.where} did not answer within ${ms} ms`);
    if (row) this.keep(row);
  }

  async catchUp(): Promise<void> {
    const ms = this.options.commitTimeoutMs ?? 5000;
    const rows = await within(this.sql<Row[]>`select name, rev, body from elicitly_directory`, ms, `${this.where} did not answer within ${ms} ms`);
    for (const row of rows) this.keep(row);
  }

  private notified(payload: string): void {
    let raw: unknown;
    try {
      raw = JSON.parse(payload);
    } catch {
      return;
    }
    const notice = NoticeSchema.safeParse(raw);
    if (!notice.success || notice.data.from === this.from || !DOC_NAMES.has(notice.data.name)) return;
    if ((this.held.get(notice.data.name)?.rev ?? 0) >= notice.data.rev) return;
    this.reread(notice.data.name).catch((error: unknown) => log('warn', 'could not read a directory change another hub made; read at the next change or reconnect', { database: this.where, error: String(error) }));
  }

  /** Listening again after the listener's connection dropped: every row is read again, whatever changed meanwhile. */
  private listened(): void {
    if (this.listens++ === 0) return;
    this.catchUp().catch((error: unknown) => log('warn', 'could not read the directory again after reconnecting', { database: this.where, error: String(error) }));
  }

  watch(listener: (name: string | null) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  stamp(name: string): string {
    return `r${this.held.get(name)?.rev ?? 0}`;
  }

  routing(): RoutingRead {
    const held = this.held.get(ROUTING);
    if (!held || held.body === '') return { ok: true, policy: null };
    let raw: unknown = null;
    try {
      raw = JSON.parse(held.body);
    } catch {
      // Not JSON: said as such below.
    }
    const read = readRoutingPolicy(raw);
    return read.ok ? read : { ok: false, problem: `the routing policy in ${this.where}: ${read.problem}` };
  }

  routingReader(): () => RoutingRead {
    let said = -1;
    return () => {
      const read = this.routing();
      const rev = this.held.get(ROUTING)?.rev ?? 0;
      if (!read.ok && said !== rev) {
        said = rev;
        log('error', 'the team\'s routing policy does not parse: no request is filed until it is fixed', { problem: read.problem });
      }
      return read;
    };
  }

  setRouting(policy: RoutingPolicy): Promise<void> {
    return this.edit({ name: ROUTING, schema: RoutingPolicySchema, empty: null }, () => ({ next: policy, result: undefined }));
  }

  pairedDevicesReader(): () => PairedDevice[] {
    return () => this.pairedDevices();
  }

  createPairing(purpose: PairingPurpose, now = Date.now(), reviewer?: string): Promise<Pairing> {
    return this.edit(PAIRINGS, edits.createPairing(purpose, now, reviewer));
  }

  async recordPairingFailure(purpose: PairingPurpose, now = Date.now()): Promise<number> {
    this.guessing.set(purpose, (this.guessing.get(purpose) ?? 0) + 1);
    try {
      const left = await this.edit(PAIRINGS, edits.recordPairingFailure(purpose, now));
      if (left === 0) log('warn', 'a pairing code was burnt after too many wrong attempts', { purpose });
      return left;
    } finally {
      this.guessing.set(purpose, (this.guessing.get(purpose) ?? 1) - 1);
    }
  }

  clearPairing(purpose: PairingPurpose, code?: string): Promise<boolean> {
    return this.edit(PAIRINGS, edits.clearPairing(purpose, code, Date.now()));
  }

  addPairedExtension(origin: string, now = Date.now(), reviewer?: string): Promise<PairedExtension> {
    return this.edit(EXTENSIONS, edits.addExtension(origin, now, reviewer));
  }

  removePairedExtensions(origin: string): Promise<number> {
    return this.edit(EXTENSIONS, edits.dropExtensions((e) => e.origin === origin));
  }

  addPairedDevice(name: string, origin: string, now = Date.now(), reviewer?: string): Promise<PairedDevice> {
    return this.edit(DEVICES, edits.addDevice(name, origin, now, reviewer));
  }

  async removePairedDevice(keyId: string): Promise<boolean> {
    return (await this.edit(DEVICES, edits.dropDevices((d) => d.keyId === keyId))) > 0;
  }

  setDevicePush(keyId: string, subscription: PushSubscription | null, options: { onlyEndpoint?: string; now?: number } = {}): Promise<boolean> {
    return this.edit(DEVICES, edits.setDevicePush(keyId, subscription, options));
  }

  /** Made once (under the row's lock: every hub signs with the same), then read. */
  async ledgerKey(): Promise<LedgerKey> {
    const pem = this.read(LEDGER_KEY)?.pem ?? (await this.edit(LEDGER_KEY, edits.ledgerKey()));
    const key = ledgerKeyOf(pem);
    if (key === null) throw new Error('the team\'s ledger key does not read as an Ed25519 key');
    return key;
  }

  /** Asked at every device's `push.info`: made once (under the row's lock, so every hub gets the same), then read. */
  async vapidKeys(): Promise<VapidKeys> {
    return this.read(PUSH_KEYS) ?? this.edit(PUSH_KEYS, edits.vapidKeys());
  }

  addRelayKey(name: string, allow: readonly Grant[] = [], now = Date.now()): Promise<RelayKey> {
    return this.edit(RELAY_KEYS, edits.addRelayKey(name, allow, now));
  }

  removeRelayKey(keyId: string): Promise<boolean> {
    return this.edit(RELAY_KEYS, edits.removeRelayKey(keyId));
  }

  putReviewer(name: string, groups: string[], now = Date.now()): Promise<{ reviewer: Reviewer; added: boolean }> {
    return this.edit(REVIEWERS, edits.putReviewer(name, groups, now));
  }

  async removeReviewer(name: string): Promise<{ extensions: number; devices: number } | null> {
    if (!(await this.edit(REVIEWERS, edits.removeReviewer(name)))) return null;
    return { extensions: await this.edit(EXTENSIONS, edits.dropExtensions(theirs(name))), devices: await this.edit(DEVICES, edits.dropDevices(theirs(name))) };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.listeners.clear();
    await this.unlisten?.().catch(() => undefined);
    await this.sql.end({ timeout: 2 }).catch(() => undefined);
  }
}

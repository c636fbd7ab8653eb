import { randomBytes } from 'node:crypto';
import { constants as fsConstants } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { open, readdir, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import * as z from 'zod';
import { log } from '../log.js';
import { checkStateFile, ensurePrivateDir, stateFileOpenError } from '../private-files.js';
import { decodeLine, encodeLine } from './journal-line.js';
import { MemoryRecords, recordToWrite, type RecordStore } from './record-store.js';

/** The store is generic over records with an id; the caller validates its own shape. */
export const StoredRecordSchema = z.looseObject({ id: z.string().min(1), updatedAt: z.number() });
export type StoredRecord = z.infer<typeof StoredRecordSchema>;

// Strict so that a record which merely happens to carry a `$delete` field is never read as a tombstone.
const TombstoneSchema = z.strictObject({ $delete: z.string().min(1) });

/** The file operations a test can slow down or break; everything else is plain `node:fs`. */
export interface StoreIo {
  sync(handle: FileHandle): Promise<void>;
}
const REAL_IO: StoreIo = { sync: (handle) => handle.sync() };

interface JournalStoreOptions {
  /** Created with mode 0o700 if missing (mkdir recursive); an existing one is tightened to 0o700, or refused if others can write it. */
  dir: string;
  /** Default 'requests.jsonl' (mode 0o600). Damaged lines go to `<file>.quarantine`. */
  file?: string;
  /** Default 10_000 journal lines beyond the live record count → compact. */
  compactAfterLines?: number;
  /** Caller's validator; a line that fails it is quarantined like a damaged one. */
  parse?: (raw: unknown) => StoredRecord | undefined;
  /** Fault seam for tests (a slow or failing fsync). */
  io?: StoreIo;
}

interface JournalStoreStats {
  /** Batched write+fsync rounds on the journal (group commit: many puts per flush). */
  flushes: number;
  /** Lines currently in the journal file, live or superseded: what the compaction trigger counts. */
  lines: number;
  /** Completed compactions (automatic or explicit). */
  compactions: number;
}

type Op = { kind: 'put'; record: StoredRecord } | { kind: 'delete'; id: string };

interface PendingLine {
  text: string;
  op: Op;
  resolve: () => void;
  reject: (error: Error) => void;
}

interface Waiter {
  resolve: () => void;
  reject: (error: Error) => void;
}

interface Quarantined {
  line: number;
  reason: 'checksum' | 'malformed' | 'invalid' | 'torn_tail';
  text: string;
}

const DEFAULT_FILE = 'requests.jsonl';
const DEFAULT_COMPACT_AFTER_LINES = 10_000;
const NEWLINE = 0x0a;
/** Never through a symlink: one planted in the journal's place would send what people approved elsewhere. */
const NO_FOLLOW = fsConstants.O_NOFOLLOW ?? 0;
/** A FIFO planted in the journal's place would block open() (and the hub, and its shutdown) forever; this opens it at once to be refused. */
const NONBLOCK = fsConstants.O_NONBLOCK ?? 0;
const APPEND = fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_APPEND | NO_FOLLOW | NONBLOCK;
/** A fresh name, created exclusively: a file (or a hard link to another file of the user's) planted there is never reused or truncated. */
const COMPACT = fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL | fsConstants.O_APPEND | NO_FOLLOW;

/**
 * Opens a journal file and refuses anything but a regular file of this user's that others cannot write (a link, a
 * FIFO, a planted file), naming it; one others could only read is tightened to 0600.
 */
export async function openJournalFile(file: string, flags: number, mode?: number): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await open(file, flags, mode);
  } catch (error) {
    throw stateFileOpenError(file, error);
  }
  try {
    const verdict = checkStateFile(file, await handle.stat(), 'journal');
    if ('refuse' in verdict) throw verdict.refuse;
    // open()'s mode only applies on creation and is filtered by the umask.
    await handle.chmod(0o600);
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
}

function toError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

function errorCode(error: unknown): string | undefined {
  if (typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string') return error.code;
  return undefined;
}

function defaultParse(raw: unknown): StoredRecord | undefined {
  const result = StoredRecordSchema.safeParse(raw);
  return result.success ? result.data : undefined;
}

/** Without this, a freshly created or renamed journal can vanish from the directory after a power cut. */
export async function syncDir(dir: string): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(dir, 'r');
    await handle.sync();
  } catch (error) {
    // Some platforms (Windows, some network filesystems) refuse to open or fsync a directory: nothing more can be done there.
    const code = errorCode(error);
    if (code !== 'EISDIR' && code !== 'EINVAL' && code !== 'EPERM' && code !== 'ENOTSUP') throw error;
  } finally {
    await handle?.close();
  }
}

export async function writeFully(handle: FileHandle, text: string): Promise<void> {
  const buffer = Buffer.from(text, 'utf8');
  let offset = 0;
  // A short write (e.g. a nearly full disk) must not leave half a batch behind while reporting success.
  while (offset < buffer.length) {
    const { bytesWritten } = await handle.write(buffer, offset, buffer.length - offset, null);
    if (bytesWritten <= 0) throw new Error('journal write made no progress');
    offset += bytesWritten;
  }
}

/**
 * Durable key→record map: an fsync'd append-only journal of checksummed JSON lines, with group commit and compaction.
 * Memory changes only after the fsync that made a change durable, so whatever a reader sees is on disk. One writer by
 * contract: only the process holding the hub opens it. A damaged line is never dropped silently: it is copied to the
 * quarantine file (fsync'd) and reported before the journal is rewritten without it.
 */
export class JournalStore<T extends StoredRecord = StoredRecord> extends MemoryRecords<T> implements RecordStore<T> {
  private pending: PendingLine[] = [];
  private compactWaiters: Waiter[] = [];
  private flushing = false;
  private idleWaiters: (() => void)[] = [];
  private closing = false;
  private closed = false;
  private journalLines: number;
  private flushCount = 0;
  private compactionCount = 0;
  /** Backs off automatic compaction after a failed attempt so a persistent error does not turn every flush into a rewrite. */
  private nextAutoCompactAt = 0;

  private constructor(
    private handle: FileHandle,
    private readonly dir: string,
    private readonly filePath: string,
    private readonly compactAfterLines: number,
    private readonly io: StoreIo,
    journalLines: number,
  ) {
    super();
    this.journalLines = journalLines;
  }

  static async open<T extends StoredRecord>(options: JournalStoreOptions): Promise<JournalStore<T>> {
    const dir = path.resolve(options.dir);
    const filePath = path.join(dir, options.file ?? DEFAULT_FILE);
    const compactAfterLines = options.compactAfterLines ?? DEFAULT_COMPACT_AFTER_LINES;
    if (!Number.isInteger(compactAfterLines) || compactAfterLines < 0) throw new RangeError(`compactAfterLines must be a non-negative integer, got ${compactAfterLines}`);
    const parse = options.parse ?? defaultParse;
    const io = options.io ?? REAL_IO;

    // A real directory of this user's, 0700: the journal holds what humans approved.
    ensurePrivateDir(dir);
    await removeLeftoverTemps(dir, path.basename(filePath));

    let content: Buffer;
    try {
      const reading = await openJournalFile(filePath, fsConstants.O_RDONLY | NO_FOLLOW | NONBLOCK);
      try {
        content = await reading.readFile();
      } finally {
        await reading.close();
      }
    } catch (error) {
      if (errorCode(error) !== 'ENOENT') throw error;
      content = Buffer.alloc(0);
    }

    const records = new Map<string, T>();
    const damaged: Quarantined[] = [];
    const lastNewline = content.lastIndexOf(NEWLINE);
    const tail = content.subarray(lastNewline + 1).toString('utf8');
    const lines = content.subarray(0, lastNewline + 1).toString('utf8').split('\n');
    lines.pop();
    // The last line without its newline: a crash mid-append (never acknowledged), or an editor that stripped the final
    // newline from a good line. A line whose checksum holds is the latter and is kept.
    let tailKept = false;
    if (tail.trim() !== '') {
      lines.push(tail);
      tailKept = true;
    }
    let journalLines = 0;
    let legacyLines = 0;
    for (const [index, text] of lines.entries()) {
      if (text.trim() === '') continue;
      const isTail = tailKept && index === lines.length - 1;
      const decoded = decodeLine(text);
      if (!decoded.ok) {
        if (isTail) tailKept = false;
        damaged.push({ line: index + 1, reason: isTail ? 'torn_tail' : decoded.reason, text });
        continue;
      }
      const tombstone = TombstoneSchema.safeParse(decoded.value);
      if (tombstone.success) {
        journalLines += 1;
        if (decoded.legacy) legacyLines += 1;
        records.delete(tombstone.data.$delete);
        continue;
      }
      let record: StoredRecord | undefined;
      try {
        record = parse(decoded.value);
      } catch (error) {
        log('warn', 'journal-store: validator threw on a journal line', { file: filePath, line: index + 1, error: toError(error).message });
      }
      if (record === undefined) {
        if (isTail) tailKept = false;
        damaged.push({ line: index + 1, reason: 'invalid', text });
        continue;
      }
      journalLines += 1;
      if (decoded.legacy) legacyLines += 1;
      // The caller's parse is the only type guard for T; the store cannot check the caller's shape.
      records.set(record.id, record as T);
    }

    const quarantineFile = `${filePath}.quarantine`;
    if (damaged.length > 0) await quarantine(quarantineFile, filePath, damaged, io);

    const handle = await openJournalFile(filePath, APPEND, 0o600);
    try {
      if (tailKept) {
        await writeFully(handle, '\n');
        await io.sync(handle);
      }
      await syncDir(dir);
    } catch (error) {
      await handle.close();
      throw error;
    }

    const store = new JournalStore<T>(handle, dir, filePath, compactAfterLines, io, journalLines);
    for (const [id, record] of records) store.records.set(id, record);
    if (damaged.length > 0) {
      store.damageFound = { quarantined: damaged.length, quarantineFile };
      const torn = damaged.length === 1 && damaged[0]?.reason === 'torn_tail';
      // A torn tail after a crash is expected (it was never acknowledged); damage anywhere else means lost history.
      log(torn ? 'warn' : 'error', torn ? 'journal-store: moved a torn last line aside' : 'journal-store: DAMAGED LINES moved aside; the requests they held may show an older state', {
        file: filePath,
        quarantineFile,
        lines: damaged.map((d) => ({ line: d.line, reason: d.reason, preview: d.text.slice(0, 120) })),
      });
    }
    // Damaged lines are in the quarantine file now, and lines from before checksums get one: rewrite the journal once.
    if (damaged.length > 0 || legacyLines > 0) {
      // Not fatal: the journal as it is still reads back the same (damaged lines are quarantined again next time).
      await store.compact().catch((error: unknown) => log('warn', 'journal-store: could not rewrite the journal at open', { file: filePath, error: toError(error).message }));
    }
    log('debug', 'journal-store: opened', { file: filePath, records: records.size, lines: journalLines, quarantined: damaged.length });
    return store;
  }

  get stats(): Readonly<JournalStoreStats> {
    return { flushes: this.flushCount, lines: this.journalLines, compactions: this.compactionCount };
  }

  private get failure(): Error | undefined {
    return this.writeFailure.failed;
  }

  /** Resolves once the record is on disk; only then does `get` return it. */
  put(record: T): Promise<void> {
    const unusable = this.unusableReason();
    if (unusable) return Promise.reject(unusable);
    const written = recordToWrite(record, 'journal-store');
    if (written instanceof Error) return Promise.reject(written);
    return this.enqueue(written.text, { kind: 'put', record: written.copy });
  }

  delete(id: string): Promise<void> {
    const unusable = this.unusableReason();
    if (unusable) return Promise.reject(unusable);
    // Appended even for an unknown id: it keeps delete ordered behind any still-pending put of the same id.
    return this.enqueue(JSON.stringify({ $delete: id }), { kind: 'delete', id });
  }

  compact(): Promise<void> {
    const unusable = this.unusableReason();
    if (unusable) return Promise.reject(unusable);
    return new Promise<void>((resolve, reject) => {
      this.compactWaiters.push({ resolve, reject });
      this.kick();
    });
  }

  /** Waits for queued writes, then closes the file; later writes are refused. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closing = true;
    if (this.flushing) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    if (this.closed) return;
    this.closed = true;
    await this.handle.close();
  }

  private unusableReason(): Error | undefined {
    if (this.failure) return new Error(`journal-store is unusable after a write failure: ${this.failure.message}`, { cause: this.failure });
    if (this.closing || this.closed) return new Error('journal-store is closed');
    return undefined;
  }

  private enqueue(text: string, op: Op): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ text: encodeLine(text), op, resolve, reject });
      this.kick();
    });
  }

  private kick(): void {
    if (this.flushing) return;
    this.flushing = true;
    void this.runLoop();
  }

  /** The single writer: flushes and compactions never overlap, so a put arriving mid-compaction lands in the new file. */
  private async runLoop(): Promise<void> {
    // Yield once so a synchronous burst of puts (e.g. Promise.all over 1000) joins the very first batch.
    await Promise.resolve();
    try {
      for (;;) {
        if (this.failure) {
          this.failAll(this.failure);
          break;
        }
        let worked = false;
        if (this.pending.length > 0) {
          await this.flushBatch();
          worked = true;
        }
        // Checked after every flush, not only when idle: under steady load the queue is never empty and compaction would starve.
        if (!this.failure && (this.compactWaiters.length > 0 || this.shouldAutoCompact())) {
          await this.runCompaction();
          worked = true;
        }
        if (!worked) break;
      }
    } catch (error) {
      // Unreachable by design (each step settles its own waiters), but a stuck loop would hang every future put.
      this.poison(toError(error));
      this.failAll(this.failure ?? toError(error));
    } finally {
      // Synchronous with the emptiness check above, so a put can never slip in between and find no loop running.
      this.flushing = false;
      const idle = this.idleWaiters;
      this.idleWaiters = [];
      for (const resolve of idle) resolve();
    }
  }

  private shouldAutoCompact(): boolean {
    return this.journalLines > this.records.size + this.compactAfterLines && this.journalLines >= this.nextAutoCompactAt;
  }

  private async flushBatch(): Promise<void> {
    const batch = this.pending;
    this.pending = [];
    try {
      await writeFully(this.handle, batch.map((p) => p.text).join(''));
      await this.io.sync(this.handle);
    } catch (error) {
      const failure = toError(error);
      this.poison(failure);
      for (const p of batch) p.reject(failure);
      return;
    }
    this.flushCount += 1;
    this.journalLines += batch.length;
    // In journal order, so memory is what a replay of the file rebuilds: Map.set keeps an updated id in its slot, and
    // an id put again after a delete goes to the end.
    for (const { op } of batch) {
      if (op.kind === 'put') this.records.set(op.record.id, op.record as T);
      else this.records.delete(op.id);
    }
    for (const p of batch) p.resolve();
  }

  private async runCompaction(): Promise<void> {
    const waiters = this.compactWaiters;
    this.compactWaiters = [];
    const tmpPath = `${this.filePath}.${randomBytes(8).toString('hex')}.tmp`;
    // Memory holds only flushed changes; anything still queued is appended to the new file after the swap.
    const snapshot = [...this.records.values()];
    let tmp: FileHandle | undefined;
    try {
      // O_APPEND from the start: once renamed, this very handle is the journal's append handle, so no reopen can fail after the swap.
      tmp = await open(tmpPath, COMPACT, 0o600);
      await tmp.chmod(0o600);
      await writeFully(tmp, snapshot.map((r) => encodeLine(JSON.stringify(r))).join(''));
      await this.io.sync(tmp);
      await rename(tmpPath, this.filePath);
    } catch (error) {
      // Before the rename nothing changed: the old journal and handle are intact, so this is not fatal.
      const failure = toError(error);
      await tmp?.close().catch(() => undefined);
      // Only if we made it: an EEXIST from O_EXCL means the name is someone else's file, not ours to remove.
      if (tmp) await unlink(tmpPath).catch(() => undefined);
      this.nextAutoCompactAt = this.journalLines + Math.max(this.compactAfterLines, 1);
      log('warn', 'journal-store: compaction failed; keeping the existing journal', { file: this.filePath, error: failure.message });
      for (const w of waiters) w.reject(failure);
      return;
    }

    const old = this.handle;
    this.handle = tmp;
    this.journalLines = snapshot.length;
    this.nextAutoCompactAt = 0;
    await old.close().catch((error: unknown) => log('warn', 'journal-store: closing the pre-compaction handle failed', { error: toError(error).message }));
    try {
      await syncDir(this.dir);
    } catch (error) {
      // Without a durable rename a crash could resurrect the old file and lose every append made to the new one.
      const failure = toError(error);
      this.poison(failure);
      for (const w of waiters) w.reject(failure);
      return;
    }
    this.compactionCount += 1;
    log('debug', 'journal-store: compacted', { file: this.filePath, records: snapshot.length });
    for (const w of waiters) w.resolve();
  }

  private poison(error: Error): void {
    if (this.failure) return;
    log('error', 'journal-store: write failed; refusing further writes (reopen to recover the durable state)', { file: this.filePath, error: error.message });
    this.writeFailure.record(error);
  }

  private failAll(error: Error): void {
    const pending = this.pending;
    const waiters = this.compactWaiters;
    this.pending = [];
    this.compactWaiters = [];
    for (const p of pending) p.reject(error);
    for (const w of waiters) w.reject(error);
  }
}

/**
 * Compaction temp files left by a crash. Unlinking removes only the name (even were it a hard link to something else),
 * and only the hub's process opens the store, so none of these is in use.
 */
async function removeLeftoverTemps(dir: string, journal: string): Promise<void> {
  const prefix = `${journal}.`;
  for (const name of await readdir(dir)) {
    if (name.startsWith(prefix) && /^[0-9a-f]{16}\.tmp$/.test(name.slice(prefix.length))) await unlink(path.join(dir, name)).catch(() => undefined);
  }
}

/** Appends the damaged lines, as read, to the quarantine file and makes them durable before anything rewrites the journal. */
async function quarantine(quarantineFile: string, journal: string, damaged: readonly Quarantined[], io: StoreIo): Promise<void> {
  const at = new Date().toISOString();
  const text = damaged.map((d) => `${JSON.stringify({ quarantinedAt: at, journal, line: d.line, reason: d.reason, text: d.text })}\n`).join('');
  const handle = await openJournalFile(quarantineFile, APPEND, 0o600);
  try {
    await writeFully(handle, text);
    await io.sync(handle);
  } finally {
    await handle.close();
  }
}

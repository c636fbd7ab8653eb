import { constants as fsConstants } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { chmod, mkdir, open, readFile, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { log } from '../log.js';

/** The store is generic over records with an id; the caller validates its own shape. */
export const StoredRecordSchema = z.looseObject({ id: z.string().min(1), updatedAt: z.number() });
export type StoredRecord = z.infer<typeof StoredRecordSchema>;

// Strict so that a record which merely happens to carry a `$delete` field is never read as a tombstone.
const TombstoneSchema = z.strictObject({ $delete: z.string().min(1) });

export interface JournalStoreOptions {
  /** Created with mode 0o700 if missing (mkdir recursive), chmod 0o700 if it exists. */
  dir: string;
  /** Default 'requests.jsonl' (mode 0o600). */
  file?: string;
  /** Default 10_000 journal lines beyond the live record count → compact. */
  compactAfterLines?: number;
  /** Caller's validator; a line that fails it is skipped with a warn log (never crash on a bad row). */
  parse?: (raw: unknown) => StoredRecord | undefined;
}

export interface JournalStoreStats {
  /** Batched write+fsync rounds on the journal (group commit: many puts per flush). */
  flushes: number;
  /** Lines currently in the journal file, live or superseded: what the compaction trigger counts. */
  lines: number;
  /** Completed compactions (automatic or explicit). */
  compactions: number;
}

interface PendingLine {
  text: string;
  resolve: () => void;
  reject: (error: Error) => void;
}

interface Waiter {
  resolve: () => void;
  reject: (error: Error) => void;
}

const DEFAULT_FILE = 'requests.jsonl';
const DEFAULT_COMPACT_AFTER_LINES = 10_000;
const NEWLINE = 0x0a;

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
async function syncDir(dir: string): Promise<void> {
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

async function writeFully(handle: FileHandle, text: string): Promise<void> {
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
 * Durable key→record map: an fsync'd append-only JSONL journal with group commit and compaction.
 * Single writer by contract (the process holding the port); survives kill -9 at any instant for every put() whose promise resolved.
 */
export class JournalStore<T extends StoredRecord = StoredRecord> {
  private readonly records = new Map<string, T>();
  private pending: PendingLine[] = [];
  private compactWaiters: Waiter[] = [];
  private flushing = false;
  private idleWaiters: (() => void)[] = [];
  private closing = false;
  private closed = false;
  /** Set once a write/fsync fails: the kernel may have dropped the dirty pages, so a retried fsync could lie about durability. */
  private failure: Error | undefined;
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
    journalLines: number,
  ) {
    this.journalLines = journalLines;
  }

  static async open<T extends StoredRecord>(options: JournalStoreOptions): Promise<JournalStore<T>> {
    const dir = path.resolve(options.dir);
    const filePath = path.join(dir, options.file ?? DEFAULT_FILE);
    const compactAfterLines = options.compactAfterLines ?? DEFAULT_COMPACT_AFTER_LINES;
    if (!Number.isInteger(compactAfterLines) || compactAfterLines < 0) throw new RangeError(`compactAfterLines must be a non-negative integer, got ${compactAfterLines}`);
    const parse = options.parse ?? defaultParse;

    await mkdir(dir, { recursive: true, mode: 0o700 });
    // mkdir's mode is filtered by the umask and ignored for an existing dir; the journal holds what humans approved.
    await chmod(dir, 0o700);

    let content: Buffer;
    try {
      content = await readFile(filePath);
    } catch (error) {
      if (errorCode(error) !== 'ENOENT') throw error;
      content = Buffer.alloc(0);
    }

    const records = new Map<string, T>();
    const lastNewline = content.lastIndexOf(NEWLINE);
    const completeLength = lastNewline + 1;
    const lines = content.subarray(0, completeLength).toString('utf8').split('\n');
    let journalLines = 0;
    let skipped = 0;
    for (const [index, rawLine] of lines.entries()) {
      const line = rawLine.trim();
      if (line === '') continue;
      journalLines += 1;
      let raw: unknown;
      try {
        raw = JSON.parse(line);
      } catch {
        skipped += 1;
        log('warn', 'journal-store: skipping malformed journal line', { file: filePath, line: index + 1, preview: line.slice(0, 200) });
        continue;
      }
      const tombstone = TombstoneSchema.safeParse(raw);
      if (tombstone.success) {
        records.delete(tombstone.data.$delete);
        continue;
      }
      let record: StoredRecord | undefined;
      try {
        record = parse(raw);
      } catch (error) {
        // A throwing validator is still just a bad row, not a reason to refuse to start.
        log('warn', 'journal-store: validator threw on a journal line', { file: filePath, line: index + 1, error: toError(error).message });
        record = undefined;
      }
      if (record === undefined) {
        skipped += 1;
        log('warn', 'journal-store: skipping journal line that failed validation', { file: filePath, line: index + 1, preview: line.slice(0, 200) });
        continue;
      }
      // The caller's parse is the only type guard for T; the store cannot check the caller's shape.
      records.set(record.id, record as T);
    }

    const handle = await open(filePath, 'a', 0o600);
    try {
      // open()'s mode only applies on creation and is filtered by the umask.
      await handle.chmod(0o600);
      if (completeLength < content.length) {
        // A torn tail was never acknowledged (its fsync never returned). It must go, or the next append would glue onto it and corrupt a good line.
        log('warn', 'journal-store: dropping torn last line', { file: filePath, bytes: content.length - completeLength, preview: content.subarray(completeLength, completeLength + 200).toString('utf8') });
        await handle.truncate(completeLength);
        await handle.sync();
      }
      await syncDir(dir);
    } catch (error) {
      await handle.close();
      throw error;
    }

    const store = new JournalStore<T>(handle, dir, filePath, compactAfterLines, journalLines);
    for (const [id, record] of records) store.records.set(id, record);
    log('debug', 'journal-store: opened', { file: filePath, records: records.size, lines: journalLines, skipped });
    return store;
  }

  get stats(): Readonly<JournalStoreStats> {
    return { flushes: this.flushCount, lines: this.journalLines, compactions: this.compactionCount };
  }

  get(id: string): T | undefined {
    return this.records.get(id);
  }

  all(): T[] {
    return [...this.records.values()];
  }

  size(): number {
    return this.records.size;
  }

  put(record: T): Promise<void> {
    const unusable = this.unusableReason();
    if (unusable) return Promise.reject(unusable);
    if (typeof record.id !== 'string' || record.id === '' || typeof record.updatedAt !== 'number') {
      return Promise.reject(new TypeError('journal-store: a record needs a non-empty string id and a numeric updatedAt'));
    }
    let text: string;
    try {
      text = JSON.stringify(record);
    } catch (error) {
      return Promise.reject(toError(error));
    }
    // Memory holds exactly what a reopen would read back, so later caller mutations cannot make memory and disk disagree.
    // Map.set keeps an updated id in its original slot; an id re-put after delete() appends, matching what a replay rebuilds.
    this.records.set(record.id, JSON.parse(text) as T);
    return this.enqueue(text);
  }

  delete(id: string): Promise<void> {
    const unusable = this.unusableReason();
    if (unusable) return Promise.reject(unusable);
    this.records.delete(id);
    // Appended even for an unknown id: it keeps delete ordered behind any still-pending put of the same id.
    return this.enqueue(JSON.stringify({ $delete: id }));
  }

  async purge(predicate: (r: T) => boolean): Promise<number> {
    const unusable = this.unusableReason();
    if (unusable) throw unusable;
    // Decide first so a throwing predicate leaves the store untouched.
    const doomed = [...this.records.values()].filter((r) => predicate(r)).map((r) => r.id);
    await Promise.all(doomed.map((id) => this.delete(id)));
    return doomed.length;
  }

  compact(): Promise<void> {
    const unusable = this.unusableReason();
    if (unusable) return Promise.reject(unusable);
    return new Promise<void>((resolve, reject) => {
      this.compactWaiters.push({ resolve, reject });
      this.kick();
    });
  }

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

  private enqueue(text: string): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ text: `${text}\n`, resolve, reject });
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
      await this.handle.sync();
    } catch (error) {
      const failure = toError(error);
      this.poison(failure);
      for (const p of batch) p.reject(failure);
      return;
    }
    this.flushCount += 1;
    this.journalLines += batch.length;
    for (const p of batch) p.resolve();
  }

  private async runCompaction(): Promise<void> {
    const waiters = this.compactWaiters;
    this.compactWaiters = [];
    const tmpPath = `${this.filePath}.tmp`;
    // Memory may already include puts still queued; they are re-appended after the swap, and replaying upserts/tombstones is idempotent.
    const snapshot = [...this.records.values()];
    let tmp: FileHandle | undefined;
    try {
      // O_APPEND from the start: once renamed, this very handle is the journal's append handle, so no reopen can fail after the swap.
      tmp = await open(tmpPath, fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_TRUNC | fsConstants.O_APPEND, 0o600);
      await tmp.chmod(0o600);
      await writeFully(tmp, snapshot.map((r) => `${JSON.stringify(r)}\n`).join(''));
      await tmp.sync();
      await rename(tmpPath, this.filePath);
    } catch (error) {
      // Before the rename nothing changed: the old journal and handle are intact, so this is not fatal.
      const failure = toError(error);
      await tmp?.close().catch(() => undefined);
      await unlink(tmpPath).catch(() => undefined);
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
    this.failure = error;
    log('error', 'journal-store: write failed; refusing further writes (reopen to recover the durable state)', { file: this.filePath, error: error.message });
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

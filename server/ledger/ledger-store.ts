import { constants as fsConstants } from 'node:fs';
import { readdir, readFile, rename, truncate, unlink } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import type { KeyObject } from 'node:crypto';
import path from 'node:path';
import { log } from '../log.js';
import { ensurePrivateDir } from '../private-files.js';
import { openJournalFile, syncDir, writeFully, type StoreIo } from '../store/journal-store.js';
import { GENESIS, canonical, entryLine, keyIdOf, readEntry, signCheckpoint, type LedgerEntry, type LedgerEvent } from './ledger-format.js';

export const LEDGER_DIR = 'ledger';
export const CHECKPOINT_FILE = 'checkpoint.json';
export const segmentName = (n: number) => `segment-${String(n).padStart(6, '0')}.jsonl`;
export const SEGMENT_FILE = /^segment-(\d{6})\.jsonl$/;

const APPEND = fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_APPEND | (fsConstants.O_NOFOLLOW ?? 0);
const REAL_IO: StoreIo = { sync: (handle) => handle.sync() };

export interface LedgerKey {
  privateKey: KeyObject;
  publicKey: KeyObject;
}

export interface LedgerOptions {
  /** The state dir: the ledger is its `ledger/` folder. */
  dir: string;
  key: LedgerKey;
  now?: () => number;
  io?: StoreIo;
  /** A signed checkpoint after at most this many entries. Default 1,000. */
  checkpointEvery?: number;
  /** And at least this often while there is activity. Default a minute. */
  checkpointMs?: number;
  /** A segment is sealed (after a checkpoint) once it holds this many entries. Default 100,000. */
  segmentEntries?: number;
}

export class LedgerDamagedError extends Error {}

/** An entry and where its line is: a receipt names it, so one entry is checked without reading the ledger whole. */
export interface Placed {
  entry: LedgerEntry;
  segment: number;
  /** The byte offset of its line in the segment. */
  offset: number;
}

interface Waiting {
  events: LedgerEvent[];
  resolve(entries: Placed[]): void;
  reject(error: Error): void;
}

/**
 * The append-only ledger: segments of canonical JSON lines, a SHA-256 chain through them, signed checkpoints. Only the
 * hub's engine appends (the one writer of the journal is the one writer here). An append resolves once its lines are
 * fsync'd: its caller acknowledges nothing before. Appends that arrive while one is being written go together in the
 * next write (one fsync for the lot). Nothing here ever rewrites a line: a torn tail left by a crash (an append never
 * acknowledged) is cut at open, and anything else unreadable refuses the open, naming the line (`audit verify` tells
 * the rest).
 */
export class LedgerStore {
  private queue: Waiting[] = [];
  private flushing: Promise<void> | null = null;
  private failed: Error | undefined;
  private sinceCheckpoint = 0;
  private segmentCount = 0;
  /** The current segment's length in bytes: where the next line starts. */
  private bytes = 0;
  private readonly timer: NodeJS.Timeout;
  private readonly keyId: string;

  private constructor(
    private readonly dir: string,
    private readonly options: LedgerOptions,
    private readonly io: StoreIo,
    private readonly now: () => number,
    private handle: FileHandle,
    private segment: number,
    private next: number,
    private head: string,
    private lastCheckpoint: LedgerEntry | null,
  ) {
    this.keyId = keyIdOf(options.key.publicKey);
    this.timer = setInterval(() => {
      if (this.sinceCheckpoint > 0) void this.append([]).catch(() => undefined);
    }, options.checkpointMs ?? 60_000);
    this.timer.unref();
  }

  static async open(options: LedgerOptions): Promise<LedgerStore> {
    const dir = path.join(path.resolve(options.dir), LEDGER_DIR);
    ensurePrivateDir(dir);
    const segments = (await readdir(dir)).map((name) => SEGMENT_FILE.exec(name)).filter((m) => m !== null).map((m) => Number(m[1])).sort((a, b) => a - b);
    const segment = segments.at(-1) ?? 1;
    const file = path.join(dir, segmentName(segment));
    let next = 0;
    let head = GENESIS;
    let lastCheckpoint: LedgerEntry | null = null;
    let count = 0;
    let since = 0;
    const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return '';
      throw error;
    });
    if (text !== '') {
      const complete = text.endsWith('\n') ? text : text.slice(0, text.lastIndexOf('\n') + 1);
      if (complete.length < text.length) {
        // A line whose write a crash cut short: its append was never acknowledged.
        log('warn', 'ledger: a torn last line (an append never acknowledged) was cut', { file, bytes: text.length - complete.length });
        await truncate(file, Buffer.byteLength(complete, 'utf8'));
      }
      const lines = complete.split('\n').slice(0, -1);
      for (const [i, line] of lines.entries()) {
        const read = readEntry(line);
        if (!read.ok) throw new LedgerDamagedError(`ledger ${file} line ${i + 1}: ${read.problem}; run \`elicitly-companion audit verify\``);
        const { entry } = read;
        if (i > 0 && (entry.prev !== head || entry.index !== next)) throw new LedgerDamagedError(`ledger ${file} line ${i + 1}: does not follow the line before it; run \`elicitly-companion audit verify\``);
        head = entry.hash;
        next = entry.index + 1;
        count++;
        since++;
        if (entry.event.type === 'checkpoint') {
          lastCheckpoint = entry;
          since = 0;
        }
      }
    }
    const handle = await openJournalFile(file, APPEND, 0o600);
    const store = new LedgerStore(dir, options, options.io ?? REAL_IO, options.now ?? Date.now, handle, segment, next, head, lastCheckpoint);
    store.segmentCount = count;
    store.sinceCheckpoint = since;
    store.bytes = Buffer.byteLength(text === '' ? '' : text.endsWith('\n') ? text : text.slice(0, text.lastIndexOf('\n') + 1), 'utf8');
    return store;
  }

  /** The error that stopped appends, if one did. */
  get failure(): Error | undefined {
    return this.failed;
  }

  /** The number of entries so far (the next one's index). */
  get size(): number {
    return this.next;
  }

  /** The newest signed checkpoint, or null before the first. */
  get checkpoint(): LedgerEntry | null {
    return this.lastCheckpoint;
  }

  /** Appends these events in order; resolves with their entries, and where they are, once they are on disk. */
  append(events: LedgerEvent[]): Promise<Placed[]> {
    if (this.failed) return Promise.reject(this.failed);
    return new Promise((resolve, reject) => {
      this.queue.push({ events, resolve, reject });
      this.kick();
    });
  }

  private kick(): void {
    if (this.flushing) return;
    // Appends made while a write is in flight go together in the next one, as the journal's do.
    this.flushing = this.flush().finally(() => {
      this.flushing = null;
      if (this.queue.length > 0) this.kick();
    });
  }

  private async flush(): Promise<void> {
    const batch = this.queue.splice(0);
    if (batch.length === 0) return;
    try {
      if (this.failed) throw this.failed;
      const at = this.now();
      const lines: string[] = [];
      let offset = this.bytes;
      const add = (event: LedgerEvent): Placed => {
        const { entry, line } = entryLine(this.next, at, this.head, event);
        lines.push(line);
        const placed = { entry, segment: this.segment, offset };
        offset += Buffer.byteLength(line, 'utf8') + 1;
        this.next++;
        this.head = entry.hash;
        this.sinceCheckpoint++;
        this.segmentCount++;
        return placed;
      };
      const results: Placed[][] = [];
      let checkpoint: LedgerEntry | null = null;
      const every = this.options.checkpointEvery ?? 1000;
      for (const waiting of batch) {
        // Checked after every entry: a batch of thousands (the catch-up at open) still gets one every `every` entries.
        results.push(waiting.events.map((event) => {
          const placed = add(event);
          if (this.sinceCheckpoint >= every) checkpoint = this.addCheckpoint(add, at);
          return placed;
        }));
      }
      // An empty append is the minute's checkpoint.
      if (batch.every((w) => w.events.length === 0) && this.sinceCheckpoint > 0) checkpoint = this.addCheckpoint(add, at);
      if (lines.length > 0) {
        await writeFully(this.handle, `${lines.join('\n')}\n`);
        await this.io.sync(this.handle);
        this.bytes = offset;
      }
      if (checkpoint) await this.sealed(checkpoint);
      batch.forEach((waiting, i) => waiting.resolve(results[i] ?? []));
    } catch (error) {
      const failure = error instanceof Error ? error : new Error(String(error));
      this.failed ??= failure;
      log('error', 'ledger: could not append; refusing further appends', { error: failure.message });
      for (const waiting of batch) waiting.reject(failure);
      for (const waiting of this.queue.splice(0)) waiting.reject(failure);
    }
  }

  private addCheckpoint(add: (event: LedgerEvent) => Placed, at: number): LedgerEntry {
    const { entry } = add({ type: 'checkpoint', size: this.next, head: this.head, keyId: this.keyId, signature: signCheckpoint(this.options.key.privateKey, this.next, this.head, at) });
    this.sinceCheckpoint = 0;
    this.lastCheckpoint = entry;
    return entry;
  }

  /**
   * After a checkpoint is on disk: the latest one is also kept beside the segments (a truncated ledger is told by it),
   * and a full segment is sealed, the next one starting with a copy of this checkpoint.
   */
  private async sealed(checkpoint: LedgerEntry): Promise<void> {
    const file = path.join(this.dir, CHECKPOINT_FILE);
    const temp = `${file}.tmp`;
    const handle = await openJournalFile(temp, fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_TRUNC | (fsConstants.O_NOFOLLOW ?? 0), 0o600);
    try {
      await writeFully(handle, `${canonical(checkpoint)}\n`);
      await this.io.sync(handle);
    } finally {
      await handle.close();
    }
    await rename(temp, file);
    // Sealed only at a checkpoint that is the segment's last line: a sealed segment ends with its checkpoint.
    if (this.segmentCount >= (this.options.segmentEntries ?? 100_000) && checkpoint.index === this.next - 1) {
      await this.handle.close();
      this.segment++;
      this.handle = await openJournalFile(path.join(this.dir, segmentName(this.segment)), APPEND, 0o600);
      const copy = `${canonical(checkpoint)}\n`;
      await writeFully(this.handle, copy);
      await this.io.sync(this.handle);
      this.segmentCount = 1;
      this.bytes = Buffer.byteLength(copy, 'utf8');
    }
    await syncDir(this.dir);
  }

  /**
   * Removes whole sealed segments whose last entry is older than `before`, oldest first and never the one being
   * written: the first segment kept opens with the checkpoint that sealed the last one removed, so the ledger still
   * verifies from a signed point. Returns what was removed, after saying so in the ledger itself.
   */
  async prune(before: number): Promise<{ first: number; last: number; through: number } | null> {
    const numbers = (await readdir(this.dir)).map((name) => SEGMENT_FILE.exec(name)).filter((m) => m !== null).map((m) => Number(m[1])).sort((a, b) => a - b);
    let removable: { n: number; through: number }[] = [];
    for (const n of numbers) {
      if (n >= this.segment) break;
      const text = await readFile(path.join(this.dir, segmentName(n)), 'utf8');
      const read = readEntry(text.trimEnd().slice(text.trimEnd().lastIndexOf('\n') + 1));
      if (!read.ok || read.entry.event.type !== 'checkpoint' || read.entry.at >= before) break;
      removable = [...removable, { n, through: read.entry.index }];
    }
    const first = removable[0];
    const last = removable.at(-1);
    if (!first || !last) return null;
    const pruned = { first: first.n, last: last.n, through: last.through };
    await this.append([{ type: 'segments.pruned', ...pruned }]);
    for (const { n } of removable) await unlink(path.join(this.dir, segmentName(n)));
    await syncDir(this.dir);
    log('info', 'ledger: sealed segments past retention removed', pruned);
    return pruned;
  }

  /** Signs what is not signed yet, then closes. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    if (!this.failed && this.sinceCheckpoint > 0) await this.append([]).catch(() => undefined);
    while (this.flushing) await this.flushing;
    await this.handle.close();
  }
}

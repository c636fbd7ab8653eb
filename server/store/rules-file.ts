import { randomBytes } from 'node:crypto';
import { constants as fsConstants } from 'node:fs';
import { readdir, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import * as z from 'zod';
import { log } from '../log.js';
import { WriteFailure } from './write-failure.js';
import { ensurePrivateDir } from '../private-files.js';
import type { StoreIo } from './journal-store.js';
import { openJournalFile, syncDir, writeFully } from './journal-store.js';

const NO_FOLLOW = fsConstants.O_NOFOLLOW ?? 0;
const NONBLOCK = fsConstants.O_NONBLOCK ?? 0;
/** A fresh temp name, created exclusively: nothing planted there is reused or truncated. */
const TEMP = fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL | NO_FOLLOW;
const REAL_IO: StoreIo = { sync: (handle) => handle.sync() };

export const RULES_FILE = 'rules.json';

/**
 * The file as written: a version, so a later shape can be told from a damaged one. 2: a pattern's `?` and `\` became
 * wildcard and escape (in 1 they were themselves).
 */
export const RULES_FILE_VERSION = 2;

/** Which list file: the rules by default; the passkeys (server/passkeys/passkey-registry.ts) are kept the same way. */
export interface ListFileFormat {
  /** The file's name in the state dir. */
  name: string;
  /** The envelope's key for the list. */
  key: string;
  /** The version written; every version from 1 up to it is read (`migrate` turns an older entry into this one). */
  version: number;
}
const RULES_FORMAT: ListFileFormat = { name: RULES_FILE, key: 'rules', version: RULES_FILE_VERSION };

interface RulesFileOptions<T> {
  dir: string;
  /** The caller's validator for one entry (the rule schema); an entry it refuses is quarantined. */
  parse: (raw: unknown) => T | undefined;
  /** Entries kept at most; the ones past it are quarantined. */
  max: number;
  /** An entry written by an older version, as this one reads it (it is rewritten once, in the current version). */
  migrate?: (raw: unknown, from: number) => unknown;
  io?: StoreIo;
  format?: ListFileFormat;
}

/** A rule list as another hub of a shared database changed it: applied in the rules' turn of the engine's queue. */
export interface RulesChange<T> {
  apply(): Promise<{ before: readonly T[]; after: readonly T[] } | null>;
}

/**
 * The person's rules as the engine keeps them: this file, or a team's database (pg-rules-store.ts), where another hub
 * may replace the list first (then `replace` is refused as `StaleRecord` with `RULES_KEY`, and the engine refreshes).
 */
export interface RulesStore<T extends { id: string }> {
  all(): readonly T[];
  readonly damage: { quarantined: number; quarantineFile: string } | null;
  readonly failed: Error | undefined;
  onFailure(listener: (error: Error) => void): () => void;
  replace(next: readonly T[]): Promise<void>;
  onRemoteChange(listener: (change: RulesChange<T>) => void): () => void;
  refresh(): Promise<{ before: readonly T[]; after: readonly T[] } | null>;
  close(): Promise<void>;
}

/** What names the rule list in a `StaleRecord`, and the engine's queue for rule changes: no request id can be it. */
export const RULES_KEY = '\u0000rules';

/**
 * What both rule stores keep alike: the list in memory (changed only once a change is durable), what the open moved
 * aside, and the first write failure, after which the store refuses every write and its owner steps down.
 */
export abstract class RuleList<T extends { id: string }> implements Pick<RulesStore<T>, 'all' | 'damage' | 'failed' | 'onFailure'> {
  protected readonly writeFailure = new WriteFailure();
  protected damageFound: { quarantined: number; quarantineFile: string } | null = null;

  constructor(protected entries: readonly T[]) {}

  all(): readonly T[] {
    return this.entries;
  }

  get damage(): { quarantined: number; quarantineFile: string } | null {
    return this.damageFound;
  }

  get failed(): Error | undefined {
    return this.writeFailure.failed;
  }

  onFailure(listener: (error: Error) => void): () => void {
    return this.writeFailure.onFailure(listener);
  }
}

interface Quarantined {
  reason: string;
  text: string;
}

/**
 * The person's rules on disk: one small JSON file, replaced whole on every change (temp file, fsync, rename, directory
 * fsync), so a reader sees the old list or the new one, never half. Only the hub's process opens it (the same one
 * writer as the journal). What does not validate at open is copied to `rules.json.quarantine` (fsync'd), logged as an
 * error, and the file is rewritten without it: a damaged rule is never dropped silently. Losing a rule only ever brings a
 * question back to the person. A failed write makes it refuse every later one, like the journal, and its owner steps
 * down and reopens it from disk.
 */
export class RulesFile<T extends { id: string }> extends RuleList<T> implements RulesStore<T> {
  private chain: Promise<void> = Promise.resolve();

  private constructor(
    private readonly dir: string,
    private readonly file: string,
    private readonly io: StoreIo,
    private readonly format: ListFileFormat,
    entries: readonly T[],
  ) {
    super(entries);
  }

  static async open<T extends { id: string }>(options: RulesFileOptions<T>): Promise<RulesFile<T>> {
    const dir = path.resolve(options.dir);
    const format = options.format ?? RULES_FORMAT;
    const file = path.join(dir, format.name);
    const io = options.io ?? REAL_IO;
    ensurePrivateDir(dir);
    for (const name of await readdir(dir)) {
      if (name.startsWith(`${format.name}.`) && /\.[0-9a-f]{16}\.tmp$/.test(name)) await unlink(path.join(dir, name)).catch(() => undefined);
    }
    const VersionSchema = z.number().int().min(1).max(format.version);
    const EnvelopeSchema = z.strictObject({ version: VersionSchema, [format.key]: z.array(z.unknown()) });
    let text: string | undefined;
    try {
      const reading = await openJournalFile(file, fsConstants.O_RDONLY | NO_FOLLOW | NONBLOCK);
      try {
        text = await reading.readFile('utf8');
      } finally {
        await reading.close();
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    const damaged: Quarantined[] = [];
    const entries: T[] = [];
    let migrated = false;
    if (text !== undefined) {
      let envelope: { version: number; list: unknown[] } | undefined;
      try {
        const parsed = EnvelopeSchema.safeParse(JSON.parse(text));
        if (parsed.success) envelope = { version: VersionSchema.parse(parsed.data.version), list: z.array(z.unknown()).parse(parsed.data[format.key]) };
        else damaged.push({ reason: `not_a_${format.key}_file`, text });
      } catch {
        damaged.push({ reason: 'not_json', text });
      }
      const seen = new Set<string>();
      const from = envelope?.version ?? format.version;
      if (from !== format.version) migrated = true;
      for (const stored of envelope?.list ?? []) {
        const raw = from !== format.version && options.migrate ? options.migrate(stored, from) : stored;
        const entry = options.parse(raw);
        const shown = JSON.stringify(raw);
        if (entry === undefined) damaged.push({ reason: 'invalid', text: shown });
        else if (seen.has(entry.id)) damaged.push({ reason: 'duplicate_id', text: shown });
        else if (entries.length >= options.max) damaged.push({ reason: 'over_limit', text: shown });
        else {
          seen.add(entry.id);
          entries.push(entry);
        }
      }
    }
    const store = new RulesFile<T>(dir, file, io, format, entries);
    if (damaged.length > 0) {
      const quarantineFile = `${file}.quarantine`;
      const at = new Date().toISOString();
      const handle = await openJournalFile(quarantineFile, fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_APPEND | NO_FOLLOW | NONBLOCK, 0o600);
      try {
        await writeFully(handle, damaged.map((d) => `${JSON.stringify({ quarantinedAt: at, file, reason: d.reason, text: d.text })}\n`).join(''));
        await io.sync(handle);
      } finally {
        await handle.close();
      }
      store.damageFound = { quarantined: damaged.length, quarantineFile };
      log('error', 'rules: DAMAGED RULES moved aside; the questions they answered go to the person again until the rules are saved anew', {
        file,
        quarantineFile,
        kept: entries.length,
        moved: damaged.map((d) => ({ reason: d.reason, preview: d.text.slice(0, 120) })),
      });
      // The quarantine holds them now: rewrite the file once with what validated, so the damage is not met again.
      await store.replace(entries);
    } else if (migrated) {
      await store.replace(entries);
      log('info', `${format.key}: the file was rewritten in the current version`, { file, version: format.version });
    }
    return store;
  }

  /** One hub's file: nobody else changes it. */
  onRemoteChange(_listener: (change: RulesChange<T>) => void): () => void {
    return () => undefined;
  }

  refresh(): Promise<null> {
    return Promise.resolve(null);
  }

  /** Every write is on disk when it resolves: nothing to close. */
  async close(): Promise<void> {
    await this.chain;
  }

  /**
   * Replaces the whole list; resolves once it is on disk (file and directory fsync'd). Memory changes only then, so
   * every reader sees what is durable. Writes run one at a time.
   */
  replace(next: readonly T[]): Promise<void> {
    const run = this.chain.then(() => this.write(next));
    this.chain = run.catch(() => undefined);
    return run;
  }

  private async write(next: readonly T[]): Promise<void> {
    const refused = this.writeFailure.failed;
    if (refused) throw refused;
    const temp = path.join(this.dir, `${this.format.name}.${randomBytes(8).toString('hex')}.tmp`);
    let renamed = false;
    try {
      const handle = await openJournalFile(temp, TEMP, 0o600);
      try {
        await writeFully(handle, `${JSON.stringify({ version: this.format.version, [this.format.key]: next }, null, 2)}\n`);
        await this.io.sync(handle);
      } finally {
        await handle.close();
      }
      await rename(temp, this.file);
      renamed = true;
      await syncDir(this.dir);
      this.entries = [...next];
    } catch (error) {
      if (!renamed) await unlink(temp).catch(() => undefined);
      const failure = error instanceof Error ? error : new Error(String(error));
      log('error', `${this.format.key}: could not write ${this.format.name}; refusing further changes`, { file: this.file, error: failure.message });
      this.writeFailure.record(failure);
      throw failure;
    }
  }
}

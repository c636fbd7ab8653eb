import { statSync, watch } from 'node:fs';
import { join } from 'node:path';
import { isKeyHex, randomHex } from '../shared/hub-auth.js';
import type { PushSubscription } from '../shared/push-notice.js';
import type { Reviewer } from '../shared/reviewers.js';
import { RoutingPolicySchema, readRoutingPolicy, type RoutingPolicy, type RoutingRead } from '../shared/routing.js';
import type { Grant } from '../shared/wire-fields.js';
import {
  DEVICES, DirectoryReads, EXTENSIONS, PAIRINGS, PUSH_KEYS, RELAY_KEYS, REVIEWERS, ROUTING, edits, theirs,
  type Directory, type Doc, type Edit, type PairedDevice, type PairedExtension, type Pairing, type PairingPurpose, type RelayKey,
} from './directory.js';
import { withFileLock } from './file-lock.js';
import { log } from './log.js';
import { createPrivateFile, ensurePrivateDir, readPrivateFile, writePrivateFile } from './private-files.js';
import type { RemoteConfig } from './remote-config.js';
import { REMOTE_OFF, RemoteConfigSchema } from './remote-config.js';
import type { VapidKeys } from './remote/web-push.js';
import { ledgerKey } from './ledger/ledger-key.js';
import type { LedgerKey } from './ledger/ledger-store.js';

/** A team's routing policy (`shared/routing.ts`), written by the team (`routing set`); the hub only reads it. */
export const ROUTING_FILE = ROUTING;
export const REMOTE_FILE = 'remote.json';

/** What this process's one watcher of the state dir has seen: a count of changes per file name, and of changes to any. */
interface Changes {
  of: Map<string, number>;
  any: number;
}

/**
 * The files of the state dir other than the journal: the install's relay key, the reviewer page's settings, the
 * routing policy, and, on one person's hub, the directory (`directory.ts`), a file per document. Every read validates
 * and refuses a file that is not a regular file of this user's, 0600 (a link, a FIFO, a planted file); every write is
 * atomic (temp file, fsync, rename or link), and every read-modify-write holds the file's lock, so concurrent processes
 * never undo each other's change. The dir itself is checked on every use: a real directory of this user's, 0700.
 */
export class StateDir extends DirectoryReads implements Directory {
  /** Started by the first watched reader; null when the dir cannot be watched (the readers stat instead). */
  private changes: Changes | null | undefined;

  constructor(readonly path: string) {
    super();
  }

  private file(name: string): string {
    return join(this.path, name);
  }

  ensure(): void {
    ensurePrivateDir(this.path);
  }

  /**
   * The per-install key relays and the hub prove to each other (never sent). Created atomically by whichever process
   * needs it first; a damaged one (empty, short, not hex) is never used: it is replaced, which unpairs nothing but
   * the relays, and said so.
   */
  relayKey(): string {
    this.ensure();
    const file = this.file('secret');
    let text = readPrivateFile(file)?.trim();
    if (text === undefined) {
      // Whoever links first wins; everyone then reads the same complete file.
      createPrivateFile(file, randomHex(32));
      text = readPrivateFile(file)?.trim();
    }
    const length = text?.length ?? 0;
    if (isKeyHex(text)) return text;
    log('error', 'the install key file was damaged (empty, short or not hex); replacing it: relays reconnect with the new one', { file, length });
    writePrivateFile(file, randomHex(32));
    const replaced = readPrivateFile(file)?.trim();
    if (!isKeyHex(replaced)) throw new Error(`could not write a valid key to ${file}`);
    return replaced;
  }

  protected read<D>(doc: Doc<D>): D {
    const raw = this.readJson(doc.name);
    if (raw === undefined) return doc.empty;
    const parsed = doc.schema.safeParse(raw);
    if (parsed.success) return parsed.data;
    if (doc.damaged !== undefined) log('error', `the file ${doc.name} is damaged; ${doc.damaged}`, { file: this.file(doc.name) });
    return doc.empty;
  }

  /** One change to one document, made under its file's lock over what the file holds now, and written atomically. */
  private edit<D, T>(doc: Doc<D>, edit: Edit<D, T>): T {
    return this.update(doc.name, () => {
      const { next, result } = edit(this.read(doc));
      if (next !== undefined) writePrivateFile(this.file(doc.name), JSON.stringify(doc.schema.parse(next)));
      return result;
    });
  }

  createPairing(purpose: PairingPurpose, now = Date.now(), reviewer?: string): Pairing {
    return this.edit(PAIRINGS, edits.createPairing(purpose, now, reviewer));
  }

  recordPairingFailure(purpose: PairingPurpose, now = Date.now()): number {
    const left = this.edit(PAIRINGS, edits.recordPairingFailure(purpose, now));
    if (left === 0) log('warn', 'a pairing code was burnt after too many wrong attempts', { purpose });
    return left;
  }

  clearPairing(purpose: PairingPurpose, code?: string): boolean {
    return this.edit(PAIRINGS, edits.clearPairing(purpose, code, Date.now()));
  }

  addPairedExtension(origin: string, now = Date.now(), reviewer?: string): PairedExtension {
    return this.edit(EXTENSIONS, edits.addExtension(origin, now, reviewer));
  }

  removePairedExtensions(origin: string): number {
    return this.edit(EXTENSIONS, edits.dropExtensions((e) => e.origin === origin));
  }

  addPairedDevice(name: string, origin: string, now = Date.now(), reviewer?: string): PairedDevice {
    return this.edit(DEVICES, edits.addDevice(name, origin, now, reviewer));
  }

  removePairedDevice(keyId: string): boolean {
    return this.edit(DEVICES, edits.dropDevices((d) => d.keyId === keyId)) > 0;
  }

  setDevicePush(keyId: string, subscription: PushSubscription | null, options: { onlyEndpoint?: string; now?: number } = {}): boolean {
    return this.edit(DEVICES, edits.setDevicePush(keyId, subscription, options));
  }

  ledgerKey(): LedgerKey {
    return ledgerKey(this.path);
  }

  vapidKeys(): VapidKeys {
    return this.edit(PUSH_KEYS, edits.vapidKeys());
  }

  addRelayKey(name: string, allow: readonly Grant[] = [], now = Date.now()): RelayKey {
    return this.edit(RELAY_KEYS, edits.addRelayKey(name, allow, now));
  }

  removeRelayKey(keyId: string): boolean {
    return this.edit(RELAY_KEYS, edits.removeRelayKey(keyId));
  }

  putReviewer(name: string, groups: string[], now = Date.now()): { reviewer: Reviewer; added: boolean } {
    return this.edit(REVIEWERS, edits.putReviewer(name, groups, now));
  }

  /**
   * Removes a reviewer and forgets every browser and phone paired for them (the hub cuts their sockets when the files
   * change): someone who left the team decides nothing more. Null when there was no such reviewer.
   */
  removeReviewer(name: string): { extensions: number; devices: number } | null {
    if (!this.edit(REVIEWERS, edits.removeReviewer(name))) return null;
    return { extensions: this.edit(EXTENSIONS, edits.dropExtensions(theirs(name))), devices: this.edit(DEVICES, edits.dropDevices(theirs(name))) };
  }

  async catchUp(): Promise<void> {}

  stamp(name: string): string {
    return this.fileStamp(name);
  }

  /** Tells of every file of the dir that changes, whoever changed it (`pair --remove` in a terminal, another hub's process). */
  watch(listener: (name: string | null) => void, stopped?: () => void): (() => void) | null {
    try {
      const watcher = watch(this.path, { persistent: false }, (_event, file) => listener(file));
      watcher.on('error', (error) => {
        watcher.close();
        log('warn', 'stopped watching the state dir; a removed key is refused at its next call', { error: error.message });
        stopped?.();
      });
      return () => watcher.close();
    } catch (error) {
      log('warn', 'cannot watch the state dir; a removed key is refused at its next call', { error: String(error) });
      return null;
    }
  }

  /** The reviewer page's settings; off when never enabled, and off (said in the log) when the file is damaged. */
  remote(): RemoteConfig {
    const raw = this.readJson(REMOTE_FILE);
    if (raw === undefined) return REMOTE_OFF;
    const parsed = RemoteConfigSchema.safeParse(raw);
    if (parsed.success) return parsed.data;
    log('error', 'the remote reviewer settings are damaged; the phone page is off until `elicitly-companion remote enable`', { file: this.file(REMOTE_FILE) });
    return REMOTE_OFF;
  }

  /**
   * `remote()` for a caller that asks at every request (the notifier): read again only when the state dir's watcher
   * saw the file change, so an answer costs nothing; where the dir cannot be watched, when a stat says it changed.
   * A change shows once the watcher's event has arrived (a few ms after the write), not before.
   */
  remoteReader(): () => RemoteConfig {
    return this.changedOnly(REMOTE_FILE, () => this.remote());
  }

  /** The team's routing policy: none without the file; a damaged one says what is wrong, and nothing is filed then. */
  routing(): RoutingRead {
    let raw: unknown;
    try {
      raw = this.readJson(ROUTING_FILE);
    } catch (error) {
      // The refusal names the file already.
      return { ok: false, problem: error instanceof Error ? error.message : String(error) };
    }
    const read = readRoutingPolicy(raw);
    return read.ok ? read : { ok: false, problem: `${this.file(ROUTING_FILE)}: ${read.problem}` };
  }

  /**
   * `routing()` for the engine, which asks at every create: read again only when the file changed, and a policy that
   * does not parse said in the log once per change (the team's admin reads the log; the agents get the refusal).
   */
  routingReader(): () => RoutingRead {
    return this.changedOnly(ROUTING_FILE, () => {
      const read = this.routing();
      if (!read.ok) log('error', 'the team\'s routing policy does not parse: no request is filed until it is fixed', { problem: read.problem });
      return read;
    });
  }

  setRouting(policy: RoutingPolicy): void {
    this.update(ROUTING_FILE, () => writePrivateFile(this.file(ROUTING_FILE), JSON.stringify(RoutingPolicySchema.parse(policy))));
  }

  /** `pairedDevices()` for the notifier, which asks at every new request: read again only when the file changed. */
  pairedDevicesReader(): () => PairedDevice[] {
    return this.changedOnly(DEVICES.name, () => this.pairedDevices());
  }

  /**
   * What tells a file's versions apart for a reader: the watcher's count of its changes, or `fileStamp` (one stat)
   * where the dir cannot be watched. The watcher is this process's, started once, and keeps no process alive.
   */
  private version(name: string): string {
    if (this.changes === undefined) this.changes = this.watchChanges();
    const changes = this.changes;
    return changes === null || changes === undefined ? this.fileStamp(name) : `w${changes.any}:${changes.of.get(name) ?? 0}`;
  }

  /** The watcher's counts; undefined while the dir does not exist yet (tried again at the next read), null if it cannot be watched. */
  private watchChanges(): Changes | null | undefined {
    const changes: Changes = { of: new Map(), any: 0 };
    try {
      const watcher = watch(this.path, { persistent: false }, (_event, file) => {
        // A platform that does not say which file changed: every reader reads again.
        if (file === null) changes.any += 1;
        else changes.of.set(file, (changes.of.get(file) ?? 0) + 1);
      });
      watcher.on('error', (error) => {
        watcher.close();
        // From now on every reader stats: its next answer reads the file again (the stamp differs from any count).
        this.changes = null;
        log('warn', 'stopped watching the state dir; its settings are checked with a stat at each use', { error: error.message });
      });
      return changes;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      log('warn', 'cannot watch the state dir; its settings are checked with a stat at each use', { error: String(error) });
      return null;
    }
  }

  /**
   * What tells a file's versions apart without reading it: inode, size, change and modification times (every write here
   * replaces a file by rename); `absent` when there is none. One stat.
   */
  fileStamp(name: string): string {
    const stat = statSync(this.file(name), { bigint: true, throwIfNoEntry: false });
    return stat ? `${stat.ino}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}` : 'absent';
  }

  /** `read` again only when the file changed (`version`). */
  private changedOnly<T>(name: string, read: () => T): () => T {
    let seen: string | undefined;
    let value: T | undefined;
    return () => {
      // Taken before the read: a write between the two is seen as a change at the next call.
      const key = this.version(name);
      if (key !== seen || value === undefined) {
        value = read();
        seen = key;
      }
      return value;
    };
  }

  /** Changes the reviewer page's settings under the file's lock; the result is checked before it is written. */
  updateRemote(change: (current: RemoteConfig) => RemoteConfig): RemoteConfig {
    return this.update(REMOTE_FILE, () => {
      const next = RemoteConfigSchema.parse(change(this.remote()));
      writePrivateFile(this.file(REMOTE_FILE), JSON.stringify(next));
      return next;
    });
  }

  /** Read-modify-write of one file under its lock: without it, two processes each write back what the other removed. */
  private update<T>(name: string, body: () => T): T {
    this.ensure();
    return withFileLock(this.file(name), body);
  }

  private readJson(name: string): unknown {
    this.ensure();
    const text = readPrivateFile(this.file(name));
    if (text === undefined) return undefined;
    try {
      return JSON.parse(text);
    } catch {
      return null;
    }
  }
}

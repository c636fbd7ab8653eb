import { statSync, watch } from 'node:fs';
import { join } from 'node:path';
import * as z from 'zod';
import { PAIRING_CODE_PATTERN, PAIRING_TTL_MINUTES, isKeyHex, randomHex } from '../shared/hub-auth.js';
import { PushSubscriptionSchema, type PushSubscription } from '../shared/push-notice.js';
import { ReviewerNameSchema, ReviewerSchema, sameReviewer, type Reviewer } from '../shared/reviewers.js';
import { readRoutingPolicy, type RoutingRead } from '../shared/routing.js';
import { DeviceNameSchema, GRANTS, GrantSchema, KeyIdSchema, type Grant } from '../shared/wire-fields.js';
import { withFileLock } from './file-lock.js';
import { log } from './log.js';
import { createPrivateFile, ensurePrivateDir, readPrivateFile, writePrivateFile } from './private-files.js';
import type { RemoteConfig } from './remote-config.js';
import { REMOTE_OFF, RemoteConfigSchema } from './remote-config.js';
import { VapidKeysSchema, newVapidKeys, type VapidKeys } from './remote/web-push.js';

const KeySchema = z.string().refine(isKeyHex, 'must be 64 lowercase hex digits');

const PairingSchema = z.strictObject({
  code: z.string().regex(PAIRING_CODE_PATTERN),
  expiresAt: z.number(),
  /** Failed pairing attempts against this code; at the cap it is burnt. */
  failures: z.number().int().min(0),
  /**
   * Counts the codes made for this purpose: the phone's link carries it, so a page holding a code that a newer one
   * replaced is told so rather than that the hub could not prove the code.
   */
  serial: z.number().int().min(1),
  /** Used (it paired) or withdrawn: no longer a code, kept for its serial. */
  spent: z.boolean().optional(),
  /** The reviewer whose browser or phone this code pairs (`pair --reviewer`): its key is theirs. */
  reviewer: ReviewerNameSchema.optional(),
});
type Pairing = z.infer<typeof PairingSchema>;

/**
 * What a pairing code is for: an extension (`pair`, typed into its Settings) or a device (`remote pair`, the phone's
 * QR link). Each purpose has its own code, so making one never voids the other.
 */
export type PairingPurpose = 'extension' | 'device';
/** pairing.json: one code per purpose, each also kept (spent or not) for its serial. */
const PairingsFileSchema = z.strictObject({ extension: PairingSchema.optional(), device: PairingSchema.optional() });
type PairingsFile = z.infer<typeof PairingsFileSchema>;

const PairedExtensionSchema = z.strictObject({
  keyId: KeyIdSchema,
  origin: z.string().min(1).max(200),
  key: KeySchema,
  pairedAt: z.number(),
  /** The reviewer this browser belongs to; absent on a single person's hub. */
  reviewer: ReviewerNameSchema.optional(),
});
type PairedExtension = z.infer<typeof PairedExtensionSchema>;
const PairedFileSchema = z.strictObject({ version: z.literal(1), extensions: z.array(PairedExtensionSchema) });

/**
 * A phone (or any browser) paired with the hub's reviewer page: its own key, named so the person can tell it apart, and
 * the origin it was paired on, the only one its key opens a socket from. Devices paired before origins were recorded
 * have none: their key opens nothing, and they pair again.
 */
const PairedDeviceSchema = z.strictObject({
  keyId: KeyIdSchema,
  name: DeviceNameSchema,
  key: KeySchema,
  pairedAt: z.number(),
  origin: z.string().min(1).max(200).optional(),
  /** Its Web Push subscription, when the person turned notifications on there: forgotten with the device. */
  push: z.strictObject({ subscription: PushSubscriptionSchema, at: z.number() }).optional(),
  /** The reviewer this phone belongs to; absent on a single person's hub. */
  reviewer: ReviewerNameSchema.optional(),
});
export type PairedDevice = z.infer<typeof PairedDeviceSchema>;
const DevicesFileSchema = z.strictObject({ version: z.literal(1), devices: z.array(PairedDeviceSchema) });

/**
 * A key made for a relay on another machine (`key export`), revocable on its own; the install key never leaves. It files
 * and reads its own requests only, and what `allow` names besides (`key export --allow permission`).
 */
const RelayKeySchema = z.strictObject({ keyId: KeyIdSchema, name: DeviceNameSchema, key: KeySchema, createdAt: z.number(), allow: z.array(GrantSchema).max(GRANTS.length).optional() });
export type RelayKey = z.infer<typeof RelayKeySchema>;
const RelayKeysFileSchema = z.strictObject({ version: z.literal(1), keys: z.array(RelayKeySchema) });

const ReviewersFileSchema = z.strictObject({ version: z.literal(1), reviewers: z.array(ReviewerSchema).max(1000) });

export const REVIEWERS_FILE = 'reviewers.json';
/** A team's routing policy (`shared/routing.ts`), written by the team; the hub only reads it. */
export const ROUTING_FILE = 'routing.json';
export const PAIRED_EXTENSIONS_FILE = 'paired-extensions.json';
export const PAIRED_DEVICES_FILE = 'paired-devices.json';
export const RELAY_KEYS_FILE = 'relay-keys.json';
export const REMOTE_FILE = 'remote.json';
export const PUSH_KEYS_FILE = 'push-keys.json';

/** A state file that is a list of keys by id (devices, exported relay keys): its name, shape, and what losing it costs. */
interface KeyList<K extends string, T extends { keyId: string }> {
  name: string;
  schema: z.ZodType<{ version: 1 } & Record<K, T[]>>;
  field: K;
  consequence: string;
}
const DEVICES: KeyList<'devices', PairedDevice> = { name: PAIRED_DEVICES_FILE, schema: DevicesFileSchema, field: 'devices', consequence: 'every phone must pair again' };
const RELAY_KEYS: KeyList<'keys', RelayKey> = { name: RELAY_KEYS_FILE, schema: RelayKeysFileSchema, field: 'keys', consequence: 'every exported relay key is refused until exported again' };

export const PAIRING_TTL_MS = PAIRING_TTL_MINUTES * 60 * 1000;
/** Failed attempts a code survives; the eleventh guess finds no code at all. */
export const PAIRING_MAX_FAILURES = 10;

/**
 * The files of the state dir other than the journal: the install's relay key, the one-time pairing code, and the
 * extensions paired with this install. Every read validates and refuses a file that is not a regular file of this
 * user's, 0600 (a link, a FIFO, a planted file); every write is atomic (temp file, fsync, rename or link), and every
 * read-modify-write holds the file's lock, so concurrent processes never undo each other's change. The dir itself is
 * checked on every use: a real directory of this user's, 0700.
 */
/** What this process's one watcher of the state dir has seen: a count of changes per file name, and of changes to any. */
interface Changes {
  of: Map<string, number>;
  any: number;
}

export class StateDir {
  /** Started by the first watched reader; null when the dir cannot be watched (the readers stat instead). */
  private changes: Changes | null | undefined;

  constructor(readonly path: string) {}

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

  /** The active pairing code for `purpose`, or undefined when there is none (never made, expired, used or burnt). */
  pairing(purpose: PairingPurpose, now = Date.now()): Pairing | undefined {
    const entry = this.pairings()[purpose];
    return entry && !entry.spent && entry.expiresAt > now && entry.failures < PAIRING_MAX_FAILURES ? entry : undefined;
  }

  /** The serial of the newest code made for `purpose` (0: none yet), whether or not it is still active. */
  pairingSerial(purpose: PairingPurpose): number {
    return this.pairings()[purpose]?.serial ?? 0;
  }

  /**
   * A fresh one-time code for `purpose`, valid 10 minutes; it replaces the earlier code of that purpose only. 48 bits:
   * short to type, long to guess.
   */
  createPairing(purpose: PairingPurpose, now = Date.now(), reviewer?: string): Pairing {
    return this.update('pairing.json', () => {
      const all = this.pairings();
      const pairing: Pairing = { code: randomHex(6), expiresAt: now + PAIRING_TTL_MS, failures: 0, serial: (all[purpose]?.serial ?? 0) + 1, ...(reviewer === undefined ? {} : { reviewer }) };
      this.writePairings({ ...all, [purpose]: pairing });
      return pairing;
    });
  }

  /** Counts a wrong guess; at the cap the code is gone for good. Returns how many attempts are left. */
  recordPairingFailure(purpose: PairingPurpose, now = Date.now()): number {
    return this.update('pairing.json', () => {
      const pairing = this.pairing(purpose, now);
      if (!pairing) return 0;
      const failures = pairing.failures + 1;
      this.writePairings({ ...this.pairings(), [purpose]: { ...pairing, failures } });
      if (failures >= PAIRING_MAX_FAILURES) log('warn', 'a pairing code was burnt after too many wrong attempts', { purpose, attempts: failures });
      return Math.max(0, PAIRING_MAX_FAILURES - failures);
    });
  }

  /** Spends the code of `purpose` (it paired, or it is withdrawn); its serial is kept. */
  clearPairing(purpose: PairingPurpose): void {
    this.update('pairing.json', () => {
      const all = this.pairings();
      const entry = all[purpose];
      if (entry) this.writePairings({ ...all, [purpose]: { ...entry, spent: true } });
    });
  }

  /** pairing.json; one of an earlier version (a single code) or a damaged one counts as no code at all. */
  private pairings(): PairingsFile {
    const parsed = PairingsFileSchema.safeParse(this.readJson('pairing.json'));
    return parsed.success ? parsed.data : {};
  }

  private writePairings(pairings: PairingsFile): void {
    writePrivateFile(this.file('pairing.json'), JSON.stringify(PairingsFileSchema.parse(pairings)));
  }

  /** The paired extensions; a damaged file counts as none (every extension pairs again), and says so. */
  pairedExtensions(): PairedExtension[] {
    const raw = this.readJson('paired-extensions.json');
    if (raw === undefined) return [];
    const parsed = PairedFileSchema.safeParse(raw);
    if (parsed.success) return parsed.data.extensions;
    log('error', 'the paired-extensions file is damaged; every browser extension must pair again', { file: this.file('paired-extensions.json') });
    return [];
  }

  /** Pairs an origin with a fresh key. */
  addPairedExtension(origin: string, now = Date.now(), reviewer?: string): PairedExtension {
    const entry: PairedExtension = { keyId: `k_${randomHex(8)}`, origin, key: randomHex(32), pairedAt: now, ...(reviewer === undefined ? {} : { reviewer }) };
    this.update('paired-extensions.json', () => this.writePaired([...this.pairedExtensions(), entry]));
    return entry;
  }

  /** Forgets every key of an origin; returns how many went. */
  removePairedExtensions(origin: string): number {
    return this.update('paired-extensions.json', () => {
      const all = this.pairedExtensions();
      const kept = all.filter((e) => e.origin !== origin);
      if (kept.length !== all.length) this.writePaired(kept);
      return all.length - kept.length;
    });
  }

  private writePaired(extensions: PairedExtension[]): void {
    writePrivateFile(this.file('paired-extensions.json'), JSON.stringify(PairedFileSchema.parse({ version: 1, extensions })));
  }

  /** The paired devices; a damaged file counts as none (every device pairs again), and says so. */
  pairedDevices(): PairedDevice[] {
    return this.readList(DEVICES);
  }

  addPairedDevice(name: string, origin: string, now = Date.now(), reviewer?: string): PairedDevice {
    return this.append(DEVICES, { keyId: `k_${randomHex(8)}`, name, key: randomHex(32), pairedAt: now, origin, ...(reviewer === undefined ? {} : { reviewer }) });
  }

  /** Forgets one device by its key id; false when there was none. */
  removePairedDevice(keyId: string): boolean {
    return this.removeKey(DEVICES, keyId);
  }

  /**
   * Sets (or, with null, drops) a device's push subscription; false when the device is not paired (any more), or, with
   * `onlyEndpoint`, when its subscription is no longer that one (the page renewed it meanwhile).
   */
  setDevicePush(keyId: string, subscription: PushSubscription | null, options: { onlyEndpoint?: string; now?: number } = {}): boolean {
    const now = options.now ?? Date.now();
    return this.update(DEVICES.name, () => {
      const all = this.readList(DEVICES);
      const device = all.find((d) => d.keyId === keyId);
      if (!device) return false;
      if (options.onlyEndpoint !== undefined && device.push?.subscription.endpoint !== options.onlyEndpoint) return false;
      const { push: _old, ...rest } = device;
      const next: PairedDevice = subscription ? { ...rest, push: { subscription, at: now } } : rest;
      this.writeList(DEVICES, all.map((d) => (d === device ? next : d)));
      return true;
    });
  }

  /** The hub's VAPID key pair for Web Push, made on first use and kept (a new one would void every subscription). */
  vapidKeys(): VapidKeys {
    return this.update(PUSH_KEYS_FILE, () => {
      const raw = this.readJson(PUSH_KEYS_FILE);
      if (raw !== undefined) {
        const parsed = VapidKeysSchema.safeParse(raw);
        if (parsed.success) return parsed.data;
        log('error', `the file ${PUSH_KEYS_FILE} is damaged; a new key is made and every phone turns its notifications on again`, { file: this.file(PUSH_KEYS_FILE) });
      }
      const keys = newVapidKeys();
      writePrivateFile(this.file(PUSH_KEYS_FILE), JSON.stringify(keys));
      return keys;
    });
  }

  /** Keys exported for relays on other machines; a damaged file counts as none (they are refused until exported again). */
  relayKeys(): RelayKey[] {
    return this.readList(RELAY_KEYS);
  }

  addRelayKey(name: string, allow: readonly Grant[] = [], now = Date.now()): RelayKey {
    return this.append(RELAY_KEYS, { keyId: `k_${randomHex(8)}`, name, key: randomHex(32), createdAt: now, ...(allow.length > 0 ? { allow: [...new Set(allow)] } : {}) });
  }

  /** Revokes one exported relay key by its id; false when there was none. */
  removeRelayKey(keyId: string): boolean {
    return this.removeKey(RELAY_KEYS, keyId);
  }

  private append<K extends string, T extends { keyId: string }>(list: KeyList<K, T>, entry: T): T {
    this.update(list.name, () => this.writeList(list, [...this.readList(list), entry]));
    return entry;
  }

  private removeKey<K extends string, T extends { keyId: string }>(list: KeyList<K, T>, keyId: string): boolean {
    return this.update(list.name, () => {
      const all = this.readList(list);
      const kept = all.filter((entry) => entry.keyId !== keyId);
      if (kept.length !== all.length) this.writeList(list, kept);
      return kept.length !== all.length;
    });
  }

  private writeList<K extends string, T extends { keyId: string }>(list: KeyList<K, T>, entries: T[]): void {
    writePrivateFile(this.file(list.name), JSON.stringify(list.schema.parse({ version: 1, [list.field]: entries })));
  }

  /** The team's reviewers; none on a single person's hub. A damaged file counts as none, and says so. */
  reviewers(): Reviewer[] {
    const raw = this.readJson(REVIEWERS_FILE);
    if (raw === undefined) return [];
    const parsed = ReviewersFileSchema.safeParse(raw);
    if (parsed.success) return parsed.data.reviewers;
    log('error', 'the reviewers file is damaged; decisions are recorded without names until `elicitly-companion reviewer add`', { file: this.file(REVIEWERS_FILE) });
    return [];
  }

  /** Adds a reviewer, or sets the groups of one already there (names differ in case only: one person). */
  putReviewer(name: string, groups: string[], now = Date.now()): { reviewer: Reviewer; added: boolean } {
    return this.update(REVIEWERS_FILE, () => {
      const all = this.reviewers();
      const existing = all.find((r) => sameReviewer(r.name, name));
      const reviewer: Reviewer = { name: existing?.name ?? name, groups: [...new Set(groups)].sort(), addedAt: existing?.addedAt ?? now };
      const next = existing ? all.map((r) => (r === existing ? reviewer : r)) : [...all, reviewer];
      this.writeReviewers(next);
      return { reviewer, added: existing === undefined };
    });
  }

  /**
   * Removes a reviewer and forgets every browser and phone paired for them (the hub cuts their sockets when the files
   * change): someone who left the team decides nothing more. Null when there was no such reviewer.
   */
  removeReviewer(name: string): { extensions: number; devices: number } | null {
    const removed = this.update(REVIEWERS_FILE, () => {
      const all = this.reviewers();
      const kept = all.filter((r) => !sameReviewer(r.name, name));
      if (kept.length === all.length) return false;
      this.writeReviewers(kept);
      return true;
    });
    if (!removed) return null;
    const theirs = (entry: { reviewer?: string | undefined }) => entry.reviewer !== undefined && sameReviewer(entry.reviewer, name);
    const extensions = this.update(PAIRED_EXTENSIONS_FILE, () => {
      const all = this.pairedExtensions();
      const kept = all.filter((e) => !theirs(e));
      if (kept.length !== all.length) this.writePaired(kept);
      return all.length - kept.length;
    });
    const devices = this.update(DEVICES.name, () => {
      const all = this.readList(DEVICES);
      const kept = all.filter((d) => !theirs(d));
      if (kept.length !== all.length) this.writeList(DEVICES, kept);
      return all.length - kept.length;
    });
    return { extensions, devices };
  }

  private writeReviewers(reviewers: Reviewer[]): void {
    writePrivateFile(this.file(REVIEWERS_FILE), JSON.stringify(ReviewersFileSchema.parse({ version: 1, reviewers })));
  }

  /** Whose a paired key is: the reviewer its browser or phone was paired for, if any. */
  reviewerOf(keyId: string): string | undefined {
    return (this.pairedExtensions().find((e) => e.keyId === keyId) ?? this.pairedDevices().find((d) => d.keyId === keyId))?.reviewer;
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

  /** `pairedDevices()` for the notifier, which asks at every new request: read again only when the file changed. */
  pairedDevicesReader(): () => PairedDevice[] {
    return this.changedOnly(PAIRED_DEVICES_FILE, () => this.pairedDevices());
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

  private readList<K extends string, T extends { keyId: string }>(list: KeyList<K, T>): T[] {
    const raw = this.readJson(list.name);
    if (raw === undefined) return [];
    const parsed = list.schema.safeParse(raw);
    if (parsed.success) return parsed.data[list.field];
    log('error', `the file ${list.name} is damaged; ${list.consequence}`, { file: this.file(list.name) });
    return [];
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

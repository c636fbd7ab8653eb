// The hub's directory: who may connect and who they are. The pairing codes, the paired browsers and phones, the keys
// exported for relays on other machines, the team's reviewers and the hub's Web Push key. One person's hub keeps it in
// its state dir (state-dir.ts, a file per document); a team's hubs keep it in their database (store/pg-directory.ts,
// a row per document), so a browser paired through one hub opens every hub, and a key revoked on one is refused by
// all. Both hold the same documents, validated by the same schemas and changed by the same edits (the pure functions
// here): a store only decides how a document is read and how a change lands over the version it was made from.
import * as z from 'zod';
import { PAIRING_CODE_PATTERN, PAIRING_TTL_MINUTES, isKeyHex, randomHex } from '../shared/hub-auth.js';
import { PushSubscriptionSchema, type PushSubscription } from '../shared/push-notice.js';
import { ReviewerNameSchema, ReviewerSchema, sameReviewer, type Reviewer } from '../shared/reviewers.js';
import type { RoutingPolicy, RoutingRead } from '../shared/routing.js';
import { DeviceNameSchema, GRANTS, GrantSchema, KeyIdSchema, type Grant } from '../shared/wire-fields.js';
import { VapidKeysSchema, newVapidKeys, type VapidKeys } from './remote/web-push.js';
import { ledgerKeyOf, newLedgerKeyPem } from './ledger/ledger-key.js';
import type { LedgerKey } from './ledger/ledger-store.js';

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
export type Pairing = z.infer<typeof PairingSchema>;

/**
 * What a pairing code is for: an extension (`pair`, typed into its Settings) or a device (`remote pair`, the phone's
 * QR link). Each purpose has its own code, so making one never voids the other.
 */
export type PairingPurpose = 'extension' | 'device';
/** One code per purpose, each also kept (spent or not) for its serial. */
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
export type PairedExtension = z.infer<typeof PairedExtensionSchema>;
const PairedFileSchema = z.strictObject({ version: z.literal(1), extensions: z.array(PairedExtensionSchema) });
type PairedFile = z.infer<typeof PairedFileSchema>;

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
type DevicesFile = z.infer<typeof DevicesFileSchema>;

/**
 * A key made for a relay on another machine (`key export`), revocable on its own; the install key never leaves. It files
 * and reads its own requests only, and what `allow` names besides (`key export --allow permission`).
 */
const RelayKeySchema = z.strictObject({ keyId: KeyIdSchema, name: DeviceNameSchema, key: KeySchema, createdAt: z.number(), allow: z.array(GrantSchema).max(GRANTS.length).optional() });
export type RelayKey = z.infer<typeof RelayKeySchema>;
const RelayKeysFileSchema = z.strictObject({ version: z.literal(1), keys: z.array(RelayKeySchema) });
type RelayKeysFile = z.infer<typeof RelayKeysFileSchema>;

const ReviewersFileSchema = z.strictObject({ version: z.literal(1), reviewers: z.array(ReviewerSchema).max(1000) });
type ReviewersFile = z.infer<typeof ReviewersFileSchema>;

export const PAIRING_TTL_MS = PAIRING_TTL_MINUTES * 60 * 1000;
/** Failed attempts a code survives; the eleventh guess finds no code at all. */
export const PAIRING_MAX_FAILURES = 10;

/**
 * One document of the directory: its name (the file's in a state dir, the row's in a database), its schema, what it is
 * when there is none, and what a damaged one costs (said in the log; a damaged pairing file is just no code).
 */
export interface Doc<D> {
  name: string;
  schema: z.ZodType<D>;
  empty: D;
  damaged?: string;
}

export const PAIRINGS: Doc<PairingsFile> = { name: 'pairing.json', schema: PairingsFileSchema, empty: {} };
export const EXTENSIONS: Doc<PairedFile> = { name: 'paired-extensions.json', schema: PairedFileSchema, empty: { version: 1, extensions: [] }, damaged: 'every browser extension must pair again' };
export const DEVICES: Doc<DevicesFile> = { name: 'paired-devices.json', schema: DevicesFileSchema, empty: { version: 1, devices: [] }, damaged: 'every phone must pair again' };
export const RELAY_KEYS: Doc<RelayKeysFile> = { name: 'relay-keys.json', schema: RelayKeysFileSchema, empty: { version: 1, keys: [] }, damaged: 'every exported relay key is refused until exported again' };
export const REVIEWERS: Doc<ReviewersFile> = {
  name: 'reviewers.json',
  schema: ReviewersFileSchema,
  empty: { version: 1, reviewers: [] },
  damaged: 'decisions are recorded without names until `elicitly-companion reviewer add`',
};
export const PUSH_KEYS: Doc<VapidKeys | null> = { name: 'push-keys.json', schema: VapidKeysSchema, empty: null, damaged: 'a new key is made and every phone turns its notifications on again' };
/**
 * The team's ledger signing key (Ed25519, PKCS#8 PEM): a database's directory only, where every hub signs the one chain
 * with it. A state dir keeps its hub's key in its own file (`ledger/ledger-key.ts`).
 */
export const LedgerKeyDocSchema = z.strictObject({ version: z.literal(1), pem: z.string().min(1).max(1000).refine((pem) => ledgerKeyOf(pem) !== null, 'an Ed25519 private key (PKCS#8 PEM)') });
export const LEDGER_KEY: Doc<z.infer<typeof LedgerKeyDocSchema> | null> = { name: 'ledger-key.json', schema: LedgerKeyDocSchema, empty: null, damaged: 'checkpoints are signed by a new key from then on: pin it again with `audit key`' };

/**
 * The team's routing policy (`shared/routing.ts`): a document too, but read its own way. A policy that does not parse is
 * never "none": nothing is filed until it is fixed, so a damaged policy cannot route a production deploy to everyone.
 */
export const ROUTING = 'routing.json';

/** Every document a directory holds, by name. */
export const DOCS: readonly Doc<unknown>[] = [PAIRINGS, EXTENSIONS, DEVICES, RELAY_KEYS, REVIEWERS, PUSH_KEYS, LEDGER_KEY];
export const DOC_NAMES: ReadonlySet<string> = new Set([...DOCS.map((d) => d.name), ROUTING]);

/** A change to one document: the document to write (none: nothing changes) and what the caller is answered. */
export type Edit<D, T> = (current: D) => { next?: D; result: T };

/** A write that may land on disk at once (a state dir) or over the network (a database). */
export type Maybe<T> = T | Promise<T>;

/**
 * The directory as the hub, its handshake and the commands use it. Reads answer from what the store holds now (a state
 * dir reads its file; a database's store holds every row in memory, kept by its notifications); writes land over the
 * version they were made from, so two processes never undo each other's change.
 */
export interface Directory {
  pairing(purpose: PairingPurpose, now?: number): Pairing | undefined;
  pairingSerial(purpose: PairingPurpose): number;
  createPairing(purpose: PairingPurpose, now?: number, reviewer?: string): Maybe<Pairing>;
  recordPairingFailure(purpose: PairingPurpose, now?: number): Maybe<number>;
  /** Spends the code of `purpose` (only if it is still `code`, when given); true when this call spent an active code. */
  clearPairing(purpose: PairingPurpose, code?: string): Maybe<boolean>;
  pairedExtensions(): PairedExtension[];
  addPairedExtension(origin: string, now?: number, reviewer?: string): Maybe<PairedExtension>;
  removePairedExtensions(origin: string): Maybe<number>;
  pairedDevices(): PairedDevice[];
  /** `pairedDevices()` for a caller that asks at every request (the notifier): read again only when it changed. */
  pairedDevicesReader(): () => PairedDevice[];
  addPairedDevice(name: string, origin: string, now?: number, reviewer?: string): Maybe<PairedDevice>;
  removePairedDevice(keyId: string): Maybe<boolean>;
  setDevicePush(keyId: string, subscription: PushSubscription | null, options?: { onlyEndpoint?: string; now?: number }): Maybe<boolean>;
  vapidKeys(): Maybe<VapidKeys>;
  /** The key that signs the ledger's checkpoints: the state dir's hub's, or the team's (one for every hub of a database). */
  ledgerKey(): Maybe<LedgerKey>;
  relayKeys(): RelayKey[];
  addRelayKey(name: string, allow?: readonly Grant[], now?: number): Maybe<RelayKey>;
  removeRelayKey(keyId: string): Maybe<boolean>;
  reviewers(): Reviewer[];
  putReviewer(name: string, groups: string[], now?: number): Maybe<{ reviewer: Reviewer; added: boolean }>;
  removeReviewer(name: string): Maybe<{ extensions: number; devices: number } | null>;
  reviewerOf(keyId: string): string | undefined;
  /** The team's routing policy as it is now; a damaged one is a problem, never "none". */
  routing(): RoutingRead;
  /** `routing()` for the engine, which asks at every create: read again only when it changed, a problem logged once. */
  routingReader(): () => RoutingRead;
  /** Replaces the routing policy (`routing set`), checked before it is written. */
  setRouting(policy: RoutingPolicy): Maybe<void>;
  /**
   * Calls `listener` with the name of each document that changed (null: any may have), whoever changed it, and
   * `stopped` if it can no longer tell; null when changes cannot be watched (the readers then read at each use).
   * Returns how to stop.
   */
  watch(listener: (name: string | null) => void, stopped?: () => void): (() => void) | null;
  /** What tells a document's versions apart without reading it. */
  stamp(name: string): string;
  /** Reads again what another process may have changed a moment ago (a miss at the handshake); nothing for a state dir. */
  catchUp(): Promise<void>;
}

/** The reads, written once over a store's `read`. */
export abstract class DirectoryReads {
  protected abstract read<D>(doc: Doc<D>): D;

  /** The active pairing code for `purpose`, or undefined when there is none (never made, expired, used or burnt). */
  pairing(purpose: PairingPurpose, now = Date.now()): Pairing | undefined {
    return activePairing(this.read(PAIRINGS)[purpose], now, this.failuresInFlight(purpose));
  }

  /** Wrong guesses counted but not yet written (a database's round trip): they burn a code as the written ones do. */
  protected failuresInFlight(_purpose: PairingPurpose): number {
    return 0;
  }

  /** The serial of the newest code made for `purpose` (0: none yet), whether or not it is still active. */
  pairingSerial(purpose: PairingPurpose): number {
    return this.read(PAIRINGS)[purpose]?.serial ?? 0;
  }

  /** The paired extensions; a damaged document counts as none (every extension pairs again), and says so. */
  pairedExtensions(): PairedExtension[] {
    return this.read(EXTENSIONS).extensions;
  }

  pairedDevices(): PairedDevice[] {
    return this.read(DEVICES).devices;
  }

  /** Keys exported for relays on other machines; a damaged document counts as none (refused until exported again). */
  relayKeys(): RelayKey[] {
    return this.read(RELAY_KEYS).keys;
  }

  /** The team's reviewers; none on a single person's hub. */
  reviewers(): Reviewer[] {
    return this.read(REVIEWERS).reviewers;
  }

  /** Whose a paired key is: the reviewer its browser or phone was paired for, if any. */
  reviewerOf(keyId: string): string | undefined {
    return (this.pairedExtensions().find((e) => e.keyId === keyId) ?? this.pairedDevices().find((d) => d.keyId === keyId))?.reviewer;
  }
}

function activePairing(entry: Pairing | undefined, now: number, inFlight: number): Pairing | undefined {
  return entry && !entry.spent && entry.expiresAt > now && entry.failures + inFlight < PAIRING_MAX_FAILURES ? entry : undefined;
}

const newKeyId = () => `k_${randomHex(8)}`;
/** A browser or phone paired for `name` (`reviewer remove` forgets them with the reviewer). */
export const theirs = (name: string) => (entry: { reviewer?: string | undefined }) => entry.reviewer !== undefined && sameReviewer(entry.reviewer, name);

/** The changes a directory makes, each a pure function of the document it is made over (randomness aside). */
export const edits = {
  /** A fresh one-time code for `purpose`, valid 10 minutes, replacing that purpose's earlier one. 48 bits: short to type, long to guess. */
  createPairing:
    (purpose: PairingPurpose, now: number, reviewer: string | undefined): Edit<PairingsFile, Pairing> =>
    (all) => {
      const pairing: Pairing = { code: randomHex(6), expiresAt: now + PAIRING_TTL_MS, failures: 0, serial: (all[purpose]?.serial ?? 0) + 1, ...(reviewer === undefined ? {} : { reviewer }) };
      return { next: { ...all, [purpose]: pairing }, result: pairing };
    },
  /** Counts a wrong guess; at the cap the code is gone for good. Answers how many attempts are left. */
  recordPairingFailure:
    (purpose: PairingPurpose, now: number): Edit<PairingsFile, number> =>
    (all) => {
      const pairing = activePairing(all[purpose], now, 0);
      if (!pairing) return { result: 0 };
      const failures = pairing.failures + 1;
      return { next: { ...all, [purpose]: { ...pairing, failures } }, result: Math.max(0, PAIRING_MAX_FAILURES - failures) };
    },
  clearPairing:
    (purpose: PairingPurpose, code: string | undefined, now: number): Edit<PairingsFile, boolean> =>
    (all) => {
      const entry = all[purpose];
      // Another code (a newer one) is not this pairing's to spend.
      if (!entry || entry.spent || (code !== undefined && entry.code !== code)) return { result: false };
      return { next: { ...all, [purpose]: { ...entry, spent: true } }, result: activePairing(entry, now, 0) !== undefined };
    },
  addExtension:
    (origin: string, now: number, reviewer: string | undefined): Edit<PairedFile, PairedExtension> =>
    (file) => {
      const entry: PairedExtension = { keyId: newKeyId(), origin, key: randomHex(32), pairedAt: now, ...(reviewer === undefined ? {} : { reviewer }) };
      return { next: { version: 1, extensions: [...file.extensions, entry] }, result: entry };
    },
  /** Forgets every browser `which` picks (an origin's keys, a reviewer's who left); answers how many went. */
  dropExtensions:
    (which: (entry: PairedExtension) => boolean): Edit<PairedFile, number> =>
    (file) => {
      const kept = file.extensions.filter((e) => !which(e));
      const gone = file.extensions.length - kept.length;
      return gone > 0 ? { next: { version: 1, extensions: kept }, result: gone } : { result: 0 };
    },
  addDevice:
    (name: string, origin: string, now: number, reviewer: string | undefined): Edit<DevicesFile, PairedDevice> =>
    (file) => {
      const entry: PairedDevice = { keyId: newKeyId(), name, key: randomHex(32), pairedAt: now, origin, ...(reviewer === undefined ? {} : { reviewer }) };
      return { next: { version: 1, devices: [...file.devices, entry] }, result: entry };
    },
  /** Forgets every device `which` picks (one by its key id, a reviewer's who left); answers how many went. */
  dropDevices:
    (which: (entry: PairedDevice) => boolean): Edit<DevicesFile, number> =>
    (file) => {
      const kept = file.devices.filter((d) => !which(d));
      const gone = file.devices.length - kept.length;
      return gone > 0 ? { next: { version: 1, devices: kept }, result: gone } : { result: 0 };
    },
  /**
   * Sets (or, with null, drops) a device's push subscription; false when the device is not paired (any more), or, with
   * `onlyEndpoint`, when its subscription is no longer that one (the page renewed it meanwhile).
   */
  setDevicePush:
    (keyId: string, subscription: PushSubscription | null, options: { onlyEndpoint?: string; now?: number }): Edit<DevicesFile, boolean> =>
    (file) => {
      const device = file.devices.find((d) => d.keyId === keyId);
      if (!device) return { result: false };
      if (options.onlyEndpoint !== undefined && device.push?.subscription.endpoint !== options.onlyEndpoint) return { result: false };
      const { push: _old, ...rest } = device;
      const next: PairedDevice = subscription ? { ...rest, push: { subscription, at: options.now ?? Date.now() } } : rest;
      return { next: { version: 1, devices: file.devices.map((d) => (d === device ? next : d)) }, result: true };
    },
  /** The team's ledger signing key, made on first use and kept (a new one is another key to pin). */
  ledgerKey: (): Edit<z.infer<typeof LedgerKeyDocSchema> | null, string> => (current) => {
    if (current) return { result: current.pem };
    const pem = newLedgerKeyPem();
    return { next: { version: 1, pem }, result: pem };
  },
  /** The hub's VAPID key pair for Web Push, made on first use and kept (a new one would void every subscription). */
  vapidKeys: (): Edit<VapidKeys | null, VapidKeys> => (current) => {
    if (current) return { result: current };
    const keys = newVapidKeys();
    return { next: keys, result: keys };
  },
  addRelayKey:
    (name: string, allow: readonly Grant[], now: number): Edit<RelayKeysFile, RelayKey> =>
    (file) => {
      const entry: RelayKey = { keyId: newKeyId(), name, key: randomHex(32), createdAt: now, ...(allow.length > 0 ? { allow: [...new Set(allow)] } : {}) };
      return { next: { version: 1, keys: [...file.keys, entry] }, result: entry };
    },
  removeRelayKey:
    (keyId: string): Edit<RelayKeysFile, boolean> =>
    (file) => {
      const kept = file.keys.filter((k) => k.keyId !== keyId);
      return kept.length !== file.keys.length ? { next: { version: 1, keys: kept }, result: true } : { result: false };
    },
  /** Adds a reviewer, or sets the groups of one already there (names differ in case only: one person). */
  putReviewer:
    (name: string, groups: string[], now: number): Edit<ReviewersFile, { reviewer: Reviewer; added: boolean }> =>
    (file) => {
      const existing = file.reviewers.find((r) => sameReviewer(r.name, name));
      const reviewer: Reviewer = { name: existing?.name ?? name, groups: [...new Set(groups)].sort(), addedAt: existing?.addedAt ?? now };
      const next = existing ? file.reviewers.map((r) => (r === existing ? reviewer : r)) : [...file.reviewers, reviewer];
      return { next: { version: 1, reviewers: next }, result: { reviewer, added: existing === undefined } };
    },
  removeReviewer:
    (name: string): Edit<ReviewersFile, boolean> =>
    (file) => {
      const kept = file.reviewers.filter((r) => !sameReviewer(r.name, name));
      return kept.length !== file.reviewers.length ? { next: { version: 1, reviewers: kept }, result: true } : { result: false };
    },
};

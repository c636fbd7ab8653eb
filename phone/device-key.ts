import * as z from 'zod';
import { importHubSecret } from '../shared/hub-auth.js';
import { HubKeySchema, type HubKey } from '../kit/rows/settings-schema.js';

/**
 * The key the hub handed this phone when it paired, kept in the page's IndexedDB (per origin, so a phone that reaches
 * the hub through two addresses pairs once for each) as an HMAC key that cannot be exported: the page and its service
 * worker (which decides from a notification) make proofs with it, and nothing can read it back. Read through its
 * schema: a damaged or foreign value counts as none (the page asks to pair), which is the safe way to fail.
 */
export interface DeviceCredential {
  keyId: string;
  key: CryptoKey;
  /** The hub's port and the page's origin the key was paired for: every proof is bound to both. */
  hubPort: number;
  origin: string;
}

const DB_NAME = 'elicitly-phone';
const STORE = 'device';
const ENTRY = 'key';
/** Where earlier versions kept the key's text (localStorage): moved into IndexedDB, then removed. */
export const LEGACY_KEY_ITEM = 'elicitly.device';

const StoredSchema = z.strictObject({
  keyId: HubKeySchema.shape.keyId,
  key: z.custom<CryptoKey>((value) => typeof CryptoKey !== 'undefined' && value instanceof CryptoKey && value.algorithm.name === 'HMAC' && value.usages.includes('sign')),
  hubPort: z.number().int().min(1).max(65535),
  origin: z.string().min(1).max(200),
});

/** What the page needs of localStorage for the move; tests hand in a Map-backed one. */
export type LegacyStorage = Pick<Storage, 'getItem' | 'removeItem'>;

function request<T>(req: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error ?? new Error('IndexedDB request failed'));
  });
}

function open(idb: IDBFactory): Promise<IDBDatabase> {
  const req = idb.open(DB_NAME, 1);
  req.onupgradeneeded = () => req.result.createObjectStore(STORE);
  return request(req);
}

async function inStore<T>(idb: IDBFactory, mode: IDBTransactionMode, run: (store: IDBObjectStore) => IDBRequest<T>): Promise<T> {
  const db = await open(idb);
  try {
    const tx = db.transaction(STORE, mode);
    const result = await request(run(tx.objectStore(STORE)));
    await new Promise<void>((resolve, reject) => {
      tx.oncomplete = () => resolve();
      tx.onerror = () => reject(tx.error ?? new Error('IndexedDB transaction failed'));
      tx.onabort = () => reject(tx.error ?? new Error('IndexedDB transaction aborted'));
    });
    return result;
  } finally {
    db.close();
  }
}

/** Imports a key's text as a non-extractable key and keeps it, replacing any other. */
export async function saveDeviceKey(idb: IDBFactory, key: HubKey, where: { hubPort: number; origin: string }): Promise<DeviceCredential> {
  const checked = HubKeySchema.parse(key);
  const credential: DeviceCredential = { keyId: checked.keyId, key: await importHubSecret(checked.key), ...where };
  await inStore(idb, 'readwrite', (store) => store.put(credential, ENTRY));
  return credential;
}

function readLegacy(storage: LegacyStorage): string | null {
  try {
    return storage.getItem(LEGACY_KEY_ITEM);
  } catch {
    return null;
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The kept key, or null. A key an earlier version left in localStorage is moved here first (for the page's own port
 * and origin), then removed from there; the worker passes no `legacy` and only reads.
 */
export async function loadDeviceKey(idb: IDBFactory, legacy?: { storage: LegacyStorage; hubPort: number; origin: string }): Promise<DeviceCredential | null> {
  if (legacy) {
    const raw = readLegacy(legacy.storage);
    if (raw !== null) {
      const parsed = HubKeySchema.safeParse(parseJson(raw));
      if (parsed.success) await saveDeviceKey(idb, parsed.data, { hubPort: legacy.hubPort, origin: legacy.origin });
      legacy.storage.removeItem(LEGACY_KEY_ITEM);
    }
  }
  const stored = StoredSchema.safeParse(await inStore(idb, 'readonly', (store) => store.get(ENTRY)));
  return stored.success ? stored.data : null;
}

export async function clearDeviceKey(idb: IDBFactory): Promise<void> {
  await inStore(idb, 'readwrite', (store) => store.delete(ENTRY));
}

/**
 * The page's key store: loaded once (moving a legacy key), then read from memory, so a connection can start within
 * ensure(); a new key is kept in IndexedDB before the pairing's welcome is applied.
 */
export async function openKeyStore(
  idb: IDBFactory,
  where: { hubPort: number; origin: string },
  options: { legacy?: LegacyStorage; log?: (message: string) => void } = {},
): Promise<{ read(): { keyId: string; key: CryptoKey } | null; write(key: HubKey): Promise<void>; clear(): void }> {
  const log = options.log ?? (() => undefined);
  let current = await loadDeviceKey(idb, options.legacy ? { storage: options.legacy, ...where } : undefined).catch((error: unknown) => {
    log(`the key kept on this phone could not be read: ${String(error)}`);
    return null;
  });
  // A key paired for another port or origin proves nothing here.
  if (current && (current.hubPort !== where.hubPort || current.origin !== where.origin)) current = null;
  return {
    read: () => (current ? { keyId: current.keyId, key: current.key } : null),
    write: async (key) => {
      current = await saveDeviceKey(idb, key, where);
    },
    clear: () => {
      current = null;
      clearDeviceKey(idb).catch((error: unknown) => log(`the key could not be removed from this phone: ${String(error)}`));
    },
  };
}

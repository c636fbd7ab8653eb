import { HubKeySchema, type HubKey } from '../extension/db/settings-schema.js';

/**
 * The key the hub handed this phone when it paired, kept in the page's localStorage: per origin, so a phone that
 * reaches the hub through two addresses (a tunnel and loopback) pairs once for each. Read through its schema: a
 * damaged or foreign value counts as none (the page asks to pair), which is the safe way to fail.
 */
export const DEVICE_KEY_ITEM = 'elicitly.device';

/** What the page needs of localStorage; tests hand in a Map-backed one. */
export type KeyStorage = Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>;

export function readDeviceKey(storage: KeyStorage): HubKey | null {
  let raw: string | null;
  try {
    raw = storage.getItem(DEVICE_KEY_ITEM);
  } catch {
    return null;
  }
  if (raw === null) return null;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return null;
  }
  const parsed = HubKeySchema.safeParse(value);
  return parsed.success ? parsed.data : null;
}

export function writeDeviceKey(storage: KeyStorage, key: HubKey): void {
  storage.setItem(DEVICE_KEY_ITEM, JSON.stringify(HubKeySchema.parse(key)));
}

export function clearDeviceKey(storage: KeyStorage): void {
  storage.removeItem(DEVICE_KEY_ITEM);
}

// Issue 35, part 1: the phone's key moves where its service worker can use it, as a key that cannot be read back.
import { IDBFactory } from 'fake-indexeddb';
import { describe, expect, it } from 'vitest';
import { LEGACY_KEY_ITEM, clearDeviceKey, loadDeviceKey, openKeyStore, saveDeviceKey } from '../../phone/device-key.js';
import { hubProof } from '../../shared/hub-auth.js';

const KEY = { keyId: 'k_0123456789abcdef', key: 'ab'.repeat(32) };
const WHERE = { hubPort: 17391, origin: 'http://127.0.0.1:17391' };
const BINDING = { port: 17391, role: 'device' as const, origin: WHERE.origin };

function legacyStorage(value: string | null) {
  const items = new Map<string, string>(value === null ? [] : [[LEGACY_KEY_ITEM, value]]);
  return { items, storage: { getItem: (k: string) => items.get(k) ?? null, removeItem: (k: string) => void items.delete(k) } };
}

describe('the device key in IndexedDB', () => {
  it('is kept non-extractable and proves exactly as its text does', async () => {
    const idb = new IDBFactory();
    await saveDeviceKey(idb, KEY, WHERE);
    const kept = await loadDeviceKey(idb);
    expect(kept).toMatchObject({ keyId: KEY.keyId, ...WHERE });
    expect(kept?.key.extractable).toBe(false);
    if (!kept) throw new Error('no key');
    expect(await hubProof(kept.key, BINDING, 'a'.repeat(64), 'b'.repeat(64))).toBe(await hubProof(KEY.key, BINDING, 'a'.repeat(64), 'b'.repeat(64)));
    await clearDeviceKey(idb);
    expect(await loadDeviceKey(idb)).toBeNull();
  });

  it('a key an older page kept in localStorage is moved once and removed from there; a damaged one is only removed', async () => {
    const idb = new IDBFactory();
    const legacy = legacyStorage(JSON.stringify(KEY));
    expect((await loadDeviceKey(idb, { storage: legacy.storage, ...WHERE }))?.keyId).toBe(KEY.keyId);
    expect(legacy.items.size).toBe(0);
    expect((await loadDeviceKey(idb))?.keyId).toBe(KEY.keyId);

    const other = new IDBFactory();
    const damaged = legacyStorage('{"keyId":"x"');
    expect(await loadDeviceKey(other, { storage: damaged.storage, ...WHERE })).toBeNull();
    expect(damaged.items.size).toBe(0);
  });

  it('the store the page uses forgets a key made for another port or origin, and keeps a new one before it answers', async () => {
    const idb = new IDBFactory();
    await saveDeviceKey(idb, KEY, { hubPort: 1234, origin: WHERE.origin });
    const store = await openKeyStore(idb, WHERE);
    expect(store.read()).toBeNull();
    await store.write(KEY);
    expect(store.read()?.keyId).toBe(KEY.keyId);
    expect((await loadDeviceKey(idb))?.hubPort).toBe(WHERE.hubPort);
    store.clear();
    expect(store.read()).toBeNull();
  });
});

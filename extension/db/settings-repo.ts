import type { ElicitlyDb } from './database.js';
import { ConnectionStateSchema, type ConnectionState } from '../../kit/rows/rows.js';
import { DEFAULT_SETTINGS, SettingsSchema, type HubKey, type Settings } from '../../kit/rows/settings-schema.js';

/** Stored settings that do not fit read as the defaults. */
export function parseSettings(raw: unknown): Settings {
  const parsed = SettingsSchema.safeParse(raw);
  return parsed.success ? parsed.data : DEFAULT_SETTINGS;
}

export async function readSettings(db: ElicitlyDb): Promise<Settings> {
  return parseSettings((await db.settings.get('current'))?.value);
}

/**
 * Changes only the fields `change` returns (nothing when it returns null), read and written in one transaction: the
 * background and a page that write at the same moment each keep their own change.
 */
async function updateSettings(db: ElicitlyDb, change: (current: Settings) => Partial<Settings> | null): Promise<Settings> {
  return db.transaction('rw', db.settings, async () => {
    const current = parseSettings((await db.settings.get('current'))?.value);
    const patch = change(current);
    if (!patch) return current;
    const next = SettingsSchema.parse({ ...current, ...patch });
    await db.settings.put({ key: 'current', value: next });
    return next;
  });
}

/** With `only`, nothing is written unless the stored settings still pass it. */
export async function patchSettings(db: ElicitlyDb, patch: Partial<Settings>, only?: (current: Settings) => boolean): Promise<Settings> {
  return updateSettings(db, (current) => (only && !only(current) ? null : patch));
}

/**
 * The hub on `port` paired this browser: its key is kept for that port, and the code that was spent is forgotten —
 * unless the person has typed another one meanwhile.
 */
export async function savePairing(db: ElicitlyDb, port: number, key: HubKey, spentCode: string): Promise<void> {
  await updateSettings(db, (current) => ({
    hubKeys: { ...current.hubKeys, [String(port)]: key },
    ...(current.pairingCode === spentCode ? { pairingCode: '' } : {}),
  }));
}

/** A code the hub refused (or that could not be verified) is forgotten: trying it again only burns the hub's attempts. */
export async function forgetPairingCode(db: ElicitlyDb, code: string): Promise<void> {
  await patchSettings(db, { pairingCode: '' }, (current) => current.pairingCode === code);
}

/** The hub no longer knows this key: it is dropped, unless a new pairing replaced it meanwhile. */
export async function forgetHubKey(db: ElicitlyDb, port: number, keyId: string): Promise<void> {
  await updateSettings(db, (current) => {
    if (current.hubKeys[String(port)]?.keyId !== keyId) return null;
    const { [String(port)]: _gone, ...rest } = current.hubKeys;
    return { hubKeys: rest };
  });
}

/** A stored connection state that does not fit is none. */
export function parseConnection(raw: unknown): ConnectionState | undefined {
  const parsed = ConnectionStateSchema.safeParse(raw);
  return parsed.success ? parsed.data : undefined;
}

export async function readConnection(db: ElicitlyDb): Promise<ConnectionState | undefined> {
  return parseConnection((await db.connection.get('current'))?.value);
}

export async function writeConnection(db: ElicitlyDb, state: ConnectionState): Promise<void> {
  await db.connection.put({ key: 'current', value: ConnectionStateSchema.parse(state) });
}

import type { ElicitlyDb } from './database.js';
import { ConnectionStateSchema, DEFAULT_SETTINGS, SettingsSchema, type ConnectionState, type Settings } from './rows.js';

function parseSettings(raw: unknown): Settings {
  const parsed = SettingsSchema.safeParse(raw);
  return parsed.success ? parsed.data : DEFAULT_SETTINGS;
}

export async function readSettings(db: ElicitlyDb): Promise<Settings> {
  return parseSettings((await db.settings.get('current'))?.value);
}

/**
 * Changes only the given fields, read and written in one transaction: the background and a page that write at the same
 * moment each keep their own change. With `only`, nothing is written unless the stored settings still pass it (the
 * background clears a spent pairing code only if the person has not typed a new one meanwhile).
 */
export async function patchSettings(db: ElicitlyDb, patch: Partial<Settings>, only?: (current: Settings) => boolean): Promise<Settings> {
  return db.transaction('rw', db.settings, async () => {
    const current = parseSettings((await db.settings.get('current'))?.value);
    if (only && !only(current)) return current;
    const next = SettingsSchema.parse({ ...current, ...patch });
    await db.settings.put({ key: 'current', value: next });
    return next;
  });
}

export async function readConnection(db: ElicitlyDb): Promise<ConnectionState | undefined> {
  const parsed = ConnectionStateSchema.safeParse((await db.connection.get('current'))?.value);
  return parsed.success ? parsed.data : undefined;
}

export async function writeConnection(db: ElicitlyDb, state: ConnectionState): Promise<void> {
  await db.connection.put({ key: 'current', value: ConnectionStateSchema.parse(state) });
}

import type { ElicitlyDb } from './database.js';
import { ConnectionStateSchema, DEFAULT_SETTINGS, SettingsSchema, type ConnectionState, type Settings } from './rows.js';

export async function readSettings(db: ElicitlyDb): Promise<Settings> {
  const parsed = SettingsSchema.safeParse((await db.settings.get('current'))?.value);
  return parsed.success ? parsed.data : DEFAULT_SETTINGS;
}

export async function writeSettings(db: ElicitlyDb, settings: Settings): Promise<void> {
  await db.settings.put({ key: 'current', value: SettingsSchema.parse(settings) });
}

export async function readConnection(db: ElicitlyDb): Promise<ConnectionState | undefined> {
  const parsed = ConnectionStateSchema.safeParse((await db.connection.get('current'))?.value);
  return parsed.success ? parsed.data : undefined;
}

export async function writeConnection(db: ElicitlyDb, state: ConnectionState): Promise<void> {
  await db.connection.put({ key: 'current', value: ConnectionStateSchema.parse(state) });
}

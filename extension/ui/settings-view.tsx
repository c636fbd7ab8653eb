import type { ElicitlyDb } from '../db/database.js';
import type { ReviewerClient } from '../../kit/messages.js';
import { PairingForm } from './pairing-form.js';
import { PasskeysForm } from '../../kit/ui/passkeys-form.js';
import { readConnection } from './page-reads.js';
import { useLiveQuery } from './use-live-query.js';
import { SettingsForm } from './settings-form.js';

/** Settings: pairing first (the one step without which nothing connects), then the rest. */
export function SettingsView({ db, client }: { db: ElicitlyDb; client: ReviewerClient }) {
  const connected = useLiveQuery(async () => (await readConnection(db))?.state === 'connected', [db]);
  return (
    <>
      <PairingForm db={db} client={client} />
      <SettingsForm db={db} client={client} />
      <PasskeysForm client={client} connected={connected} />
    </>
  );
}

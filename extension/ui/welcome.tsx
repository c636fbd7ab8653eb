import type { ElicitlyDb } from '../db/database.js';
import { readSettings } from '../db/settings-repo.js';
import type { ReviewerClient } from '../../kit/messages.js';
import { PairingForm } from './pairing-form.js';
import { useLiveQuery } from './use-live-query.js';

/** The first-run page (opened on install): the one step that connects this browser to the hub is pairing. */
export function Welcome({ db, client }: { db: ElicitlyDb; client: ReviewerClient }) {
  const settings = useLiveQuery(() => readSettings(db), [db]);
  return (
    <section class="welcome">
      <h2>Pair this browser with elicitly-companion</h2>
      <p>
        This extension talks only to the elicitly-companion hub on this computer, and only once both have proved they share
        a key. Pair it once: run the pairing command below in a terminal on this computer and enter the code it prints.
      </p>
      <PairingForm db={db} client={client} />
      <p class="muted">
        The hub listens on port {settings?.port ?? '…'}. If your agents set <code>ELICITLY_PORT</code>, change it in{' '}
        <a href="#/settings">Settings</a> first.
      </p>
    </section>
  );
}
